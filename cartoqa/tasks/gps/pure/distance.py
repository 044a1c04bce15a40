"""Distance: the great-circle distance between two cities, in km."""

from __future__ import annotations

from cartoqa.records import NumberTruth, Tolerance
from evaluators.gps import score_km

from .._register import register_gps
from .._sampling import Draft, Sampler, region_of
from ._flat import band, ends, flat_distance_error

__all__ = ["KM_PER_MILE", "distance"]

KM_PER_MILE = 1.609344
#: how close an answer must be (GPSBench's)
TOLERANCE = Tolerance(abs=5.0, rel=0.05)  # km
#: the flat distance's relative error's terciles over 3,400 questions at seed 42
DISTANCE_BANDS = (0.0104, 0.048)


def distance(s: Sampler, n: int) -> Draft:
    i, j, km = s.pair(50)
    text = s.prompts.text("gps.distance.question", origin=s.label(i), destination=s.label(j))
    truth = NumberTruth(
        value=round(km, 3),
        unit="km",
        equivalents={"mi": round(km / KM_PER_MILE, 3)},
        tolerance=TOLERANCE,
    )
    err = flat_distance_error(*ends(s, i, j), km)
    return Draft(
        text,
        truth,
        region_of(s, i),
        band(err, *DISTANCE_BANDS),
        {"unit": "km", "km": round(km, 1), "flat_error": round(err, 4)},
    )


register_gps(
    name="distance",
    track="pure",
    description="the great-circle distance between two cities, in km",
    truth_kinds=frozenset({"number"}),
    score=score_km,
    metrics=("accuracy", "1-MAPE"),
    answer_space={"low": 0, "high": 20_015},
    generator=distance,
)
