"""Web Mercator pixel geometry of slippy-map tiles (256 px, zoom z: 256·2^z px around the world)."""

from __future__ import annotations

import math

from cartoqa.geodesy import from_web_mercator, to_web_mercator

__all__ = [
    "HALF_WORLD_M",
    "TILE_PX",
    "metres_per_pixel",
    "pixel_box",
    "pixel_to_lat_lon",
    "pixel_to_m",
    "tile_bounds_m",
    "world_pixel",
]

TILE_PX = 256
HALF_WORLD_M = math.pi * 6378137.0  # half the Web Mercator world width, metres


def metres_per_pixel(zoom: float) -> float:
    """Projected metres per pixel at ``zoom`` (Web Mercator units, true only at the equator)."""
    return 2 * HALF_WORLD_M / (TILE_PX * 2**zoom)


def world_pixel(lat: float, lon: float, zoom: float) -> tuple[float, float]:
    """Global pixel coordinates (x right, y down) of a point at ``zoom``."""
    x, y = to_web_mercator(lat, lon)
    res = metres_per_pixel(zoom)
    return (x + HALF_WORLD_M) / res, (HALF_WORLD_M - y) / res


def tile_bounds_m(
    z: int, x: int, y: int, nx: int = 1, ny: int = 1
) -> tuple[float, float, float, float]:
    """(minx, miny, maxx, maxy) in EPSG:3857 metres of the block of nx × ny tiles at (x, y)."""
    size = 2 * HALF_WORLD_M / 2**z
    minx = -HALF_WORLD_M + x * size
    maxy = HALF_WORLD_M - y * size
    return minx, maxy - ny * size, minx + nx * size, maxy


def pixel_to_m(px: float, py: float, zoom: float) -> tuple[float, float]:
    """EPSG:3857 (x, y) metres of a global pixel at ``zoom``."""
    res = metres_per_pixel(zoom)
    return px * res - HALF_WORLD_M, HALF_WORLD_M - py * res


def pixel_to_lat_lon(px: float, py: float, zoom: float) -> tuple[float, float]:
    """(lat, lon) of a global pixel at ``zoom``."""
    lat, lon = from_web_mercator(*pixel_to_m(px, py, zoom))
    return float(lat), float(lon)


def pixel_box(
    center: tuple[float, float], zoom: float, width: int, height: int
) -> tuple[float, float, float, float]:
    """Global pixels (x0, y0, x1, y1) of a width × height map centred on (lat, lon)."""
    cx, cy = world_pixel(*center, zoom)
    return cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2
