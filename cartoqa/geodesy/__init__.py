"""The geodesy core: great-circle geometry, projections and coordinate text.

Pure numpy. Degrees in, latitude first, units in names; scalars give Python
floats, arrays give arrays of the broadcast shape.  Bad input (latitudes
outside [-90, 90], NaN, shapes that do not match) raises ``ValueError``
naming the argument and the value.

>>> round(distance_km(48.8566, 2.3522, 51.5074, -0.1278), 1)
343.6
"""

from ._dms import parse_coordinate, to_dms
from ._projections import (
    MAX_MERCATOR_LAT_DEG,
    UTMCoordinate,
    from_utm,
    from_web_mercator,
    to_utm,
    to_web_mercator,
    utm_zone,
)
from ._shapes import (
    BoundingBox,
    bounding_box,
    path_length_m,
    polygon_area_km2,
    polygon_is_simple,
    polygon_perimeter_km,
    rdp_thresholds_km,
    simplify_rdp,
)
from ._sphere import (
    EARTH_RADIUS_KM,
    compass_direction,
    cross_track_km,
    destination,
    distance_km,
    initial_bearing_deg,
    interpolate,
)
from ._turns import TURN_ACTIONS, turn_action

__all__ = [
    "EARTH_RADIUS_KM",
    "MAX_MERCATOR_LAT_DEG",
    "TURN_ACTIONS",
    "BoundingBox",
    "UTMCoordinate",
    "bounding_box",
    "compass_direction",
    "cross_track_km",
    "destination",
    "distance_km",
    "from_utm",
    "from_web_mercator",
    "initial_bearing_deg",
    "interpolate",
    "parse_coordinate",
    "path_length_m",
    "polygon_area_km2",
    "polygon_is_simple",
    "polygon_perimeter_km",
    "rdp_thresholds_km",
    "simplify_rdp",
    "to_dms",
    "to_utm",
    "to_web_mercator",
    "turn_action",
    "utm_zone",
]
