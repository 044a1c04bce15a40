"""The flat (equirectangular) reading of two coordinates, a reader's shortcut: how far it
lands from the truth is the difficulty of the distance, bearing and interpolation
questions."""

from __future__ import annotations

import math

from cartoqa.geodesy import EARTH_RADIUS_KM

from .._directions import short_dlon
from .._sampling import Sampler

__all__ = ["band", "ends", "flat_bearing_error", "flat_distance_error", "linear_point_error"]

# Difficulty of the two-city questions: not the distance (over 90 % of pairs drawn by the
# continent quotas are beyond 2,000 km, so a distance band calls nearly all "hard"), but how
# far a reader's shortcut lands from the truth: the flat (equirectangular) reading of the
# coordinates, dlon scaled by the cosine of the mean latitude, which is right for near,
# low-latitude pairs and wrong for long or polar ones.  Thresholds: terciles of each
# measure over 3,400 questions at seed 42 (tests/cartoqa/test_gps_paper_forms_pure.py).


def _flat(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, float]:
    """The flat reading's east and north offsets, in degrees of arc."""
    return short_dlon(lon1, lon2) * math.cos(math.radians((lat1 + lat2) / 2)), lat2 - lat1


def flat_distance_error(lat1: float, lon1: float, lat2: float, lon2: float, km: float) -> float:
    """|flat distance - great-circle distance| / great-circle distance."""
    x, y = _flat(lat1, lon1, lat2, lon2)
    flat_km = math.radians(math.hypot(x, y)) * EARTH_RADIUS_KM
    return abs(flat_km - km) / km


def flat_bearing_error(lat1: float, lon1: float, lat2: float, lon2: float, b: float) -> float:
    """Degrees between the flat reading's bearing and the initial bearing ``b``."""
    x, y = _flat(lat1, lon1, lat2, lon2)
    d = abs(math.degrees(math.atan2(x, y)) % 360.0 - b) % 360.0
    return min(d, 360.0 - d)


def linear_point_error(
    lat1: float, lon1: float, lat2: float, lon2: float, f: float, lat: float, lon: float
) -> float:
    """Degrees (the larger of latitude and longitude) between the point ``f`` of the way
    along the straight line in latitude and longitude and the great-circle point."""
    return max(
        abs(lat1 + f * (lat2 - lat1) - lat),
        abs(short_dlon(lon, lon1 + f * short_dlon(lon1, lon2))),
    )


def band(value: float, medium: float, hard: float) -> str:
    """easy below ``medium``, medium below ``hard``, else hard."""
    return "easy" if value < medium else "medium" if value < hard else "hard"


def ends(s: Sampler, i: int, j: int) -> tuple[float, float, float, float]:
    c = s.c
    return float(c.lat[i]), float(c.lon[i]), float(c.lat[j]), float(c.lon[j])
