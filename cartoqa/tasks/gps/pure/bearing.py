"""Bearing: the initial bearing from one city to another."""

from __future__ import annotations

from cartoqa.geodesy import initial_bearing_deg
from cartoqa.records import NumberTruth, Tolerance
from evaluators.gps import score_bearing

from .._register import register_gps
from .._sampling import Draft, Sampler, region_of
from ._flat import band, ends, flat_bearing_error

__all__ = ["bearing"]

#: how close an answer must be (GPSBench's)
TOLERANCE = Tolerance(abs=5.0, wrap=360.0)
#: the flat bearing's error's terciles over 3,400 questions at seed 42
BEARING_BANDS_DEG = (6.0, 23.7)


def bearing(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(100)
    c = s.c
    b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
    text = s.prompts.text("gps.bearing.question", origin=s.label(i), destination=s.label(j))
    truth = NumberTruth(value=round(b, 3), unit="deg", tolerance=TOLERANCE)
    err = flat_bearing_error(*ends(s, i, j), b)
    return Draft(
        text,
        truth,
        region_of(s, i),
        band(err, *BEARING_BANDS_DEG),
        {"km": round(km, 1), "flat_error_deg": round(err, 3)},
    )


register_gps(
    name="bearing",
    track="pure",
    description="the initial bearing from one city to another",
    truth_kinds=frozenset({"number"}),
    score=score_bearing,
    answer_space={"low": 0, "high": 360},
    generator=bearing,
)
