"""GPSBench's Pure track: nine geometry tasks, ground truth from ``cartoqa.geodesy``, one
module each (with its variants); their wording is ``cartoqa/tasks/prompts/gps.toml``
(``gps.<task>.<key>``).  Importing the package registers the nine default tasks, in the
order of the imports below (GPSBench's); ``cartoqa.tasks.gps`` registers the variants
after every default of both tracks."""

# ruff: noqa: I001  (the order of the imports is the order of the tasks)

from __future__ import annotations

from . import format_conversion
from . import coordinate_transformation
from . import distance
from . import bearing
from . import interpolation
from . import polygon
from . import bounding_box
from . import route_geometry
from . import relative_position_pure

__all__ = [
    "bearing",
    "bounding_box",
    "coordinate_transformation",
    "distance",
    "format_conversion",
    "interpolation",
    "polygon",
    "relative_position_pure",
    "route_geometry",
]
