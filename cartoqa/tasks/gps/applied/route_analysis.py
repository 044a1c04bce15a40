"""Route analysis: whether a named city is on the way between two others (a detour under
10 %)."""

from __future__ import annotations

import numpy as np

from cartoqa.geodesy import EARTH_RADIUS_KM, distance_km, interpolate
from cartoqa.records import BooleanTruth
from evaluators.gps import score_yes_no

from .._register import register_gps
from .._sampling import Draft, Sampler

__all__ = ["NEAR_RULE", "ROUTE_RULE_GAP", "route_analysis"]

#: route analysis: a detour within this of 10 % is too close to the rule to ask
NEAR_RULE = 0.005
#: route analysis's difficulty: the detour's distance from the 10 % rule under the first is
#: "hard", under the second "medium", else "easy" (about 21/46/33 % at 3,400, seed 42)
ROUTE_RULE_GAP = (0.095, 0.3)


def route_analysis(s: Sampler, n: int) -> Draft:
    """Is a third city on the way between two others, named only (knowing where they are is
    the task): "on the way" when going through it adds less than 10 % to the great-circle
    distance.  Legs of 200 km or more; about half the waypoints are drawn near the route."""
    c = s.c
    for _ in range(1000):
        a, b, direct = s.pair(400)
        if n % 2 == 0:  # a waypoint near the great circle: about half the samples are on route
            f = float(s.rng.uniform(0.2, 0.8))
            mlat, mlon = interpolate(c.lat[a], c.lon[a], c.lat[b], c.lon[b], f)
            reach = 0.08 * direct
            # only cities within reach's latitude span can be within reach (a great circle
            # is never shorter than its change of latitude): the same cities, found faster
            band = np.flatnonzero(
                np.abs(c.lat - mlat) <= np.degrees(reach / EARTH_RADIUS_KM) + 1e-6
            )
            d = np.asarray(distance_km(mlat, mlon, c.lat[band], c.lon[band]))
            near = band[d < reach]
            if near.size == 0:
                continue
            w = int(near[s.rng.integers(near.size)])
        else:
            w = s.city()
        legs = [
            float(distance_km(c.lat[x], c.lon[x], c.lat[y], c.lon[y])) for x, y in ((a, w), (w, b))
        ]
        if min(legs) < 200:
            continue
        names = s.named(a, b, w)
        if not names:
            continue
        detour = (sum(legs) - direct) / direct
        if abs(detour - 0.1) < NEAR_RULE:
            s.reject("near_threshold")  # within half a point of the 10 % rule
            continue
        text = s.prompts.text(
            "gps.route_analysis.question", start=names[0], end=names[1], waypoint=names[2]
        )
        # how far the detour is from the 10 % rule: the nearer, the finer the reckoning a
        # reader needs (thresholds ``ROUTE_RULE_GAP``)
        gap = abs(detour - 0.1)
        difficulty = (
            "hard" if gap < ROUTE_RULE_GAP[0] else "medium" if gap < ROUTE_RULE_GAP[1] else "easy"
        )
        return Draft(
            text,
            BooleanTruth(value=detour < 0.1),
            str(c.subregion[a]),
            difficulty,
            {"detour": round(detour, 4)},
        )
    raise RuntimeError("no route-analysis triple found")


register_gps(
    name="route_analysis",
    track="applied",
    description="whether a named city is on the way between two others (detour < 10 %)",
    truth_kinds=frozenset({"boolean"}),
    score=score_yes_no,
    generator=route_analysis,
)
