"""Polygons, bounding boxes, paths and RDP simplification."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyproj import Geod

from cartoqa.geodesy import (
    EARTH_RADIUS_KM,
    bounding_box,
    distance_km,
    path_length_m,
    polygon_area_km2,
    polygon_is_simple,
    polygon_perimeter_km,
    rdp_thresholds_km,
    simplify_rdp,
)
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps

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


def from_gnomonic(lat0, lon0, x, y):
    """Plane points (x, y) of the gnomonic projection about (lat0, lon0) back to degrees.

    Great circles are straight lines in that plane, so a simple planar polygon
    maps to a simple spherical one with the same vertex order.
    """
    p0, l0 = math.radians(lat0), math.radians(lon0)
    c = np.array([math.cos(p0) * math.cos(l0), math.cos(p0) * math.sin(l0), math.sin(p0)])
    e = np.array([-math.sin(l0), math.cos(l0), 0.0])
    n = np.array([-math.sin(p0) * math.cos(l0), -math.sin(p0) * math.sin(l0), math.cos(p0)])
    v = c + np.multiply.outer(np.asarray(x, float), e) + np.multiply.outer(np.asarray(y, float), n)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return np.degrees(np.arcsin(np.clip(v[:, 2], -1, 1))), np.degrees(np.arctan2(v[:, 1], v[:, 0]))


def star_polygon(lat0, lon0, angles, radii):
    """Vertices at these angles (sorted) and plane radii round the centre: star-shaped, simple."""
    a = np.sort(np.asarray(angles, float))
    r = np.asarray(radii, float)
    return from_gnomonic(lat0, lon0, r * np.cos(a), r * np.sin(a))


def comb_polygon(lat0, lon0, heights, width):
    """A comb (teeth of these heights on a bar), counter-clockwise: non-convex, not star-shaped."""
    k = len(heights)
    right = (2 * k - 1) * width
    xs, ys = [0.0, right], [0.0, 0.0]
    for i in reversed(range(k)):  # along the top from right to left: up, across, down each tooth
        x0, x1 = 2 * i * width, (2 * i + 1) * width
        top = width + heights[i]
        if i < k - 1:
            xs.append(x1), ys.append(width)
        xs += [x1, x0]
        ys += [top, top]
        if i > 0:
            xs.append(x0), ys.append(width)
    x, y = np.array(xs), np.array(ys)
    return from_gnomonic(lat0, lon0, x - right / 2, y - width)


def pyproj_area_km2(la, lo):
    return abs(SPHERE.polygon_area_perimeter(lo, la)[0]) / 1e6


@settings(max_examples=300, deadline=None)
@given(
    lat0=st.floats(-89, 89),
    lon0=st.floats(-180, 180),
    angles=st.lists(
        st.floats(0, 2 * math.pi, exclude_max=True), min_size=3, max_size=24, unique=True
    ),
    scale=st.floats(1e-4, 0.8),
    data=st.data(),
)
def test_star_shaped_polygons_match_pyproj_in_both_orientations(lat0, lon0, angles, scale, data):
    a = np.sort(angles)
    gaps = np.diff(np.append(a, a[0] + 2 * math.pi))
    if gaps.max() >= math.pi - 1e-3 or gaps.min() < 1e-6:
        return  # the centre must be inside, vertices distinct
    fr = data.draw(st.lists(st.floats(0.05, 1.0), min_size=len(a), max_size=len(a)))
    la, lo = star_polygon(lat0, lon0, a, scale * np.array(fr))
    want = pyproj_area_km2(la, lo)
    tol = dict(rel=1e-7, abs=1e-6)
    assert polygon_area_km2(la, lo) == pytest.approx(want, **tol)
    assert polygon_area_km2(la[::-1], lo[::-1]) == pytest.approx(want, **tol)
    assert polygon_area_km2(np.append(la, la[0]), np.append(lo, lo[0])) == pytest.approx(
        want, **tol
    )


@pytest.mark.parametrize("seed", range(20))
def test_random_combs_match_pyproj_from_every_starting_vertex(seed):
    rng = np.random.default_rng(seed)
    heights = rng.uniform(0.01, 0.3, int(rng.integers(2, 7)))
    la, lo = comb_polygon(rng.uniform(-70, 70), rng.uniform(-180, 180), heights, 0.02)
    want = pyproj_area_km2(la, lo)
    # an unsigned fan gives a different (too large) answer from most starting vertices
    for k in range(la.size):
        r_la, r_lo = np.roll(la, k), np.roll(lo, k)
        assert polygon_area_km2(r_la, r_lo) == pytest.approx(want, rel=1e-9)
        assert polygon_area_km2(r_la[::-1], r_lo[::-1]) == pytest.approx(want, rel=1e-9)


def test_concave_dart_is_the_sum_of_its_two_halves():
    # A-B-C-D with a reflex angle at C: the fan from B leaves the polygon
    la = np.array([0.0, 20.0, 8.0, 20.0])
    lo = np.array([0.0, -15.0, 0.0, 15.0])
    half = polygon_area_km2([0, 20, 8], [0, -15, 0]) + polygon_area_km2([0, 8, 20], [0, 0, 15])
    assert polygon_area_km2(la, lo) == pytest.approx(half, rel=1e-12)
    assert polygon_area_km2(np.roll(la, -1), np.roll(lo, -1)) == pytest.approx(half, rel=1e-12)
    assert polygon_area_km2(la, lo) == pytest.approx(pyproj_area_km2(la, lo), rel=1e-9)


def test_polygon_across_the_antimeridian():
    rng = np.random.default_rng(3)
    a, r = rng.uniform(0, 2 * math.pi, 9), rng.uniform(0.02, 0.08, 9)
    la, lo = star_polygon(-12.0, 179.5, a, r)
    assert lo.min() < -170 and lo.max() > 170  # the ring really crosses it
    area = polygon_area_km2(la, lo)
    assert area == pytest.approx(pyproj_area_km2(la, lo), rel=1e-9)
    # a turn about the polar axis keeps the area: the same ring centred on lon 0
    assert polygon_area_km2(la, (lo - 179.5 + 540) % 360 - 180) == pytest.approx(area, rel=1e-9)
    assert polygon_area_km2(la, lo + 360 * (lo < 0)) == pytest.approx(area, rel=1e-12)


def test_small_polygon_matches_the_planar_area():
    # an L-shaped lot about 100 m across at 50 N: the sphere is flat there to 1e-5
    x = np.array([0, 100, 100, 40, 40, 0], float)  # metres east
    y = np.array([0, 0, 30, 30, 90, 90], float)  # metres north
    lat0, lon0, r_m = 50.0, 8.0, EARTH_RADIUS_KM * 1000
    la = lat0 + np.degrees(y / r_m)
    lo = lon0 + np.degrees(x / (r_m * math.cos(math.radians(lat0))))
    planar_m2 = 100 * 30 + 40 * 60  # 5,400 m²
    for k in range(la.size):  # from (100, 0) a fan would leave the L
        r_la, r_lo = np.roll(la, -k), np.roll(lo, -k)
        assert polygon_area_km2(r_la, r_lo) * 1e6 == pytest.approx(planar_m2, rel=1e-5)
    assert polygon_area_km2(la, lo) == pytest.approx(pyproj_area_km2(la, lo), rel=1e-6)


def test_the_smaller_region_either_way_round():
    quarter = math.pi * EARTH_RADIUS_KM**2 / 2  # the octant: an eighth of the sphere
    assert polygon_area_km2([0, 90, 0], [0, 0, 90]) == pytest.approx(quarter, rel=1e-12)
    # a ring near a great circle: both regions close to a hemisphere, the smaller one wins
    la, lo = np.array([0, 5, 0, -2, 0.0]), np.array([0, 80, 170, 250, 300.0])
    area = polygon_area_km2(la, lo)
    assert area == pytest.approx(pyproj_area_km2(la, lo), rel=1e-9)
    assert area == pytest.approx(polygon_area_km2(la[::-1], lo[::-1]), rel=1e-12)
    assert area < 2 * math.pi * EARTH_RADIUS_KM**2
    assert polygon_area_km2([0, 0, 0, 0], [0, 90, 180, 270]) == pytest.approx(
        2 * math.pi * EARTH_RADIUS_KM**2, rel=1e-12
    )


def test_stored_polygon_truth_matches_pyproj_from_the_prompt(tmp_path):
    generate_gps(tmp_path / "ds", per_task=400, tasks=["polygon"])
    samples = [s for s in load_dataset(tmp_path / "ds") if s.task == "polygon"]
    assert len(samples) == 400
    vertex = re.compile(r"\((-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\)")
    for s in samples:
        pts = [(float(a), float(b)) for a, b in vertex.findall(s.prompt.text)]
        assert len(pts) >= 3, s.prompt.text
        la, lo = np.array(pts).T
        truth = s.ground_truth
        stored = truth.values["area_km2"] if hasattr(truth, "values") else truth.value
        assert stored == pytest.approx(pyproj_area_km2(la, lo), rel=1e-3), s.id


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


KM_PER_DEGREE = math.pi * EARTH_RADIUS_KM / 180


def _eastward_path(rng, n):
    """A path of n points heading east within a few km of (0, 0), where the sphere is flat
    to 1e-6 and the planar reference applies."""
    return np.cumsum(rng.normal(0, 0.004, n)), np.cumsum(np.abs(rng.normal(0.01, 0.004, n)))


def test_rdp_at_every_tolerance_agrees_with_the_textbook_algorithm():
    k = KM_PER_DEGREE
    rng = np.random.default_rng(5)
    for _ in range(100):
        # short paths (up to 32 points) are worked from one table, longer ones span by span
        la, lo = _eastward_path(rng, int(rng.integers(3, 60)))
        n = la.size
        for eps in (0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 5.0):
            assert simplify_rdp(la, lo, eps).tolist() == planar_rdp(lo * k, la * k, eps), (n, eps)


def test_polygon_is_simple_agrees_with_shapely_on_small_polygons():
    from shapely.geometry import Polygon

    rng = np.random.default_rng(11)
    simple = crossed = 0
    for _ in range(400):
        n = int(rng.integers(3, 7))
        # within a degree of the equator great circles are straight lines to 1e-5
        la, lo = rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n)
        want = Polygon(list(zip(lo, la, strict=True))).is_simple
        assert polygon_is_simple(la, lo) == want, (la.tolist(), lo.tolist())
        simple += want
        crossed += not want
    assert simple > 50 and crossed > 50


def test_a_polygon_simple_on_the_plane_of_degrees_can_cross_on_the_sphere():
    # a long east-west edge at 60 N bows north on the sphere, over the other edge
    la, lo = [60.0, 60.0, 61.0, 64.5], [0.0, 60.0, 30.0, 30.0]
    from shapely.geometry import Polygon

    assert Polygon(list(zip(lo, la, strict=True))).is_simple
    assert not polygon_is_simple(la, lo)


def test_rdp_thresholds_say_at_which_tolerance_each_point_goes():
    k = KM_PER_DEGREE
    rng = np.random.default_rng(8)
    for _ in range(60):
        la, lo = _eastward_path(rng, int(rng.integers(3, 20)))
        th = rdp_thresholds_km(la, lo)
        assert th[0] == th[-1] == np.inf
        for eps in (0.05, 0.2, 0.8):
            assert np.flatnonzero(th > eps).tolist() == planar_rdp(lo * k, la * k, eps)
