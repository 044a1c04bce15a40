"""Legend images (``symbols.legend``): each catalogue feature drawn alone by Mapnik with the
style the maps use, from a synthetic grid in a database of its own (issue 16, item 2)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from symbols.catalogue import STYLE_XML, CatalogueEntry, CatalogueError, build_catalogue
from symbols.legend import AREA_PX, LINE_PX, SYMBOL_PX, render_legend

KEYS = [
    ("symbol", "amenity=bank"),
    ("symbol", "amenity=cafe"),
    ("symbol", "railway=crossing"),
    ("symbol", "railway=level_crossing"),
    ("symbol", "shop=kiosk"),
    ("symbol", "shop=newsagent"),
    ("symbol", "man_made=mast"),
    ("symbol", "man_made=tower"),
    ("line", "highway=residential"),
    ("line", "highway=unclassified"),
    ("line", "waterway=river"),
    ("line", "highway=footway"),
    ("line", "highway=path"),
    ("area", "landuse=grass"),
    ("area", "landuse=meadow"),
    ("area", "natural=wood"),
    ("area", "landuse=forest"),
    ("area", "natural=water"),
]


@pytest.fixture(scope="module")
def legend(cluster, cache, carto_files, tmp_path_factory):
    if not STYLE_XML.is_file():
        pytest.skip(f"{STYLE_XML} is not installed (bash scripts/setup.sh main)")
    try:
        entries, _ = build_catalogue()
    except CatalogueError as exc:
        pytest.skip(str(exc))
    by = {(e.category, e.key): e for e in entries}
    chosen = [by[k] for k in KEYS]
    # a tag the style draws nothing for: dropped and counted, not an empty image
    chosen.append(
        CatalogueEntry(
            tags={"tourism": "attraction"},
            key_class="tourism",
            category="symbol",
            name="Tourist Attraction",
            name_source="id-tagging-schema",
        )
    )
    folder = tmp_path_factory.mktemp("legend")
    return render_legend(
        chosen, folder, carto_files=carto_files, cache=cache, cluster=cluster
    ), folder


def _digest(path) -> str:
    return hashlib.sha256(Image.open(path).convert("RGB").tobytes()).hexdigest()


def _diff(a, b) -> float:
    """Mean absolute difference of two images, 0-255."""
    x = np.asarray(Image.open(a).convert("RGB"), dtype=float)
    y = np.asarray(Image.open(b).convert("RGB"), dtype=float)
    return float(np.abs(x - y).mean())


def test_each_feature_has_an_image_of_its_categorys_size(legend):
    lg, _ = legend
    assert set(lg.images) == {f"{c}:{k}" for c, k in KEYS}
    sizes = {"symbol": SYMBOL_PX, "line": LINE_PX, "area": AREA_PX}
    for key, path in lg.images.items():
        assert Image.open(path).size == (sizes[key.split(":")[0]],) * 2


def test_a_feature_that_draws_nothing_is_dropped_and_said_why(legend):
    lg, _ = legend
    assert "symbol:tourism=attraction" in lg.dropped
    assert "nothing" in lg.dropped["symbol:tourism=attraction"]


def test_images_differ_except_where_the_style_draws_two_tags_alike(legend):
    lg, _ = legend
    im = lg.images
    assert _digest(im["symbol:amenity=bank"]) != _digest(im["symbol:amenity=cafe"])
    assert _diff(im["area:landuse=grass"], im["area:natural=wood"]) > 5
    assert _diff(im["line:highway=residential"], im["line:waterway=river"]) > 2
    # the style draws residential and unclassified roads the same (a look-alike pair; the
    # cells' sub-pixel placement differs, so not to the byte)
    assert _diff(im["line:highway=residential"], im["line:highway=unclassified"]) < 1


def test_the_grid_writes_no_names(legend):
    _, folder = legend
    text = (folder / "legend-grid.osm").read_text(encoding="utf-8")
    assert 'k="name"' not in text


def test_look_alikes_form_classes_and_distinct_features_do_not(legend):
    from symbols.lookalike import lookalike_classes

    lg, _ = legend
    classes = lookalike_classes(lg.images)
    together = {k: frozenset(c) for c in classes for k in c}
    for a, b in [
        ("line:highway=residential", "line:highway=unclassified"),
        ("line:highway=footway", "line:highway=path"),
        ("area:landuse=grass", "area:landuse=meadow"),
        ("area:landuse=forest", "area:natural=wood"),
        # one glyph a pixel apart, and details too small to see at the map's scale
        ("symbol:railway=crossing", "symbol:railway=level_crossing"),
        ("symbol:shop=kiosk", "symbol:shop=newsagent"),
    ]:
        assert together.get(a) is not None and b in together[a], (a, b)
    for a, b in [
        ("symbol:amenity=bank", "symbol:amenity=cafe"),
        ("symbol:man_made=mast", "symbol:man_made=tower"),  # alike, yet told apart
        ("line:highway=residential", "line:waterway=river"),
        ("area:landuse=grass", "area:natural=wood"),
        ("area:natural=water", "area:landuse=grass"),
    ]:
        assert b not in together.get(a, frozenset()), (a, b)


def test_a_contact_sheet_shows_every_image_of_its_category(legend, tmp_path):
    from symbols.catalogue import build_catalogue
    from symbols.sheet import contact_sheet

    lg, _ = legend
    entries, _ = build_catalogue()
    out = tmp_path / "sheet.png"
    shown = contact_sheet(entries, lg.images, "line", out, columns=3)
    assert shown == sum(k.startswith("line:") for k in lg.images)
    assert Image.open(out).size == (3 * 120, 2 * (120 + 26) + 20)  # 5 lines: 2 rows of 3


def test_the_batched_pairs_are_the_pairwise_distances_under_the_limit(legend):
    """``close_pairs`` (one image against all later ones) finds exactly the pairs that
    ``image_distance``, one pair at a time, puts under the limit."""
    from symbols.lookalike import close_pairs, image_distance

    lg, _ = legend
    lines = sorted(k for k in lg.images if k.startswith("line:"))
    arrays = [np.asarray(Image.open(lg.images[k]).convert("RGB"), dtype=np.float32) for k in lines]
    for limit in (1.0, 8.0, 40.0):
        slow = [
            (i, j)
            for i in range(len(arrays))
            for j in range(i + 1, len(arrays))
            if image_distance(arrays[i], arrays[j]) < limit
        ]
        assert close_pairs(arrays, limit) == slow, limit
    assert close_pairs(arrays, 8.0), "residential and unclassified draw alike"
