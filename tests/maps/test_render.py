"""Rendered views checked on their pixels: markers, path, scale bar, attribution, water.

Where things should be is predicted here from the Web Mercator projection,
independently of what Leaflet reports.
"""

from __future__ import annotations

import itertools
import logging
import os

import numpy as np
import pytest

from cartoqa.errors import RenderStackError
from cartoqa.geodesy import from_web_mercator
from maps import MapEngine, Marker, View
from maps.projection import HALF_WORLD_M, metres_per_pixel, world_pixel

from .conftest import extract_path

BLUE_MARKER = (56, 170, 221)  # awesome-markers' blue and red pins
RED_MARKER = (214, 62, 42)
PATH_RGB = (0, 0, 255)
WATER_RGB = (170, 211, 223)  # openstreetmap-carto's water

# extract -> the view's centre; markers sit at fixed pixel offsets from it at every zoom
CENTRES = {
    "monaco.osm.pbf": (43.7384, 7.4246),
    "london-moorgate.osm.pbf": (51.5175, -0.0887),
    "sydney-cbd.osm.pbf": (-33.8688, 151.2070),
    "helsinki-centre.osm.pbf": (60.1710, 24.9440),
}
PLACES = CENTRES
BLUE_OFFSET_PX, RED_OFFSET_PX = (-310, -170), (280, 190)


def at_offset(center, zoom, dx, dy):
    x, y = world_pixel(*center, zoom)
    res = metres_per_pixel(zoom)
    return from_web_mercator((x + dx) * res - HALF_WORLD_M, HALF_WORLD_M - (y + dy) * res)


def predicted(view: View, lat: float, lon: float) -> tuple[float, float]:
    """Pixel of a point: Leaflet puts the centre at the middle, its pixel origin rounded."""
    cx, cy = world_pixel(*view.center, view.zoom)
    ox, oy = round(cx - view.width / 2), round(cy - view.height / 2)
    x, y = world_pixel(lat, lon, view.zoom)
    return x - ox, y - oy


def near(img: np.ndarray, rgb, tol=12) -> np.ndarray:
    return np.all(np.abs(img.astype(int) - np.array(rgb)) <= tol, axis=-1)


def pin_centroid(img, rgb, anchor, window=45):
    ax, ay = (round(v) for v in anchor)
    y0, x0 = max(0, ay - window), max(0, ax - window)
    mask = near(img[y0 : ay + 5, x0 : ax + window], rgb)
    ys, xs = np.nonzero(mask)
    assert len(xs) > 150, f"no {rgb} pin near {anchor} ({len(xs)} px)"
    return x0 + xs.mean(), y0 + ys.mean()


def view_for(name: str, zoom: int) -> View:
    center = CENTRES[name]
    a = at_offset(center, zoom, *BLUE_OFFSET_PX)
    b = at_offset(center, zoom, *RED_OFFSET_PX)
    return View.make(
        center,
        zoom,
        markers=[Marker(*a, "blue"), Marker(*b, "red")],
        paths=[[a, center, b]],
        id=f"{name}-{zoom}",
    )


@pytest.fixture(scope="module")
def shots(engine_for):
    """Views of four extracts at zooms 15 and 19, rendered in one batch per extract."""
    out = {}
    for name in PLACES:
        eng: MapEngine = engine_for(name)
        views = [view_for(name, z) for z in (15, 19)]
        for v, r in zip(views, eng.render_many(views, progress=False), strict=True):
            out[(name, v.zoom)] = r
    return out


CASES = [(n, z) for n in PLACES for z in (15, 19)]


@pytest.mark.parametrize(("name", "zoom"), CASES)
def test_image_size_and_nothing_aborted(shots, name, zoom):
    r = shots[(name, zoom)]
    assert r.image().shape == (768, 1366, 3)
    assert r.aborted == []


@pytest.mark.parametrize(("name", "zoom"), CASES)
def test_markers_where_the_projection_puts_them(shots, name, zoom):
    r = shots[(name, zoom)]
    img = r.image()
    for marker, rgb, reported in zip(
        r.view.markers, (BLUE_MARKER, RED_MARKER), r.markers_px, strict=True
    ):
        px, py = predicted(r.view, marker.lat, marker.lon)
        assert abs(reported[0] - px) <= 1 and abs(reported[1] - py) <= 1
        cx, cy = pin_centroid(img, rgb, (px, py))
        assert abs(cx - px) <= 3, f"{marker.colour} pin off by {cx - px:.1f} px across"
        assert 12 <= py - cy <= 32, f"{marker.colour} pin body not above its tip ({py - cy:.1f})"


@pytest.mark.parametrize(("name", "zoom"), CASES)
def test_path_drawn_in_blue_along_its_projection(shots, name, zoom):
    r = shots[(name, zoom)]
    img = r.image()
    pts = [predicted(r.view, *p) for p in r.view.paths[0].points]
    markers = [predicted(r.view, m.lat, m.lon) for m in r.view.markers]
    checked = hits = 0
    for (x1, y1), (x2, y2) in itertools.pairwise(pts):
        for t in np.linspace(0.1, 0.9, 15):
            x, y = x1 + t * (x2 - x1), y1 + t * (y2 - y1)
            if any(abs(x - mx) < 20 and -50 < y - my < 5 for mx, my in markers):
                continue  # under a pin
            if not (0 <= x < 1366 and 0 <= y < 768):
                continue
            checked += 1
            patch = img[int(y) - 1 : int(y) + 2, int(x) - 1 : int(x) + 2]
            hits += bool(near(patch, PATH_RGB, tol=30).any())
    assert checked >= 5 and hits == checked, f"{hits}/{checked} path samples are blue"


