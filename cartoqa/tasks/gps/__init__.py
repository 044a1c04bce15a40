"""The text-only GPS track (after GPSBench): seventeen tasks and the missing-data probe.

One module per task, with its variants, in ``pure/`` and ``applied/``: each holds its
generator(s) and registers its own ``TaskSpec`` (``cartoqa.tasks.spec``).  The order of
registration is the order datasets write their tasks in, so it is fixed here: importing
``pure`` and then ``applied`` registers GPSBench's eighteen default tasks (the Pure nine,
then the Applied nine, the probe last); then each variant module's ``register_*``
function registers a variant, in the order below.  ``generate_gps`` writes a set of the
tasks the registry holds (``generate.gps_tasks``, ``generate.gps_variants``); ground
truth comes from ``cartoqa.geodesy`` and GeoNames.  ``Sampler`` (cities drawn by the
quotas, labelled, split) and ``Draft`` (one question) are what a generator, built in or a
plug-in's, takes and returns.
"""

# ruff: noqa: I001  (the order of the imports is the order of the tasks)

from __future__ import annotations

from typing import Any

from . import pure  # GPSBench's Pure track
from . import applied  # its Applied track and the missing-data probe
from ._sampling import Draft, Sampler
from .generate import GPS_CREDITS, GpsReport, assign_splits, generate_gps, gps_tasks, gps_variants

# cartoqa's variants, each its own task (track "variant"), after every default
pure.polygon.register_perimeter()
pure.bounding_box.register_full()
pure.route_geometry.register_indices()
pure.relative_position_pure.register_8()
pure.format_conversion.register_lenient()
pure.relative_position_pure.register_latlon()
applied.place_association.register_levels()
applied.name_disambiguation.register_countries()
applied.proximity.register_names()
applied.spatial_patterns.register_hinted()
applied.terrain_classification.register_4()

__all__ = [
    "GPS_CREDITS",
    "Draft",
    "GpsReport",
    "Sampler",
    "assign_splits",
    "generate_gps",
    "gps_tasks",
    "gps_variants",
]


def __getattr__(name: str) -> Any:
    """``GPS_TASKS`` and ``GPS_VARIANTS``: task name -> generator, from the registry, on
    first use (``generate.gps_tasks``, ``generate.gps_variants``)."""
    if name in ("GPS_TASKS", "GPS_VARIANTS"):
        from . import generate

        return getattr(generate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
