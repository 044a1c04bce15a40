"""The ``nolabels`` style variant (issue 32): the same openstreetmap-carto maps with every label
removed (``maps.style_variants.without_labels``) and an engine drawing the same extract in it
(``MapEngine.restyled``).

Real Mapnik, PostGIS and Chromium.  Renders are few: one Monaco view in each style (the
image, OCR, markers, path and tile-cache checks share them) and one zoom-19 metatile of a tiny
extract written here (placement boxes and the colour-coded feature reader).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from maps import MapEngine, Marker, View, without_labels
from maps.style import prepare_style
from maps.style_variants import strip_labels, variant_info

from .road_fixtures import ll

CENTRE = (43.7384, 7.4246)  # Monte Carlo: road, place, POI and house labels, shields
ORIGIN = (43.7370, 7.4220)


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), lock files left out."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.fixture(scope="module")
def monaco_pair(engine_for):
    """The base engine, its no-labels twin, one view drawn by each, and the base engine's
    tiles and style before and after the no-labels render."""
    base = engine_for("monaco.osm.pbf")
    view = View.make(
        CENTRE,
        17,
        markers=[Marker(*CENTRE, "red"), Marker(*ORIGIN, "blue")],
        paths=[[CENTRE, (ORIGIN[0], CENTRE[1]), ORIGIN]],
        id="monaco-labels",
    )
    shot = base.render(view)
    style_before = _snapshot(base.style.folder)
    tiles_before = _snapshot(base.tiles.folder / "17")
    plain = base.restyled(without_labels(base.style))
    seconds = plain.tiles.render_seconds
    plain_shot = plain.render(view)
    return {
        "base": base,
        "plain": plain,
        "view": view,
        "shot": shot,
        "plain_shot": plain_shot,
        "style_before": style_before,
        "tiles_before": tiles_before,
        "mapnik_s": plain.tiles.render_seconds - seconds,
    }


# ------------------------------------------------------------------ the style's XML


def test_strip_labels_removes_every_name_and_ref_and_keeps_the_rest():
    """Counted on the real style.xml: 1161 text and 53 shield symbolizers write names, refs
    and house numbers; they go.  The 32 that write a constant (the one-way arrows of
    designated paths) stay, the 34 place shields keep their dot as a marker, and every rule,
    layer, SQL query and other symbolizer is as it was."""
    from maps.database import CARTO_DIR

    xml = (CARTO_DIR / "style.xml").read_text(encoding="utf-8")
    out, counts = strip_labels(xml)
    assert counts == {
        "TextSymbolizer": 1161,
        "ShieldSymbolizer": 53,
        "place_dots": 34,
        "kept_constant_text": 32,
    }
    assert "ShieldSymbolizer" not in out
    left = re.findall(r"<TextSymbolizer\b[^>]*><!\[CDATA\[(.*?)\]\]>", out)
    assert len(left) == 32 and set(left) == {"'🠖'"}
    for tag in ("<Rule>", "<Layer ", "<Style ", "<Datasource>", "<Filter>"):
        assert out.count(tag) == xml.count(tag), tag
    datasources = re.compile(r"<Datasource>.*?</Datasource>", re.S)
    assert datasources.findall(out) == datasources.findall(xml)
    for sym in ("LineSymbolizer", "PolygonSymbolizer", "LinePatternSymbolizer",
                "PolygonPatternSymbolizer"):  # fmt: skip
        assert out.count(f"<{sym} ") == xml.count(f"<{sym} "), sym
    assert out.count("<MarkersSymbolizer ") == xml.count("<MarkersSymbolizer ") + 34
    assert 'file="symbols/place/place-capital-8.svg" placement="point"' in out


def test_the_variant_is_a_copy_of_its_own_and_the_base_copy_is_untouched(carto_files, tmp_path):
    base = prepare_style(carto_files=carto_files, cache=tmp_path)
    before = _snapshot(base.folder)
    plain = without_labels(base)
    assert plain.folder != base.folder and plain.folder.parent == base.folder.parent
    assert plain.folder.name == f"{base.folder.name}-nolabels1"
    assert _snapshot(base.folder) == before
    assert (plain.version, plain.placeholders, plain.removed_faces) == (
        base.version, base.placeholders, base.removed_faces
    )  # fmt: skip
    info = variant_info(plain)
    assert info is not None and info["variant"] == "nolabels" and info["base"] == base.folder.name
    assert info["counts"]["TextSymbolizer"] == 1161 and variant_info(base) is None
    # symbols, patterns and fonts as the base has them: links stay links to the same files
    for part in ("symbols", "patterns", "fonts"):
        names = sorted(p.relative_to(base.folder / part) for p in (base.folder / part).rglob("*"))
        assert names and names == sorted(
            p.relative_to(plain.folder / part) for p in (plain.folder / part).rglob("*")
        ), part
    link = next(p for p in (base.folder / "fonts").iterdir() if p.is_symlink())
    assert (plain.folder / "fonts" / link.name).resolve() == link.resolve()
    # made once: asked again (or asked for its own variant) it is the same copy, not rewritten
    mtime = plain.xml_path.stat().st_mtime_ns
    assert without_labels(base) == plain and without_labels(plain) == plain
    assert plain.xml_path.stat().st_mtime_ns == mtime


@pytest.fixture(scope="module")
def base_style(carto_files, tmp_path_factory):
    """A base working copy in a cache of its own (the faults below spoil its variant)."""
    return prepare_style(carto_files=carto_files, cache=tmp_path_factory.mktemp("style-cache"))


@pytest.mark.parametrize("fault", ["cut_short", "marker_gone", "other_base", "fonts_gone"])
def test_a_torn_or_stale_variant_copy_is_made_again_with_a_warning(base_style, fault, caplog):
    base = base_style
    first = without_labels(base)
    good = first.xml_path.read_bytes()
    if fault == "cut_short":
        first.xml_path.write_bytes(good[: len(good) // 2])
    elif fault == "marker_gone":
        (first.folder / ".prepared").unlink()
    elif fault == "other_base":
        marker = json.loads((first.folder / ".prepared").read_text())
        marker["base_sha256"] = "0" * 64
        (first.folder / ".prepared").write_text(json.dumps(marker))
    else:
        shutil.rmtree(first.folder / "fonts")
    caplog.set_level(logging.WARNING)
    again = without_labels(base)
    assert again == first and again.xml_path.read_bytes() == good
    assert (again.folder / "fonts").is_dir()
    assert str(first.folder) in caplog.text and "made again" in caplog.text
    assert not [p for p in first.folder.parent.iterdir() if ".tmp" in p.name]


# ------------------------------------------------------------------ a view in both styles


def test_the_no_labels_view_differs_and_keeps_markers_and_path(monaco_pair):
    shot, plain = monaco_pair["shot"], monaco_pair["plain_shot"]
    a, b = shot.image(), plain.image()
    assert a.shape == b.shape
    assert (a != b).any(axis=2).mean() > 0.02  # the names are gone
    assert plain.markers_px == shot.markers_px and plain.paths_px == shot.paths_px
    assert plain.bounds == shot.bounds and plain.scale_text == shot.scale_text
    assert plain.attribution == shot.attribution and "OpenStreetMap" in plain.attribution
    # the pins and the path are drawn over the map alike: the same pixels in both images
    # (the pin's head, which hides the map; around its tip the map shows through)
    for x, y in shot.markers_px:
        x, y = int(x), int(y)
        head = (slice(y - 34, y - 22), slice(x - 5, x + 6))
        assert np.array_equal(a[head], b[head]), (x, y)
    for (x0, y0), (x1, y1) in zip(shot.paths_px[0], shot.paths_px[0][1:], strict=False):
        for t in np.linspace(0.1, 0.9, 9):
            x, y = round(x0 + t * (x1 - x0)), round(y0 + t * (y1 - y0))
            assert tuple(a[y, x]) == tuple(b[y, x]), (x, y)


def test_the_ocr_baseline_reads_names_on_the_base_map_and_none_without_labels(
    monaco_pair, tmp_path
):
    from cartoqa.models.ocr import read_labels

    base_png = monaco_pair["shot"].save(tmp_path / "base.png")
    plain_png = monaco_pair["plain_shot"].save(tmp_path / "plain.png")
    read = read_labels(base_png)
    words = {w for label in read for w in label.split() if len(w) >= 5}
    assert len(read) >= 20 and {"Boulevard", "Palace"} & words
    plain = read_labels(plain_png)
    # what Tesseract makes of icons: a fragment or two, never a word of a name
    assert len(plain) <= 3, plain
    assert not [w for label in plain for w in label.split() if len(w) >= 5], plain


def test_tiles_of_the_two_styles_are_cached_apart_and_the_base_tiles_stay(monaco_pair):
    base, plain = monaco_pair["base"], monaco_pair["plain"]
    assert base.tiles.folder != plain.tiles.folder
    assert base.tiles.folder.parents[1] == plain.tiles.folder.parents[1]  # one tile cache
    assert base.tiles.folder.name == plain.tiles.folder.name  # the extract's folder, per style
    assert plain.tiles.metatile == base.tiles.metatile
    assert plain.database is base.database and plain.extract is base.extract
    # the base engine's tiles, boxes and style are byte for byte what they were
    assert _snapshot(base.tiles.folder / "17") == monaco_pair["tiles_before"]
    assert _snapshot(base.style.folder) == monaco_pair["style_before"]
    # (the tile cache is shared by the whole test session: either folder may hold tiles of
    # other tests' views, so the two are compared on the tiles both hold)
    mine = _snapshot(plain.tiles.folder / "17")
    tiles = sorted(p for p in mine if p.endswith(".png") and p in monaco_pair["tiles_before"])
    assert len(tiles) >= 4  # the view's tiles, in both styles
    assert sum(mine[p] != monaco_pair["tiles_before"][p] for p in tiles) > len(tiles) // 2
    # the no-labels metatiles place far fewer boxes (icons only); the base ones stay
    metas = sorted(
        p for p in mine if p.endswith(".boxes.json") and p in monaco_pair["tiles_before"]
    )
    assert metas
    for p in metas:
        assert len(json.loads(mine[p])) < 0.5 * len(json.loads(monaco_pair["tiles_before"][p]))
    logging.getLogger(__name__).info(
        "no-labels render of %d metatiles: %.1f s of Mapnik", len(metas), monaco_pair["mapnik_s"]
    )


# ------------------------------------------------------------------ a tiny extract


def _write_corner(path: Path) -> None:
    """Two named streets crossing (one with a ref), a named café well off both streets, a
    house number and a named suburb: each kind of label once, one icon."""
    nodes = {1: (-2.0, 0.0), 2: (0.0, 0.0), 3: (2.0, 0.0), 4: (0.0, -2.0), 5: (0.0, 2.0)}
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="cartoqa">']
    for n, (x, y) in nodes.items():
        lat, lon = ll(x, y)
        lines.append(f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    extra = {
        10: (0.8, 0.8, {"amenity": "cafe", "name": "Corner Cafe"}),
        11: (-0.6, -0.5, {"addr:housenumber": "17", "addr:street": "Harbour Street"}),
        12: (-1.0, 1.2, {"place": "suburb", "name": "Northfield"}),
    }
    for n, (x, y, tags) in extra.items():
        lat, lon = ll(x, y)
        lines.append(f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}">')
        lines += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
        lines.append("  </node>")
    ways = {
        100: ([1, 2, 3], {"highway": "secondary", "name": "Harbour Street", "ref": "B 12"}),
        101: ([4, 2, 5], {"highway": "residential", "name": "Mill Lane"}),
    }
    for w, (refs, tags) in ways.items():
        lines.append(f'  <way id="{w}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
        lines.append("  </way>")
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def corner(cluster, cache, carto_files, tmp_path_factory):
    path = tmp_path_factory.mktemp("corner") / "labels-corner.osm"
    _write_corner(path)
    base = MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)
    return base, base.restyled(without_labels(base.style))


def test_no_labels_metatiles_place_only_the_icon(corner):
    base, plain = corner
    lat, lon = ll(0.8, 0.8)
    view = View.make((lat, lon), 19, id="corner")
    metas = sorted({base.tiles.metatile_of(19, x, y) for _, x, y in
                    base.tiles.tiles_for(19, *_world_px(view))})  # fmt: skip
    base_boxes = [b for m in metas for b in base.tiles.placements(*m)]
    plain_boxes = [b for m in metas for b in plain.tiles.placements(*m)]
    # the base places the café's icon, its name, the street names (glyph by glyph), the
    # ref shield, the house number and the suburb's name; the variant only the icon
    assert len(base_boxes) >= 20
    assert len(plain_boxes) == 1, plain_boxes
    assert plain_boxes[0] in base_boxes
    bx0, by0, bx1, by1 = plain_boxes[0]
    assert 10 <= bx1 - bx0 <= 30 and 10 <= by1 - by0 <= 30  # an icon, not a word


def _world_px(view: View) -> tuple[float, float, float, float]:
    from maps.projection import pixel_box

    x0, y0, _, _ = pixel_box(view.center, view.zoom, view.width, view.height)
    x0, y0 = round(x0), round(y0)
    return x0, y0, x0 + view.width - 1, y0 + view.height - 1


def test_the_feature_reader_reads_the_no_labels_tiles(corner):
    """``FeatureLabels`` (the map-feature truth) on the restyled engine: the café's icon shows
    and its name does not, where the base engine shows both."""
    from maps.feature_pixels import FeatureLabels

    base, plain = corner
    lat, lon = ll(0.8, 0.8)
    view = View.make((lat, lon), 19, id="corner")

    def cafe(engine: MapEngine):
        drawn = FeatureLabels(engine, lambda tags: "amenity" in tags).view(view, covers=[])
        (d,) = [d for d in drawn if d.row.name == "Corner Cafe"]
        return d

    seen = cafe(base)
    assert seen.icon is not None and seen.label_text == "Corner Cafe"
    gone = cafe(plain)
    assert gone.icon == seen.icon and gone.icon_share == seen.icon_share
    assert gone.label is None and not gone.label_partial and gone.label_text == ""


def test_the_road_label_reader_reads_no_names_on_the_no_labels_tiles(corner):
    """``RoadLabels`` (the navigation tasks' label truth) on the restyled engine: no road
    name is visible or partly visible, where the base engine shows the two streets'."""
    from maps.labels import RoadLabels

    base, plain = corner
    view = View.make(ll(0.0, 0.0), 18, id="corner-roads")
    seen = RoadLabels(base).names(view)
    assert {"Harbour Street", "Mill Lane"} <= seen.visible | seen.partial
    assert seen.visible
    gone = RoadLabels(plain).names(view)
    assert gone.visible == frozenset() and gone.partial == frozenset()
