"""cartoqa's own tasks: importing this module registers them all, in the order of the
imports below (the order ``registered_tasks`` lists them in, so the order a demo writes its
samples in; hence not sorted).

It is the one entry point cartoqa declares in the group ``cartoqa.tasks`` (its
``pyproject.toml``); a plug-in distribution declares its own modules there the same way.
"""

# ruff: noqa: I001  (the order of the imports is the order of the tasks)

from __future__ import annotations

from . import navigation  # noqa: F401  (SRN, RLE, MML)
from . import gps  # noqa: F401  (GPSBench's tasks and cartoqa's variants)
from . import poi  # noqa: F401  (STMF's three requests, MTMF)
from . import mfs  # noqa: F401  (map-feature semantics)
