"""Relative position (applied): north, east, south or west between two cities named only."""

from __future__ import annotations

from cartoqa.geodesy import initial_bearing_deg
from evaluators.gps import score_choice

from .._directions import direction_question, edge_margin
from .._register import register_gps
from .._sampling import Draft, Sampler

__all__ = ["BANDS_KM", "relative_position_applied"]

BANDS_KM = ((200, 500), (500, 1000), (1000, 2000), (2000, 3000))


#: applied relative position's distance bands by difficulty: the nearer, the harder
BAND_DIFFICULTY = {(200, 500): "hard", (500, 1000): "medium"}


#: applied relative position: the bearing is at least this far from a quarter's edge
MIN_NAMED_MARGIN_DEG = 5.0


def relative_position_applied(s: Sampler, n: int) -> Draft:
    """Two same-continent cities by name only; the distance bands take turns."""
    lo, hi = BANDS_KM[n % len(BANDS_KM)]
    c = s.c
    while True:
        i, j, km = s.pair(lo, hi, same_continent=True)
        b = float(initial_bearing_deg(c.lat[i], c.lon[i], c.lat[j], c.lon[j]))
        if edge_margin(b, 4) < MIN_NAMED_MARGIN_DEG:
            # without coordinates a reader knows where the cities are only roughly
            s.reject("near_sector_edge")
            continue
        names = s.named(j, i)
        if names:
            break
    question = s.prompts.text(
        "gps.relative_position_applied.question", target=names[0], origin=names[1]
    )
    d = direction_question(s, i, j, question, {"band_km": f"{lo}-{hi}"}, km)
    d.difficulty = BAND_DIFFICULTY.get((lo, hi), "easy")
    return d


register_gps(
    name="relative_position_applied",
    track="applied",
    description="north, east, south or west between two cities named only",
    truth_kinds=frozenset({"choice"}),
    score=score_choice,
    generator=relative_position_applied,
)