@pytest.mark.parametrize(("name", "zoom"), CASES)
def test_scale_bar_and_attribution(shots, name, zoom):
    r = shots[(name, zoom)]
    img = r.image()
    assert len(r.scale_text) == 2
    assert r.scale_text[0].endswith(("m", "km")) and r.scale_text[1].endswith(("ft", "mi"))
    assert "© OpenStreetMap contributors" in r.attribution
    # the scale bar's box: bottom left, light background with dark text and border
    corner = img[700:768, 0:160]
    assert (corner.sum(axis=-1) < 250).sum() > 60, "no dark scale-bar strokes bottom left"
    # the attribution: bottom right, text pixels on a light box
    strip = img[748:768, 1000:1366]
    assert (strip.sum(axis=-1) < 350).sum() > 80, "no attribution text bottom right"


def test_water_in_a_coastal_view(shots):
    img = shots[("monaco.osm.pbf", 15)].image()
    share = near(img, WATER_RGB, tol=6).mean()
    assert share > 0.15, f"only {share:.1%} water in a view of Monaco's coast"
    inland = shots[("london-moorgate.osm.pbf", 19)].image()
    assert near(inland, WATER_RGB, tol=6).mean() < 0.02


def test_same_inputs_same_pixels(engine_for, shots):
    eng = engine_for("monaco.osm.pbf")
    again = eng.render(view_for("monaco.osm.pbf", 19))
    assert np.array_equal(again.image(), shots[("monaco.osm.pbf", 19)].image())


def test_clipped_extract_warns_with_counts(cluster, cache, carto_files, caplog):
    caplog.set_level(logging.WARNING)
    eng = MapEngine(
        extract_path("san-jose-downtown.osm"), carto_files=carto_files, cache=cache, cluster=cluster
    )
    assert "125 of" in caplog.text and f"dropped {eng.extract.report.dropped} ways" in caplog.text
    r = eng.render(View.make((37.3377, -121.8867), 17, markers=[Marker(37.3377, -121.8867, "red")]))
    assert r.image().shape == (768, 1366, 3) and r.aborted == []


def test_missing_asset_is_an_aborted_request_not_a_grey_map(engine_for, tmp_path, monkeypatch):
    # a node_modules without leaflet.awesome-markers: its files must be reported, not skipped
    from cartoqa.settings import assets_dir

    real = assets_dir()
    fake = tmp_path / "node_modules"
    fake.mkdir()
    for entry in real.iterdir():
        if entry.name != "leaflet.awesome-markers":
            (fake / entry.name).symlink_to(entry)
    monkeypatch.setenv("CARTOQA_ASSETS", str(fake))
    eng = engine_for("monaco.osm.pbf")
    view = view_for("monaco.osm.pbf", 17)
    with pytest.raises(RenderStackError, match="leaflet.awesome-markers"):
        eng.render(view)
    [lenient] = eng.render_many([view], strict=False, progress=False)
    assert any("awesome-markers" in u for u in lenient.aborted)
    assert os.environ["CARTOQA_ASSETS"] == str(fake)


def test_a_view_outside_the_extract_is_refused(engine_for):
    from cartoqa.errors import MapDataError

    eng = engine_for("monaco.osm.pbf")
    with pytest.raises(MapDataError, match="outside the extract monaco.*would be empty"):
        eng.render(View.make((48.8566, 2.3522), 17))  # Paris


def test_make_tiles_renders_a_metatile_once_for_the_tiles_asked(engine_for, tmp_path):
    from cartoqa.errors import RenderStackError
    from maps.tiles import TileRenderer

    eng = engine_for("monaco.osm.pbf")
    x, y = (int(v // 256) for v in world_pixel(43.7384, 7.4246, 18))
    x0, y0 = x - x % 8, y - y % 8
    r = TileRenderer(eng.style, eng.database, cache=tmp_path)
    r.make_tiles(18, [(x0, y0), (x0 + 1, y0), (x0, y0 + 7)])
    assert r.rendered_metatiles == 1
    assert sorted(p.name for p in (tmp_path / "tiles").rglob("*.png")) == sorted(
        [f"{y0}.png", f"{y0}.png", f"{y0 + 7}.png"]
    )
    r.tile(18, x0 + 1, y0)
    assert r.rendered_metatiles == 1  # from the disk cache
    with pytest.raises(RenderStackError, match="not all in one metatile"):
        r.make_tiles(18, [(x0 + 2, y0), (x0 + 8, y0)])


def test_the_headless_shell_is_preferred_and_renders_like_the_full_browser(
    engine_for, shots, monkeypatch
):
    import shutil

    from cartoqa.errors import RenderStackError
    from maps.browser import chromium_path

    monkeypatch.delenv("CARTOQA_CHROMIUM", raising=False)
    if shutil.which("chromium-headless-shell") is None or shutil.which("chromium") is None:
        pytest.skip("needs both Debian packages: chromium-headless-shell and chromium")
    assert chromium_path() == shutil.which("chromium-headless-shell")
    # the full browser draws the same map: markers, path and scale bar in the same places and
    # every pixel but a few on the markers' glyph edges alike
    monkeypatch.setenv("CARTOQA_CHROMIUM", shutil.which("chromium"))
    view = view_for("monaco.osm.pbf", 19)
    full = engine_for("monaco.osm.pbf").render(view)
    shell = shots[("monaco.osm.pbf", 19)]
    assert full.markers_px == shell.markers_px and full.scale_text == shell.scale_text
    differ = (full.image() != shell.image()).any(axis=2)
    assert differ.mean() < 0.001, f"{differ.sum()} pixels differ"
    monkeypatch.setenv("CARTOQA_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(RenderStackError, match="CARTOQA_CHROMIUM=/nonexistent/chromium"):
        chromium_path()
