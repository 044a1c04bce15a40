"""Web Mercator pixel geometry of slippy-map tiles (256 px, zoom z: 256·2^z px around the world)."""

from __future__ import annotations

import math

from cartoqa.geodesy import to_web_mercator

__all__ = ["HALF_WORLD_M", "TILE_PX", "metres_per_pixel", "tile_bounds_m", "world_pixel"]

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
