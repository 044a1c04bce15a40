"""Route geometry: which of four index lists Ramer-Douglas-Peucker keeps of a path
(GPSBench's form), and the variant ``route_geometry_indices``: the indices written out."""

from __future__ import annotations

import json

import numpy as np

from cartoqa.geodesy import destination, rdp_thresholds_km
from cartoqa.records import ChoiceTruth, IndicesTruth
from evaluators.gps import score_choice, score_indices

from ...spec import TaskSpec
from ...templates import PromptSet
from .._register import register_gps
from .._sampling import Draft, Sampler, region_of

__all__ = ["register_indices", "route_geometry", "route_geometry_indices"]


def _path(s: Sampler, n: int) -> tuple[list[float], list[float], float, list[int], str, str]:
    """A random path of 8-15 points 3-30 km apart, an RDP tolerance, the indices RDP keeps,
    the difficulty and the region of its first point."""
    k = 8 + n % 8
    start = s.city()
    lat, lon = float(s.c.lat[start]), float(s.c.lon[start])
    heading = float(s.rng.uniform(0, 360))
    lats, lons = [lat], [lon]
    for _ in range(k - 1):
        heading += float(s.rng.normal(0, HEADING_SD_DEG))
        lat, lon = (
            float(v) for v in destination(lat, lon, heading % 360, float(s.rng.uniform(3, 30)))
        )
        lats.append(round(lat, 5))
        lons.append(round(lon, 5))
    lats[0], lons[0] = round(lats[0], 5), round(lons[0], 5)
    eps = float(s.rng.choice(RDP_TOLERANCES_KM))
    thresholds = rdp_thresholds_km(lats, lons)
    kept = [int(v) for v in np.flatnonzero(thresholds > eps)]  # what simplify_rdp keeps
    inner = thresholds[1:-1]
    if inner.size and float(np.abs(inner - eps).min()) < RDP_CLEARANCE_KM:
        s.reject("near_tolerance")  # a point kept or dropped by metres: redraw the path
        return _path(s, n)
    difficulty = "easy" if k <= 10 else "medium" if k <= 12 else "hard"
    return lats, lons, eps, kept, difficulty, region_of(s, start)


RDP_TOLERANCES_KM = (0.5, 1.0, 1.5, 2.0)
#: how much a path turns at each point (normal, degrees): straight enough that RDP drops a
#: fair share of the points, so the right list can hide among its options
HEADING_SD_DEG = 15.0
#: every point's RDP threshold is at least this far from the tolerance asked
RDP_CLEARANCE_KM = 0.02


def _path_text(prompts: PromptSet, lats: list[float], lons: list[float], eps: float) -> str:
    """The path and the RDP rule (``gps.route_geometry.path``), which both route-geometry
    questions open with."""
    pts = "\n".join(
        f"{j}: {a:.5f}, {b:.5f}" for j, (a, b) in enumerate(zip(lats, lons, strict=True))
    )
    return prompts.text("gps.route_geometry.path", tolerance=eps, points=pts)


def _wrong_lists(s: Sampler, n_points: int, kept: list[int]) -> list[str] | None:
    """Three index lists RDP does not give, arranged so that nothing but RDP tells the right
    one: the four options are a hidden list with two interior points added (one each) and
    two dropped (one each), and the right list takes one of those four roles at random.  All
    four are one edit from the hidden list and two from each other, two are one point longer
    and two one point shorter, so neither "the option nearest the rest" nor "the longest"
    (RDP tends to keep most points) beats chance.  None when the path keeps or drops fewer
    than three interior points, too few to arrange that either way."""
    right = set(kept)
    inner = list(range(1, n_points - 1))
    kept_in = [j for j in inner if j in right]
    left_out = [j for j in inner if j not in right]
    if len(kept_in) < 3 or len(left_out) < 3:  # so that every role below is possible
        return None

    def two(pool: list[int], first: int | None = None) -> list[int]:
        rest = [j for j in pool if j != first]
        picked = [rest[int(k)] for k in s.rng.permutation(len(rest))[: 2 - (first is not None)]]
        return [first, *picked] if first is not None else picked

    if s.rng.random() < 0.5:  # right = hidden + a: one of the two "added" lists
        a = kept_in[int(s.rng.integers(len(kept_in)))]
        hidden = right - {a}
        adds = two([j for j in inner if j not in hidden], first=a)
        drops = two([j for j in inner if j in hidden])
    else:  # right = hidden - x: one of the two "dropped" lists
        x = left_out[int(s.rng.integers(len(left_out)))]
        hidden = right | {x}
        adds = two([j for j in inner if j not in hidden])
        drops = two([j for j in inner if j in hidden], first=x)
    options = [hidden | {adds[0]}, hidden | {adds[1]}, hidden - {drops[0]}, hidden - {drops[1]}]
    wrong = [o for o in options if o != right]
    assert len(wrong) == 3
    return [json.dumps(sorted(o)) for o in wrong]


def route_geometry(s: Sampler, n: int) -> Draft:
    """GPSBench's form: which of four index lists RDP keeps (multiple choice; the wrong lists
    from ``_wrong_lists``)."""
    while True:
        lats, lons, eps, kept, difficulty, region = _path(s, n)
        wrong = _wrong_lists(s, len(lats), kept)
        if wrong is not None:
            break
        s.reject("too_few_to_arrange")  # RDP keeps (or drops) nearly every point
    opts, letter = s.options(json.dumps(kept), wrong)
    text = s.prompts.text(
        "gps.route_geometry.question",
        path=_path_text(s.prompts, lats, lons, eps),
        options=s.listed(opts),
    )
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        region,
        difficulty,
        {"epsilon_km": eps, "points": len(lats)},
    )


def route_geometry_indices(s: Sampler, n: int) -> Draft:
    """Variant: the kept indices written out, with no options to choose from."""
    lats, lons, eps, kept, difficulty, region = _path(s, n)
    text = s.prompts.text(
        "gps.route_geometry_indices.question", path=_path_text(s.prompts, lats, lons, eps)
    )
    return Draft(
        text,
        IndicesTruth(indices=kept),
        region,
        difficulty,
        {"epsilon_km": eps, "points": len(lats)},
    )


register_gps(
    name="route_geometry",
    track="pure",
    description="which of four index lists Ramer-Douglas-Peucker keeps",
    truth_kinds=frozenset({"choice"}),
    score=score_choice,
    generator=route_geometry,
)


def register_indices() -> TaskSpec:
    """Register the variant ``route_geometry_indices`` (the package calls it after
    every default task)."""
    return register_gps(
        name="route_geometry_indices",
        track="variant",
        description="variant: the indices Ramer-Douglas-Peucker keeps, written out",
        truth_kinds=frozenset({"indices"}),
        score=score_indices,
        generator=route_geometry_indices,
    )
