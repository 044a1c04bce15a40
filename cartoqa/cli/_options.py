"""Options that several commands take, written once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: ``--prompts FILE`` (``cartoqa build``, ``cartoqa gps generate``)
PromptsFile = Annotated[
    Path | None,
    typer.Option(
        "--prompts",
        help="TOML file of prompt templates to word the questions with (any keys of "
        "cartoqa/tasks/prompts/*.toml); its hash is recorded in the manifest.",
    ),
]
