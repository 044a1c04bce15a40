"""``python -m cartoqa``: the ``cartoqa`` command."""

from cartoqa.cli import main

main()
