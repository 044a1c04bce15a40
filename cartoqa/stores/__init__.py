"""Stores on disk: datasets (samples + images + manifest) and runs (responses, resumable)."""

from .dataset import (
    MANIFEST_SCHEMA_VERSION,
    Dataset,
    DatasetWriter,
    Manifest,
    collect_versions,
    load_dataset,
)
from .runs import RunStore, run_id

__all__ = [
    "MANIFEST_SCHEMA_VERSION",
    "Dataset",
    "DatasetWriter",
    "Manifest",
    "RunStore",
    "collect_versions",
    "load_dataset",
    "run_id",
]
