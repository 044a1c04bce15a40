"""Polygons, bounding boxes, paths and RDP simplification."""

import math

import numpy as np
import pytest
from pyproj import Geod

from cartoqa.geodesy import (
    EARTH_RADIUS_KM,
    bounding_box,
    distance_km,
    path_length_m,
    polygon_area_km2,
    polygon_perimeter_km,
    simplify_rdp,
)

SPHERE = Geod(a=EARTH_RADIUS_KM * 1000, b=EARTH_RADIUS_KM * 1000)


def convex_polygon(center_lat, center_lon, radius_deg, n, seed):
    """Vertices on a small circle, in angular order: a convex polygon."""
    rng = np.random.default_rng(seed)
    angles = np.sort(rng.uniform(0, 2 * np.pi, n))
    return center_lat + radius_deg * np.sin(angles), center_lon + radius_deg * np.cos(angles)


@pytest.mark.parametrize(
    ("lat", "lon", "r", "n"),
    [(0, 0, 5, 3), (48, 2, 1, 6), (-33, 151, 10, 5), (60, 179, 3, 4), (-70, -60, 8, 8)],
)
def test_area_and_perimeter_match_pyproj_sphere(lat, lon, r, n):
    la, lo = convex_polygon(lat, lon, r, n, seed=n)
    area_m2, perim_m = SPHERE.polygon_area_perimeter(lo, la)
    assert polygon_area_km2(la, lo) == pytest.approx(abs(area_m2) / 1e6, rel=1e-7)
    assert polygon_perimeter_km(la, lo) == pytest.approx(perim_m / 1000, rel=1e-9)


def test_octant_triangle_is_an_eighth_of_the_sphere():
    area = polygon_area_km2([0, 0, 90], [0, 90, 0])
    assert area == pytest.approx(4 * math.pi * EARTH_RADIUS_KM**2 / 8, rel=1e-12)
    assert polygon_perimeter_km([0, 0, 90], [0, 90, 0]) == pytest.approx(
        3 * math.pi / 2 * EARTH_RADIUS_KM
    )


def test_closed_ring_and_orientation_do_not_change_area():
    la, lo = convex_polygon(10, 10, 2, 5, seed=1)
    a = polygon_area_km2(la, lo)
    assert polygon_area_km2(np.append(la, la[0]), np.append(lo, lo[0])) == pytest.approx(a)
    assert polygon_area_km2(la[::-1], lo[::-1]) == pytest.approx(a)


def test_polygon_needs_three_vertices():
    with pytest.raises(ValueError, match="at least 3"):
        polygon_area_km2([0, 1], [0, 1])
    with pytest.raises(ValueError, match="lats has 3 values and lons has 2"):
        polygon_perimeter_km([0, 1, 2], [0, 1])


def test_bounding_box_values():
    bb = bounding_box([10, -20, 30], [100, 110, 90])
    assert (bb.min_lat, bb.max_lat, bb.min_lon, bb.max_lon) == (-20, 30, 90, 110)
    assert (bb.center_lat, bb.center_lon) == (5, 100)
    assert (bb.centroid_lat, bb.centroid_lon) == pytest.approx((20 / 3, 100))
    assert bb.diagonal_km == pytest.approx(distance_km(-20, 90, 30, 110))


def test_path_length_matches_pyproj_line_length():
    rng = np.random.default_rng(7)
    la, lo = rng.uniform(-60, 60, 12), rng.uniform(-170, 170, 12)
    assert path_length_m(la, lo) == pytest.approx(SPHERE.line_length(lo, la), rel=1e-9)
    assert path_length_m([1.0], [2.0]) == 0.0


def planar_rdp(x, y, eps):
    """Textbook Douglas-Peucker on the plane, recursive, for reference."""

    def seg_dist(px, py, ax, ay, bx, by):
        dx, dy = bx - ax, by - ay
        if dx == dy == 0:
            return math.hypot(px - ax, py - ay)
        t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
        return math.hypot(px - ax - t * dx, py - ay - t * dy)

    def rec(i, j):
        best, idx = -1.0, None
        for k in range(i + 1, j):
            d = seg_dist(x[k], y[k], x[i], y[i], x[j], y[j])
            if d > best:
                best, idx = d, k
        if idx is not None and best > eps:
            return rec(i, idx)[:-1] + rec(idx, j)
        return [i, j]

    return rec(0, len(x) - 1)


@pytest.mark.parametrize("seed", range(8))
def test_rdp_agrees_with_planar_reference_near_the_equator(seed):
    # within a few km of (0, 0) the sphere is flat to 1e-6: km = degrees * pi R / 180
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 16))
    la = np.cumsum(rng.normal(0, 0.004, n))
    lo = np.cumsum(np.abs(rng.normal(0.01, 0.004, n)))
    k = math.pi * EARTH_RADIUS_KM / 180
    eps = float(rng.uniform(0.1, 0.8))
    ref = planar_rdp(lo * k, la * k, eps)
    assert simplify_rdp(la, lo, eps).tolist() == ref


def test_rdp_straight_meridian_keeps_only_ends():
    la = np.linspace(0, 10, 11)
    assert simplify_rdp(la, np.zeros(11), 0.5).tolist() == [0, 10]


def test_rdp_keeps_a_peak_above_epsilon():
    # middle point about 11 km north of the straight path
    la, lo = [0.0, 0.1, 0.0], [0.0, 0.5, 1.0]
    assert simplify_rdp(la, lo, 5.0).tolist() == [0, 1, 2]
    assert simplify_rdp(la, lo, 15.0).tolist() == [0, 2]


def test_rdp_short_paths_and_bad_epsilon():
    assert simplify_rdp([1.0], [1.0], 1).tolist() == [0]
    assert simplify_rdp([1.0, 2.0], [1.0, 2.0], 1).tolist() == [0, 1]
    with pytest.raises(ValueError, match="epsilon_km=-1.0 is negative"):
        simplify_rdp([0, 1, 2], [0, 1, 2], -1)
