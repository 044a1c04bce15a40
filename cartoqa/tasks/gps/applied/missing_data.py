"""Missing data, GPSBench's probe: a city's missing latitude or longitude, from its name
and the other."""

from __future__ import annotations

from cartoqa.records import NumberTruth, Tolerance
from evaluators.gps import by_truth, score_degree, score_position

from .._register import register_gps
from .._sampling import Draft, Sampler

__all__ = ["MISSING_DEG", "MISSING_POPULATION", "missing_data"]

#: the missing coordinate must be within 0.1 degrees (GPSBench's tolerance)
MISSING_DEG = Tolerance(abs=0.1)
#: the missing-data probe's difficulty: a city of the second's people or more is "easy", of
#: the first's "medium", else "hard" (place association's bands left 82 % "hard")
MISSING_POPULATION = (25_000, 60_000)


def missing_data(s: Sampler, n: int) -> Draft:
    """A city's missing latitude or longitude; split by city (a train sample of the city
    gives the coordinate a test question asks)."""
    split = s.split_of(n)
    pools = s.split_pools(split)
    while True:
        i = s.city(pools=pools)
        names = s.named(i)
        if names:
            break
    c = s.c
    meta: dict[str, object]
    if n % 2 == 0:
        text = s.prompts.text("gps.missing_data.latitude_given", city=names[0], lat=c.lat[i])
        truth = NumberTruth(value=round(float(c.lon[i]), 5), unit="deg", tolerance=MISSING_DEG)
        meta = {"given": "latitude"}
    else:
        text = s.prompts.text("gps.missing_data.longitude_given", city=names[0], lon=c.lon[i])
        truth = NumberTruth(value=round(float(c.lat[i]), 5), unit="deg", tolerance=MISSING_DEG)
        meta = {"given": "longitude"}
    pop = int(c.population[i])
    # the smaller the city, the less a reader knows where it is (``MISSING_POPULATION``)
    lo, hi = MISSING_POPULATION
    difficulty = "easy" if pop >= hi else "medium" if pop >= lo else "hard"
    meta["population"] = pop
    return Draft(text, truth, str(c.subregion[i]), difficulty, meta, split=split)


register_gps(
    name="missing_data",
    track="probe",
    description="a city's missing latitude or longitude, from its name and the other",
    truth_kinds=frozenset({"coordinate", "number"}),
    score=by_truth(number=score_degree, coordinate=score_position),
    answer_space={"low": -180, "high": 180},
    generator=missing_data,
)
