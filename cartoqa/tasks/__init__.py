"""Task generators: sample questions from real data, with ground truth beyond doubt.

``cartoqa.tasks.navigation``: SRN, RLE and MML from an extract's road graph;
``cartoqa.tasks.build.build_dataset``: sample, render and write a dataset
(``cartoqa build``); ``cartoqa.tasks.gps``: the text-only GPS tasks
(``cartoqa gps generate``).
"""

from .build import BuildReport, build_dataset
from .navigation import NAVIGATION_TASKS

__all__ = ["NAVIGATION_TASKS", "BuildReport", "build_dataset"]
