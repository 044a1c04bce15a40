"""Typed records: samples, ground truths, run records, and the task registry."""

from .runs import RUN_SCHEMA_VERSION, RunRecord
from .samples import (
    OSM_ATTRIBUTION,
    SAMPLE_SCHEMA_VERSION,
    Metadata,
    Prompt,
    Provenance,
    Sample,
    Split,
)
from .tasks import TASK_TRUTH_KINDS, register_task, truth_kinds_for
from .truths import (
    BooleanTruth,
    ChoiceTruth,
    CoordinateTruth,
    FeatureCount,
    FeatureTableTruth,
    GroundTruth,
    GroupingTruth,
    IndicesTruth,
    NamesTruth,
    NumberTruth,
    RoadPairTruth,
    RouteTruth,
    TextTruth,
    ValuesTruth,
)

__all__ = [
    "OSM_ATTRIBUTION",
    "RUN_SCHEMA_VERSION",
    "SAMPLE_SCHEMA_VERSION",
    "TASK_TRUTH_KINDS",
    "BooleanTruth",
    "ChoiceTruth",
    "CoordinateTruth",
    "FeatureCount",
    "FeatureTableTruth",
    "GroundTruth",
    "GroupingTruth",
    "IndicesTruth",
    "Metadata",
    "NamesTruth",
    "NumberTruth",
    "Prompt",
    "Provenance",
    "RoadPairTruth",
    "RouteTruth",
    "RunRecord",
    "Sample",
    "Split",
    "TextTruth",
    "ValuesTruth",
    "register_task",
    "truth_kinds_for",
]
