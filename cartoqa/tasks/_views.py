"""Placing a view so that given points show with a margin, inside the extract."""

from __future__ import annotations

import random
from collections.abc import Sequence

from maps import HEIGHT_PX, WIDTH_PX
from maps.projection import pixel_box, pixel_to_lat_lon, world_pixel

__all__ = ["MARGIN_PX", "fit_center", "view_bounds", "view_pixels"]

#: the least distance from a marker or path to the image's edge (it also keeps them clear of
#: the zoom buttons, the scale bar and the attribution)
MARGIN_PX = 80


def fit_center(
    points: Sequence[tuple[float, float]],
    zoom: int,
    rng: random.Random,
    *,
    extract_bounds: tuple[float, float, float, float],
    margin_px: int = MARGIN_PX,
) -> tuple[float, float] | None:
    """A centre (lat, lon) at ``zoom`` that shows every point at least ``margin_px`` from the
    edge and keeps the whole view inside the extract; None when there is none.  The points are
    placed at a random spot within what the margin allows (not always in the middle)."""
    px = [world_pixel(lat, lon, zoom) for lat, lon in points]
    xs, ys = [p[0] for p in px], [p[1] for p in px]
    half_w, half_h = WIDTH_PX / 2 - margin_px, HEIGHT_PX / 2 - margin_px
    lo_x, hi_x = max(xs) - half_w, min(xs) + half_w
    lo_y, hi_y = max(ys) - half_h, min(ys) + half_h
    # the view must stay inside the extract
    s, w, n, e = extract_bounds
    ex0, ey0 = world_pixel(n, w, zoom)
    ex1, ey1 = world_pixel(s, e, zoom)
    lo_x, hi_x = max(lo_x, ex0 + WIDTH_PX / 2), min(hi_x, ex1 - WIDTH_PX / 2)
    lo_y, hi_y = max(lo_y, ey0 + HEIGHT_PX / 2), min(hi_y, ey1 - HEIGHT_PX / 2)
    if lo_x > hi_x or lo_y > hi_y:
        return None
    return pixel_to_lat_lon(rng.uniform(lo_x, hi_x), rng.uniform(lo_y, hi_y), zoom)


def view_pixels(
    center: tuple[float, float], zoom: int, points: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Where points fall in the image (Leaflet rounds the map's pixel origin)."""
    x0, y0, _, _ = pixel_box(center, zoom, WIDTH_PX, HEIGHT_PX)
    x0, y0 = round(x0), round(y0)
    out = []
    for lat, lon in points:
        x, y = world_pixel(lat, lon, zoom)
        out.append((x - x0, y - y0))
    return out


def view_bounds(center: tuple[float, float], zoom: int) -> tuple[float, float, float, float]:
    """(south, west, north, east) of the view."""
    x0, y0, x1, y1 = pixel_box(center, zoom, WIDTH_PX, HEIGHT_PX)
    north, west = pixel_to_lat_lon(x0, y0, zoom)
    south, east = pixel_to_lat_lon(x1, y1, zoom)
    return south, west, north, east
