"""What every GPS task's spec shares, written once: ``register_gps(name=..., ...)`` registers
a ``TaskSpec`` of family "gps" scored with GPSBench's metrics (``gps_metrics``: accuracy,
and 1-MAPE, province and country accuracy where the scores carry them) and broken down by
``GPS_GROUPS``, unless the call gives its own ``metrics`` or ``group_by``."""

from __future__ import annotations

from typing import Any

from evaluators.sample_scores import gps_metrics

from ..spec import TaskSpec, register_task
from ._breakdowns import GPS_GROUPS

__all__ = ["register_gps"]


def register_gps(**fields: Any) -> TaskSpec:
    """Register a GPS task (replacing a spec of the same name, so that a module imported
    again registers the same spec) and return its spec."""
    fields.setdefault("reduce", gps_metrics)
    fields.setdefault("metrics", ("accuracy",))
    fields.setdefault("group_by", GPS_GROUPS)
    return register_task(TaskSpec(family="gps", **fields), replace=True)
