"""Boundary analysis: four to six named cities grouped by continent."""

from __future__ import annotations

from collections import defaultdict

from cartoqa.records import GroupingTruth, Sample
from evaluators.gps import score_grouping

from .._cities import CONTINENT_NAMES, continent_of_place
from .._register import register_gps
from .._sampling import Draft, Sampler

__all__ = ["boundary_analysis", "format_grouping"]


def boundary_analysis(s: Sampler, n: int) -> Draft:
    c = s.c
    k = 4 + n % 3
    split = s.split_of(n)  # split by city: every city of a sample is of its split
    pools = s.split_pools(split, s.bare_pools())
    while True:
        idx = s.spread(k, 100, pools=pools)
        continents = [
            continent_of_place(c.country[i], str(c.continent[i]), c.lat[i], c.lon[i], c.admin1[i])
            for i in idx
        ]
        if None in continents:  # the Urals, Istanbul, the Caucasus: people disagree
            s.reject("debatable_continent")
            continue
        names = s.bare_names(*idx)
        if names and any(ch in x for x in names for ch in ",;:"):
            # the plain-text answer ("Asia: A, B; Europe: C") could not hold such a name
            s.reject("name_with_list_punctuation")
            continue
        if names:
            break
    groups: dict[str, list[str]] = defaultdict(list)
    for continent, name in zip(continents, names, strict=True):
        groups[CONTINENT_NAMES[str(continent)]].append(name)
    listed = "; ".join(names)
    text = s.prompts.text("gps.boundary_analysis.question", cities=listed)
    # the more continents to tell apart, the harder: up to three "easy", four "medium",
    # five or more "hard"
    difficulty = "easy" if len(groups) <= 3 else "medium" if len(groups) == 4 else "hard"
    return Draft(
        text,
        GroupingTruth(groups=dict(sorted(groups.items()))),
        str(c.subregion[idx[0]]),
        difficulty,
        {"cities": k},
        split=split,
    )


def format_grouping(sample: Sample) -> str:
    """Boundary analysis's answer as its prompt asks, plain text: "Asia: A, B; Europe: C"."""
    truth = sample.ground_truth
    assert isinstance(truth, GroupingTruth)
    return "FINAL ANSWER: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in truth.groups.items())


register_gps(
    name="boundary_analysis",
    track="applied",
    description="four to six named cities grouped by continent",
    truth_kinds=frozenset({"grouping"}),
    score=score_grouping,
    # the random baseline groups the cities into any of the continents, not only the truth's
    answer_space={"groups": sorted(CONTINENT_NAMES.values())},
    answer_format=format_grouping,
    generator=boundary_analysis,
)
