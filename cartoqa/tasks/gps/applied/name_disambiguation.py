"""Name disambiguation: which of four same-name cities is at a point; four in four states or
provinces (GPSBench's form), or, in the variant ``name_disambiguation_countries``, in four
countries."""

from __future__ import annotations

import numpy as np

from cartoqa.geodesy import distance_km
from cartoqa.records import ChoiceTruth
from evaluators.gps import score_choice

from ...spec import TaskSpec
from .._name_groups import (
    NAME_GROUPS_SOURCE,
    NameGroup,
    load_division_groups,
    load_name_groups,
    split_groups,
)
from .._register import register_gps
from .._sampling import SPLIT_SHARES, Draft, Sampler, split_targets

__all__ = [
    "NAMESAKE_KM",
    "name_disambiguation",
    "name_disambiguation_countries",
    "register_countries",
]


def _group_plan(
    s: Sampler, groups: tuple[NameGroup, ...], key: str
) -> tuple[list[str], dict[str, list[int]]]:
    """The split of each sample (60/10/30, exact, in a seeded order) and the name groups
    dealt to each split: a name group, and so a (name, answer) pair, is in one split only."""
    if key not in s.memo:
        n = s.per_task or 10
        plan = [name for name, k in split_targets(n).items() for _ in range(k)]
        plan = [plan[int(i)] for i in s.rng.permutation(n)]
        s.memo[key] = (plan, split_groups(groups, SPLIT_SHARES, s.rng))
    plan_and_groups: tuple[list[str], dict[str, list[int]]] = s.memo[key]
    return plan_and_groups


#: name disambiguation: the nearest other option's place within this many km of the answer
#: is "hard", within the second "medium" (a reader must know where each lies more finely
#: the nearer they are); measured on 3,400 samples at seed 42 (README)
NAMESAKE_KM = (300.0, 1200.0)


def _disambiguation(s: Sampler, n: int, task: str) -> Draft:
    """Four cities of one name (GeoNames cities1000, ``_name_groups``), in four first-level
    divisions (the default) or four countries (the variant); which one is at a point
    100-500 m from one of them.  The sample's split is the split its name group was dealt
    to."""
    by_division = task == "name_disambiguation"
    groups = load_division_groups() if by_division else load_name_groups()
    plan, by_split = _group_plan(s, groups, f"group_plan:{task}")
    split = plan[n % len(plan)]
    pool = by_split[split]
    group = groups[pool[int(s.rng.integers(len(pool)))]]
    picks: list[int] = []
    seen: set[tuple[str, str]] = set()
    for k in s.rng.permutation(len(group.places)):
        p = group.places[int(k)]
        # a division group holds one place per (country, province) already
        key = (p.country, p.province) if by_division else (p.country, "")
        if key not in seen:
            seen.add(key)
            picks.append(int(k))
        if len(picks) == 4:
            break
    places = [group.places[k] for k in picks]
    answer = places[0]
    sigma = float(s.rng.uniform(100, 500))
    lat = answer.lat + float(s.rng.normal(0, sigma / 111_000))
    lon = answer.lon + float(s.rng.normal(0, sigma / (111_000 * np.cos(np.radians(answer.lat)))))
    # one spelling for the question and every option, so no spelling points to the answer
    labels = [
        s.prompts.text(
            f"gps.{task}.option",
            spelling=group.spelling,
            province=p.province,
            country=p.country_name,
        )
        for p in places
    ]
    opts, letter = s.options(labels[0], labels[1:])
    listed = s.listed(opts)
    text = s.prompts.text(
        f"gps.{task}.question", spelling=group.spelling, lat=lat, lon=lon, options=listed
    )
    meta: dict[str, object] = {"group_size": len(group.places), "name_group": group.key}
    difficulty = "medium"  # the variant's label, as before
    if by_division:
        near_km = min(float(distance_km(answer.lat, answer.lon, p.lat, p.lon)) for p in places[1:])
        difficulty = (
            "hard" if near_km < NAMESAKE_KM[0] else "medium" if near_km < NAMESAKE_KM[1] else "easy"
        )
        meta["nearest_option_km"] = round(near_km, 1)
    return Draft(
        text,
        ChoiceTruth(answer=letter, options=opts),
        answer.subregion,
        difficulty,
        meta,
        split=split,
    )


def name_disambiguation(s: Sampler, n: int) -> Draft:
    """Four same-name cities in four states or provinces (the paper's form)."""
    return _disambiguation(s, n, "name_disambiguation")


def name_disambiguation_countries(s: Sampler, n: int) -> Draft:
    """cartoqa's earlier form: four same-name cities in four countries, "Name, Country"."""
    return _disambiguation(s, n, "name_disambiguation_countries")


register_gps(
    name="name_disambiguation",
    track="applied",
    description="which of four same-name cities, in four states, is at a point",
    truth_kinds=frozenset({"choice"}),
    score=score_choice,
    generator=name_disambiguation,
    sources=(NAME_GROUPS_SOURCE,),
)


def register_countries() -> TaskSpec:
    """Register the variant ``name_disambiguation_countries`` (the package calls it
    after every default task)."""
    return register_gps(
        name="name_disambiguation_countries",
        track="variant",
        description="variant: four same-name cities in four countries",
        truth_kinds=frozenset({"choice"}),
        score=score_choice,
        generator=name_disambiguation_countries,
    )
