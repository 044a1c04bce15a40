"""Task generators: sample questions from real data, with ground truth beyond doubt.

``cartoqa.tasks.navigation``: SRN, RLE and MML from an extract's road graph;
``cartoqa.tasks.build.build_dataset``: sample, render and write a dataset
(``cartoqa build``); ``cartoqa.tasks.gps``: the text-only GPS tasks
(``cartoqa gps generate``).  The map names load the rendering stack on first
use, so the GPS generators do not pay for it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NAVIGATION_TASKS", "BuildReport", "build_dataset"]


def __getattr__(name: str) -> Any:
    if name in ("BuildReport", "build_dataset"):
        from . import build

        return getattr(build, name)
    if name == "NAVIGATION_TASKS":
        from .navigation import NAVIGATION_TASKS

        return NAVIGATION_TASKS
    raise AttributeError(f"module 'cartoqa.tasks' has no attribute {name!r}")
