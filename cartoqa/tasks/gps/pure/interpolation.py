"""Interpolation: the point a fraction of the way along the great circle between two
cities."""

from __future__ import annotations

from cartoqa.geodesy import interpolate
from cartoqa.records import CoordinateTruth, Tolerance
from evaluators.gps import score_position

from .._register import register_gps
from .._sampling import Draft, Sampler, region_of
from ._flat import band, ends, linear_point_error

__all__ = ["interpolation"]

#: how close an answer must be, each of lat and lon (GPSBench's)
TOLERANCE = Tolerance(abs=0.01)
#: the straight-line point's error's terciles over 3,400 questions at seed 42
INTERPOLATION_BANDS_DEG = (1.5, 7.8)


def interpolation(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(500)
    c = s.c
    f = (0.25, 0.5, 0.75)[n % 3]
    lat, lon = interpolate(c.lat[i], c.lon[i], c.lat[j], c.lon[j], f)
    text = s.prompts.text(
        "gps.interpolation.question", origin=s.label(i), destination=s.label(j), fraction=f
    )
    truth = CoordinateTruth(lat=round(float(lat), 6), lon=round(float(lon), 6), tolerance=TOLERANCE)
    err = linear_point_error(*ends(s, i, j), f, float(lat), float(lon))
    return Draft(
        text,
        truth,
        region_of(s, i),
        band(err, *INTERPOLATION_BANDS_DEG),
        {"fraction": f, "km": round(km, 1), "linear_error_deg": round(err, 3)},
    )


register_gps(
    name="interpolation",
    track="pure",
    description="the point a fraction of the way along a great circle",
    truth_kinds=frozenset({"coordinate"}),
    score=score_position,
    generator=interpolation,
)
