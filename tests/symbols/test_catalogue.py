"""The MFS catalogue (``symbols.catalogue``): the features the style draws, read from its own
rules, named by the iD tagging schema (issue 16, item 1)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from cartoqa.errors import RenderStackError
from symbols.catalogue import STYLE_XML, build_catalogue, schema_dir


@pytest.fixture(scope="module")
def catalogue():
    if not STYLE_XML.is_file():
        pytest.skip(f"{STYLE_XML} is not installed (bash scripts/setup.sh main)")
    try:
        return build_catalogue()
    except RenderStackError as exc:
        pytest.skip(str(exc))


def _english() -> dict:
    path = schema_dir() / "dist" / "translations" / "en.json"
    return json.loads(path.read_text(encoding="utf-8"))["en"]["presets"]["presets"]


def test_the_catalogue_covers_the_three_categories(catalogue):
    entries, _ = catalogue
    per = Counter(e.category for e in entries)
    assert per["symbol"] >= 200 and per["line"] >= 40 and per["area"] >= 60, per
    assert len({(e.category, e.key) for e in entries}) == len(entries)  # no entry twice


def test_known_features_are_where_the_style_draws_them(catalogue):
    entries, _ = catalogue
    by = {(e.category, e.key): e for e in entries}
    bank = by[("symbol", "amenity=bank")]
    assert bank.icons == ("symbols/amenity/bank.svg",) and bank.key_class == "amenity"
    assert "amenity-points" in bank.layers
    for line in ("highway=residential", "highway=footway", "waterway=river", "railway=rail"):
        assert ("line", line) in by, line
    for area in ("landuse=grass", "natural=wood", "leisure=park", "natural=water"):
        assert ("area", area) in by, area
    assert ("symbol", "leisure=park") not in by  # no icon for a park
    assert all(e.icons for e in entries if e.category == "symbol")


def test_names_come_from_the_tagging_schema_never_written_by_hand(catalogue):
    entries, version = catalogue
    package = json.loads((schema_dir() / "package.json").read_text(encoding="utf-8"))
    assert version == package["version"] == "7.2.0"  # pinned in package.json
    english = {v["name"] for v in _english().values() if "name" in v}
    named = [e for e in entries if e.name_source == "id-tagging-schema"]
    assert len(named) >= 0.9 * len(entries)
    assert all(e.name in english for e in named)
    assert {e.key: e.name for e in named}["amenity=bank"] == _english()["amenity/bank"]["name"]
    for e in entries:
        if e.name_source == "tag":
            assert e.name == e.key  # said plainly, not invented
    # a tag iD names by geometry takes the name of the geometry drawn
    by = {(e.category, e.key): e for e in entries}
    assert by[("line", "highway=pedestrian")].name == _english()["highway/pedestrian_line"]["name"]
    assert "Thrift Shop" in by[("symbol", "shop=second_hand")].terms  # its aliases and terms


def test_a_missing_schema_names_the_fix(tmp_path):
    with pytest.raises(RenderStackError, match="npm ci"):
        schema_dir(tmp_path)
