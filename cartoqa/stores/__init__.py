"""Stores on disk: datasets (samples + images + manifest) and runs (responses, resumable)."""

from ._files import ensure_writable_folder
from ._locks import LockBusy
from .dataset import (
    MANIFEST_SCHEMA_VERSION,
    Dataset,
    DatasetWriter,
    Manifest,
    collect_versions,
    load_dataset,
)
from .runs import RunInfo, RunStore, find_runs, run_id
from .scores import read_scores, scores_path, scoring_key, write_scores

__all__ = [
    "MANIFEST_SCHEMA_VERSION",
    "Dataset",
    "DatasetWriter",
    "LockBusy",
    "Manifest",
    "RunInfo",
    "RunStore",
    "collect_versions",
    "ensure_writable_folder",
    "find_runs",
    "load_dataset",
    "read_scores",
    "run_id",
    "scores_path",
    "scoring_key",
    "write_scores",
]
