"""Proximity: which of four cities is nearest a fifth, all given with their coordinates
(GPSBench's form), or, in the variant ``proximity_names``, named only."""

from __future__ import annotations

import numpy as np

from cartoqa.geodesy import distance_km
from cartoqa.records import ChoiceTruth
from evaluators.gps import by_truth, score_choice, score_city

from ...spec import TaskSpec
from .._register import register_gps
from .._sampling import Draft, Sampler

__all__ = ["CLEAR_MARGIN", "PROXIMITY_RATIO", "proximity", "proximity_names", "register_names"]

#: proximity: the second-nearest candidate is at least this many times as far as the nearest
CLEAR_MARGIN = 1.1


def _proximity(s: Sampler, n: int, task: str) -> Draft:
    """Which of four cities is nearest a fifth; split by city (every city of a sample is of
    its split).  The default gives every city with its coordinates (``Sampler.label``), the
    variant ``proximity_names`` names them only."""
    c = s.c
    split = s.split_of(n)
    pools = s.split_pools(split)
    while True:
        idx = s.spread(5, 100, pools=pools)
        ref, cands = idx[0], idx[1:]
        d = [float(distance_km(c.lat[ref], c.lon[ref], c.lat[j], c.lon[j])) for j in cands]
        order = np.argsort(d)
        if d[int(order[1])] < CLEAR_MARGIN * d[int(order[0])]:
            s.reject("too_close_to_call")  # knowing where the cities are would not decide
            continue
        if task == "proximity":  # the coordinates tell namesakes apart
            names: list[str] | None = [s.label(i) for i in idx]
        else:
            names = s.named(*idx)
        if names:
            break
    label = dict(zip(idx, names, strict=True))
    nearest = cands[int(order[0])]
    opts, letter = s.options(label[nearest], [label[j] for j in cands if j != nearest])
    listed = s.listed(opts)
    text = s.prompts.text(f"gps.{task}.question", city=label[ref], options=listed)
    ratio = d[int(order[1])] / max(d[int(order[0])], 1.0)
    # the second-nearest's distance over the nearest's: the nearer to 1, the finer the
    # reckoning a reader needs
    lo, hi = PROXIMITY_RATIO if task == "proximity" else (1.3, 2.0)
    difficulty = "easy" if ratio > hi else "medium" if ratio > lo else "hard"
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        str(c.subregion[ref]),
        difficulty,
        {"ratio": round(ratio, 3)} if task == "proximity" else {},
        split=split,
    )


#: proximity's difficulty: the ratio of the second-nearest to the nearest candidate's
#: distance above the second is "easy", above the first "medium", else "hard"
PROXIMITY_RATIO = (1.3, 2.0)


def proximity(s: Sampler, n: int) -> Draft:
    """The paper's form: all five cities given with their coordinates."""
    return _proximity(s, n, "proximity")


def proximity_names(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: the five cities named only."""
    return _proximity(s, n, "proximity_names")


register_gps(
    name="proximity",
    track="applied",
    description="which of four cities is nearest a fifth, all with coordinates",
    truth_kinds=frozenset({"choice", "text"}),
    score=by_truth(choice=score_choice, text=score_city),
    generator=proximity,
)


def register_names() -> TaskSpec:
    """Register the variant ``proximity_names`` (the package calls it after every
    default task)."""
    return register_gps(
        name="proximity_names",
        track="variant",
        description="variant: the nearest of four cities to a fifth, by name only",
        truth_kinds=frozenset({"choice", "text"}),
        score=by_truth(choice=score_choice, text=score_city),
        generator=proximity_names,
    )
