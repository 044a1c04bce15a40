"""Bounding box: the minimum and maximum latitude and longitude of 3-8 cities (GPSBench's
form), and the variant ``bounding_box_full``: the bounds, centre, centroid and diagonal."""

from __future__ import annotations

from cartoqa.geodesy import bounding_box
from cartoqa.records import ValuesTruth
from evaluators.gps import score_box, score_values

from ...spec import TaskSpec
from .._register import register_gps
from .._sampling import Draft, Sampler, region_of

__all__ = [
    "BBOX_BOUNDS",
    "BBOX_TOLERANCES",
    "bounding_box_full",
    "bounding_box_task",
    "register_full",
]

BBOX_TOLERANCES = {
    "min_lat": 0.01,
    "max_lat": 0.01,
    "min_lon": 0.01,
    "max_lon": 0.01,
    "center_lat": 0.01,
    "center_lon": 0.01,
    "centroid_lat": 0.01,
    "centroid_lon": 0.01,
    "diagonal_km": 10.0,
}

#: GPSBench's bounding box: the four bounds
BBOX_BOUNDS = ("min_lat", "max_lat", "min_lon", "max_lon")


def _bbox(s: Sampler, n: int, keys: tuple[str, ...], prompt: str) -> Draft:
    """A bounding-box question on 3-8 cities asking for ``keys``, worded by the template
    ``prompt``."""
    k = 3 + n % 6
    idx = s.spread(k, 100)
    c = s.c
    box = bounding_box(c.lat[idx], c.lon[idx])._asdict()
    pts = "; ".join(s.label(i) for i in idx)
    listed = ", ".join(f'"{k_}": <number>' for k_ in keys)
    text = s.prompts.text(prompt, points=pts, keys=listed)
    truth = ValuesTruth(
        values={k_: round(float(box[k_]), 6) for k_ in keys},
        tolerances={k_: BBOX_TOLERANCES[k_] for k_ in keys},
        units={"diagonal_km": "km"} if "diagonal_km" in keys else {},
    )
    difficulty = "easy" if k <= 4 else "medium" if k <= 6 else "hard"
    return Draft(text, truth, region_of(s, idx[0]), difficulty, {"points": k})


def bounding_box_task(s: Sampler, n: int) -> Draft:
    """GPSBench's form: the minimum and maximum latitude and longitude, each within 0.01°."""
    return _bbox(s, n, BBOX_BOUNDS, "gps.bounding_box.question")


def bounding_box_full(s: Sampler, n: int) -> Draft:
    """Variant: the bounds, the centre of the bounds, the centroid and the diagonal."""
    return _bbox(s, n, tuple(BBOX_TOLERANCES), "gps.bounding_box_full.question")


register_gps(
    name="bounding_box",
    track="pure",
    description="the minimum and maximum latitude and longitude of 3-8 cities",
    truth_kinds=frozenset({"values"}),
    score=score_box,
    generator=bounding_box_task,
)


def register_full() -> TaskSpec:
    """Register the variant ``bounding_box_full`` (the package calls it after every
    default task)."""
    return register_gps(
        name="bounding_box_full",
        track="variant",
        description="variant: the bounds, centre, centroid and diagonal of 3-8 cities",
        truth_kinds=frozenset({"values"}),
        score=score_values,
        generator=bounding_box_full,
    )
