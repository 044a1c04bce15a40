"""Legend images (``symbols.legend``): each catalogue feature drawn alone by Mapnik with the
style the maps use, from a synthetic grid in a database of its own (issue 16, item 2)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from cartoqa.errors import RenderStackError
from symbols.catalogue import STYLE_XML, CatalogueEntry, build_catalogue
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
    # issue 26, finding 5: areas the style puts an icon on, near tints, width-only lines
    ("area", "amenity=prison"),
    ("area", "amenity=motorcycle_parking"),
    ("area", "amenity=bicycle_parking"),
    ("area", "amenity=arts_centre"),
    ("area", "landuse=residential"),
    ("area", "landuse=religious"),
    ("area", "aeroway=apron"),
    ("line", "railway=turntable"),
    ("line", "railway=subway"),
    ("line", "waterway=stream"),
    ("line", "waterway=drain"),
    ("line", "waterway=ditch"),
]
#: the colours of the icons the style puts on those areas (amenity brown, transport blue)
ICON_COLOURS = {
    "area:amenity=prison": (0x73, 0x4A, 0x08),
    "area:amenity=arts_centre": (0x73, 0x4A, 0x08),
    "area:amenity=motorcycle_parking": (0x00, 0x92, 0xDA),
    "area:amenity=bicycle_parking": (0x00, 0x92, 0xDA),
}


@pytest.fixture(scope="module")
def legend(cluster, cache, carto_files, tmp_path_factory):
    if not STYLE_XML.is_file():
        pytest.skip(f"{STYLE_XML} is not installed (bash scripts/setup.sh main)")
    try:
        entries, _ = build_catalogue()
    except RenderStackError as exc:
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
    lines = sum(k.startswith("line:") for k in lg.images)
    rows = -(-lines // 3)
    assert Image.open(out).size == (3 * 120, rows * (120 + 26) + 20)


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


def _pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float32)


def test_area_images_carry_no_point_icon(legend):
    """Prison grounds, motorcycle parking and the arts centre showed the style's icon on the
    fill, which made an area question a symbol question: no pixel of an area image is
    near the icon's colour."""
    lg, _ = legend
    for key, colour in ICON_COLOURS.items():
        a = _pixels(lg.images[key])
        near_icon = np.abs(a - np.asarray(colour, dtype=np.float32)).max(axis=2) < 40
        assert not near_icon.any(), (key, int(near_icon.sum()))


def test_motorcycle_and_bicycle_parking_fills_are_look_alikes(legend):
    """0.9/255 apart once the icon is gone: one look, never two options of one question."""
    from symbols.lookalike import lookalike_classes

    lg, _ = legend
    together = {k: frozenset(c) for c in lookalike_classes(lg.images) for k in c}
    assert "area:amenity=bicycle_parking" in together.get(
        "area:amenity=motorcycle_parking", frozenset()
    )
    assert "area:amenity=arts_centre" not in together.get(
        "area:amenity=motorcycle_parking", frozenset()
    )


def test_a_turntable_is_drawn_as_the_ring_osm_maps_it_as(legend):
    """Drawn as the legend's open zigzag, a turntable was a subway track 0.5 px thinner;
    OSM maps it as a closed way round the pit, and so the legend draws it."""
    from symbols.lookalike import BACKGROUND, DRAWN, THRESHOLDS, image_distance

    lg, _ = legend
    a = _pixels(lg.images["line:railway=turntable"])
    drawn = np.abs(a - np.asarray(BACKGROUND, dtype=np.float32)).max(axis=2) > DRAWN
    ys, xs = np.nonzero(drawn)
    height, width = ys.max() - ys.min() + 1, xs.max() - xs.min() + 1
    radius_px = 12.0 / (143.3 / LINE_PX)  # a ring of 12 m (RING_M) in a frame of 143 m
    assert abs(height - width) <= 2 and abs(width / 2 - radius_px) < 4, (height, width)
    cy, cx = (ys.min() + ys.max()) // 2, (xs.min() + xs.max()) // 2
    assert not drawn[cy - 5 : cy + 6, cx - 5 : cx + 6].any()  # the pit inside is empty
    subway = _pixels(lg.images["line:railway=subway"])
    assert image_distance(subway, a) > THRESHOLDS["line"]  # not a look-alike class either
    from symbols.lookalike import near_pairs

    assert ("line:railway=subway", "line:railway=turntable") not in near_pairs(lg.images)


def test_width_only_lines_and_near_tint_fills_are_near_pairs(legend):
    """stream / drain and ditch / stream differ only by width; residential / apron /
    religious only by a faint tint: near pairs, never two options of one question."""
    from symbols.lookalike import near_pairs

    lg, _ = legend
    pairs = set(near_pairs(lg.images))
    for pair in [
        ("line:waterway=drain", "line:waterway=stream"),
        ("line:waterway=ditch", "line:waterway=stream"),
        ("area:landuse=religious", "area:landuse=residential"),
        ("area:aeroway=apron", "area:landuse=residential"),
        ("area:aeroway=apron", "area:landuse=religious"),
    ]:
        assert pair in pairs, pair
    for pair in [
        ("line:railway=subway", "line:waterway=stream"),
        ("line:waterway=river", "line:waterway=stream"),
        ("area:landuse=grass", "area:natural=water"),
        ("area:landuse=residential", "area:natural=wood"),
    ]:
        assert pair not in pairs, pair


def test_the_layers_left_out_of_line_and_area_images_are_the_point_and_label_ones():
    from symbols.legend import point_and_label_layers

    if not STYLE_XML.is_file():
        pytest.skip(f"{STYLE_XML} is not installed (bash scripts/setup.sh main)")
    drop = point_and_label_layers(STYLE_XML.read_text(encoding="utf-8"))
    for layer in ("amenity-points", "amenity-low-priority", "text-point", "text-poly-low-zoom"):
        assert layer in drop, layer
    for layer in ("landcover", "landuse-overlay", "landcover-area-symbols", "roads-fill"):
        assert layer not in drop, layer  # fills, patterns and lines stay
