"""A view refuses markers it would not draw whole (no rendering needed)."""

from __future__ import annotations

import random

import pytest

from cartoqa.errors import MapDataError
from cartoqa.tasks.views import MARGIN_PX, fit_center
from maps import Marker, View
from maps.page import PIN_BOX_PX
from maps.projection import pixel_to_lat_lon, world_pixel

CENTRE, ZOOM = (43.7384, 7.4246), 18
CX, CY = world_pixel(*CENTRE, ZOOM)
X0, Y0 = round(CX - 683), round(CY - 384)  # the image's top-left world pixel


def at(x: float, y: float) -> tuple[float, float]:
    """(lat, lon) of image pixel (x, y)."""
    return pixel_to_lat_lon(X0 + x, Y0 + y, ZOOM)


def view(x: float, y: float, colour: str = "blue") -> View:
    return View.make(CENTRE, ZOOM, markers=[Marker(*at(x, y), colour)])  # type: ignore[arg-type]


def test_a_marker_wholly_inside_is_drawn_where_the_projection_puts_it():
    left, top, right, bottom = PIN_BOX_PX
    for x, y in [(683, 384), (-left, -top), (1366 - right, 768 - bottom)]:
        v = view(x, y)
        px, py = v.pixel(v.markers[0].lat, v.markers[0].lon)
        assert abs(px - x) < 1e-6 and abs(py - y) < 1e-6


@pytest.mark.parametrize(
    ("x", "y", "says"),
    [
        (683, -40, "outside the image"),
        (1400, 384, "outside the image"),
        (683, 800, "outside the image"),
        (-3, 384, "outside the image"),
        (683, 20, "cut by the top edge"),
        (5, 384, "cut by the left edge"),
        (1360, 384, "cut by the right edge"),
        (683, 766, "cut by the bottom edge"),
        (4, 10, "cut by the left and top edge"),
    ],
)
def test_a_marker_not_drawn_whole_is_refused_with_its_pixel_and_the_bounds(x, y, says):
    with pytest.raises(MapDataError) as err:
        view(x, y, "red")
    msg = str(err.value)
    lat, lon = at(x, y)
    assert f"red marker at ({lat:.6f}, {lon:.6f}) falls at pixel ({x:.0f}, {y:.0f})" in msg
    assert says in msg
    s, w, n, e = View.make(CENTRE, ZOOM).bounds()
    assert f"shows ({s:.6f}, {w:.6f}) to ({n:.6f}, {e:.6f})" in msg
    assert "Move the centre" in msg and "zoom out" in msg


def test_the_task_builders_margin_keeps_every_marker_whole():
    # fit_center places markers at least MARGIN_PX from the edges: always accepted
    assert max(-PIN_BOX_PX[0], -PIN_BOX_PX[1], PIN_BOX_PX[2], PIN_BOX_PX[3]) <= MARGIN_PX
    rng = random.Random(3)
    box = (43.70, 7.38, 43.78, 7.46)
    made = 0
    for _ in range(200):
        a = (rng.uniform(43.735, 43.742), rng.uniform(7.42, 7.43))
        b = (a[0] + rng.uniform(-0.001, 0.001), a[1] + rng.uniform(-0.002, 0.002))
        c = fit_center([a, b], ZOOM, rng, extract_bounds=box)
        if c is not None:
            View.make(c, ZOOM, markers=[Marker(*a, "blue"), Marker(*b, "red")])
            made += 1
    assert made > 100
