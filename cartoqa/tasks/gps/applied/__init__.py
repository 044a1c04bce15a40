"""GPSBench's Applied track (geography) and its missing-data probe, from GeoNames cities, one
module per task (with its variants).  Importing the package registers the nine default
tasks, in the order of the imports below (GPSBench's, the probe last);
``cartoqa.tasks.gps`` registers the variants after every default of both tracks."""

# ruff: noqa: I001  (the order of the imports is the order of the tasks)

from __future__ import annotations

from . import place_association
from . import name_disambiguation
from . import relative_position_applied
from . import proximity
from . import route_analysis
from . import spatial_patterns
from . import boundary_analysis
from . import terrain_classification
from . import missing_data

__all__ = [
    "boundary_analysis",
    "missing_data",
    "name_disambiguation",
    "place_association",
    "proximity",
    "relative_position_applied",
    "route_analysis",
    "spatial_patterns",
    "terrain_classification",
]
