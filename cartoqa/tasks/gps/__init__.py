"""The text-only GPS track (after GPSBench): seventeen tasks and the missing-data probe.

``generate_gps`` writes the set; ``pure`` and ``applied`` hold one generator
per task; ground truth comes from ``cartoqa.geodesy`` and GeoNames.
"""

from . import _specs  # noqa: F401  (registers the tasks)
from .generate import (
    GPS_CREDITS,
    GPS_TASKS,
    GPS_VARIANTS,
    SYSTEM_PROMPT,
    GpsReport,
    assign_splits,
    generate_gps,
)

__all__ = [
    "GPS_CREDITS",
    "GPS_TASKS",
    "GPS_VARIANTS",
    "SYSTEM_PROMPT",
    "GpsReport",
    "assign_splits",
    "generate_gps",
]
