"""Polygon: the area of a polygon of 3-6 cities on the 6371 km sphere (GPSBench's form), and
the variant ``polygon_perimeter``, its area and perimeter."""

from __future__ import annotations

import numpy as np

from cartoqa.geodesy import distance_km, polygon_area_km2, polygon_is_simple, polygon_perimeter_km
from cartoqa.records import NumberTruth, Tolerance, ValuesTruth
from evaluators.gps import score_area_km2, score_values_closeness

from ...spec import TaskSpec
from .._register import register_gps
from .._sampling import Draft, Sampler, region_of

__all__ = ["polygon", "polygon_perimeter", "register_perimeter"]

#: how close an answer must be (GPSBench's)
TOLERANCE = Tolerance(rel=0.05)


def _regional(s: Sampler, k: int) -> list[int]:
    """GPSBench's regional polygon: an anchor, cities 50-2,000 km from it, >= 50 km apart."""
    c = s.c
    for _ in range(1000):
        cont = s.continent()
        pool = s.by_continent[cont]
        if pool.size < 2 * k:
            continue
        a = s.city(cont)
        d = s.distances(a, pool)
        near = pool[(d >= 50) & (d <= 2000)]
        if near.size < k - 1:
            continue
        chosen = [a]
        for idx in s.rng.permutation(near):
            if all(distance_km(c.lat[idx], c.lon[idx], c.lat[j], c.lon[j]) >= 50 for j in chosen):
                chosen.append(int(idx))
                if len(chosen) == k:
                    break
        if len(chosen) == k:
            # vertices sorted by angle around the centroid
            la, lo = c.lat[chosen], c.lon[chosen]
            ang = np.arctan2(la - la.mean(), lo - lo.mean())
            return [chosen[int(t)] for t in np.argsort(ang)]
    raise RuntimeError("no regional polygon found")


#: the least isoperimetric quotient (4πA/P²; 1 for a circle, 0.6 for an equilateral
#: triangle) of a polygon question: a thinner sliver's area hangs on tiny angles
MIN_ROUNDNESS = 0.05


def _polygon_prompt(s: Sampler, n: int) -> tuple[list[int], str, str]:
    """A regional polygon whose great-circle edges do not cross (its vertices are sorted by
    angle on the plane of latitude and longitude, which does not promise that) and that is
    no sliver; others are drawn again (``self_intersecting``, ``sliver``)."""
    k = 3 + n % 4
    c = s.c
    while True:
        idx = _regional(s, k)
        if not polygon_is_simple(c.lat[idx], c.lon[idx]):
            s.reject("self_intersecting")
            continue
        area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
        perimeter = float(polygon_perimeter_km(c.lat[idx], c.lon[idx]))
        if 4 * np.pi * area / perimeter**2 < MIN_ROUNDNESS:
            s.reject("sliver")
            continue
        break
    pts = "; ".join(s.label(i) for i in idx)
    difficulty = ("easy", "easy", "medium", "hard")[k - 3]
    return idx, s.prompts.text("gps.polygon.vertices", points=pts), difficulty


def polygon(s: Sampler, n: int) -> Draft:
    """GPSBench's form: the area of a 3-6 vertex regional polygon, within 5 %."""
    idx, given, difficulty = _polygon_prompt(s, n)
    c = s.c
    area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
    text = s.prompts.text("gps.polygon.question", vertices=given)
    truth = NumberTruth(value=round(area, 2), unit="km2", tolerance=TOLERANCE)
    return Draft(text, truth, region_of(s, idx[0]), difficulty, {"vertices": len(idx)})


def polygon_perimeter(s: Sampler, n: int) -> Draft:
    """Variant: area and perimeter together, each within 5 %."""
    idx, given, difficulty = _polygon_prompt(s, n)
    c = s.c
    area = float(polygon_area_km2(c.lat[idx], c.lon[idx]))
    perim = float(polygon_perimeter_km(c.lat[idx], c.lon[idx]))
    text = s.prompts.text("gps.polygon_perimeter.question", vertices=given)
    truth = ValuesTruth(
        values={"area_km2": round(area, 2), "perimeter_km": round(perim, 3)},
        tolerances={"area_km2": round(0.05 * area, 3), "perimeter_km": round(0.05 * perim, 3)},
        units={"area_km2": "km2", "perimeter_km": "km"},
    )
    return Draft(text, truth, region_of(s, idx[0]), difficulty, {"vertices": len(idx)})


register_gps(
    name="polygon",
    track="pure",
    description="the area of a polygon of 3-6 cities on the 6371 km sphere",
    truth_kinds=frozenset({"number"}),
    score=score_area_km2,
    metrics=("accuracy", "1-MAPE"),
    generator=polygon,
)


def register_perimeter() -> TaskSpec:
    """Register the variant ``polygon_perimeter`` (the package calls it after every
    default task)."""
    return register_gps(
        name="polygon_perimeter",
        track="variant",
        description="variant: a polygon's area and perimeter",
        truth_kinds=frozenset({"values"}),
        score=score_values_closeness,
        metrics=("accuracy", "1-MAPE"),
        generator=polygon_perimeter,
    )
