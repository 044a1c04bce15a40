"""No test question of a task asks about a city that a train sample of that task uses (issue
28, item 12).

A reader found 37 of 1,020 missing-data test questions asking the coordinate a train sample
of the same city gives in its prompt, and 252 of 1,020 place-association test answers among
the train answers.  Every task whose answer is a city, a city's coordinate, or a fact of the
cities it names is split by city.  Here the cities each sample uses are read back from its
prompt and truth with code of this module, and the splits compared.
"""

from __future__ import annotations

import collections
import re
from typing import Any

import pytest

from cartoqa.records import CoordinateTruth
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps

PER_TASK = 500
#: the tasks whose answer is a city (or the cities' grouping), or a city's coordinate
CITY_TASKS = (
    "format_conversion",
    "coordinate_transformation",
    "missing_data",
    "place_association",
    "spatial_patterns",
    "spatial_patterns_hinted",
    "proximity",
    "proximity_names",
    "boundary_analysis",
    "name_disambiguation",
    "name_disambiguation_countries",
)
_POINT = re.compile(r"(-?\d+\.\d{4,6}), (-?\d+\.\d{4,6})")


def _where(lat: float, lon: float) -> str:
    return f"{lat:.3f},{lon:.3f}"


def cities_of(s: Any) -> set[str]:
    """What a sample asks about: the city (by where it is, or its name and country), or the
    name group, read from the prompt and the truth."""
    t, g = s.prompt.text, s.ground_truth
    if s.task in ("format_conversion", "coordinate_transformation"):
        if isinstance(g, CoordinateTruth):
            return {_where(g.lat, g.lon)}
        m = _POINT.search(t)
        assert m, (s.id, t)
        return {_where(float(m[1]), float(m[2]))}
    if s.task == "missing_data":
        m = re.search(r" is at (latitude|longitude) (-?[\d.]+)\.", t)
        assert m, t
        given = float(m[2])
        lat, lon = (given, g.value) if m[1] == "latitude" else (g.value, given)
        return {_where(lat, lon)}
    if s.task == "place_association":
        return {f"{g.answer}|{(s.metadata.model_extra or {})['country']}"}
    if s.task in ("spatial_patterns", "spatial_patterns_hinted"):
        m = re.search(r": ([^:]+)\. Which", t)
        assert m, t
        return set(m[1].split("; "))
    if s.task in ("proximity", "proximity_names"):
        m = re.search(r"nearest to (.+?)\?\n", t)
        assert m, t
        return {m[1], *g.options.values()}
    if s.task == "boundary_analysis":
        return {name for group in g.groups.values() for name in group}
    m = re.search(r"Several cities are called (.+?)\. Which", t)
    assert m, t
    return {m[1]}  # name disambiguation: its name group


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    out = tmp_path_factory.mktemp("splits") / "g"
    generate_gps(out, per_task=PER_TASK, seed=42, tasks=list(CITY_TASKS))
    return list(load_dataset(out))


@pytest.mark.parametrize("task", CITY_TASKS)
def test_no_city_is_in_two_splits_of_a_task(samples: list[Any], task: str) -> None:
    of = [s for s in samples if s.task == task]
    assert collections.Counter(s.split for s in of) == {"train": 300, "dev": 50, "test": 150}
    by_split: dict[str, set[str]] = collections.defaultdict(set)
    for s in of:
        by_split[s.split] |= cities_of(s)
    for a, b in (("test", "train"), ("dev", "train"), ("test", "dev")):
        shared = by_split[a] & by_split[b]
        assert not shared, (task, a, b, len(shared), sorted(shared)[:5])
