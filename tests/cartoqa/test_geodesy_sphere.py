"""Great-circle functions against pyproj.Geod and geographiclib on a sphere of R = 6371 km."""

import math

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from hypothesis import given, settings
from hypothesis import strategies as st
from pyproj import Geod

from cartoqa.geodesy import (
    EARTH_RADIUS_KM,
    compass_direction,
    cross_track_km,
    destination,
    distance_km,
    initial_bearing_deg,
    interpolate,
)

SPHERE = Geod(a=EARTH_RADIUS_KM * 1000, b=EARTH_RADIUS_KM * 1000)
GLIB = Geodesic(EARTH_RADIUS_KM * 1000, 0.0)
ARC_DEG_KM = EARTH_RADIUS_KM * math.pi / 180

lats = st.floats(-89.9, 89.9)
lons = st.floats(-180, 180)


def rand_points(n, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.uniform(-89, 89, n),
        rng.uniform(-180, 180, n),
        rng.uniform(-89, 89, n),
        rng.uniform(-180, 180, n),
    )


def test_distance_matches_pyproj_sphere_on_arrays():
    la1, lo1, la2, lo2 = rand_points(2000)
    _, _, dist_m = SPHERE.inv(lo1, la1, lo2, la2)
    ours = distance_km(la1, lo1, la2, lo2)
    assert isinstance(ours, np.ndarray) and ours.shape == (2000,)
    np.testing.assert_allclose(ours, dist_m / 1000, rtol=1e-9, atol=1e-6)


@given(lats, lons, lats, lons)
def test_distance_and_bearing_match_geographiclib(la1, lo1, la2, lo2):
    g = GLIB.Inverse(la1, lo1, la2, lo2)
    d = distance_km(la1, lo1, la2, lo2)
    assert isinstance(d, float)
    assert d == pytest.approx(g["s12"] / 1000, rel=1e-9, abs=1e-6)
    if 1.0 < d < math.pi * EARTH_RADIUS_KM - 1.0:  # azimuth is ill-defined at 0 and antipodes
        b = initial_bearing_deg(la1, lo1, la2, lo2)
        assert 0 <= b < 360
        diff = (b - g["azi1"] % 360 + 180) % 360 - 180
        assert abs(diff) < 1e-6


def test_scalar_array_and_broadcast_forms_agree():
    la1, lo1, la2, lo2 = rand_points(50_000, seed=11)  # spans several internal blocks
    arr = distance_km(la1, lo1, la2, lo2)
    scal = np.array(
        [distance_km(*p) for p in zip(la1[:300], lo1[:300], la2[:300], lo2[:300], strict=False)]
    )
    np.testing.assert_allclose(arr[:300], scal, rtol=1e-12)
    bc = distance_km(48.85, 2.35, la2, lo2)  # one point against many
    np.testing.assert_allclose(
        bc, [distance_km(48.85, 2.35, a, b) for a, b in zip(la2, lo2, strict=False)], rtol=1e-12
    )
    grid = distance_km(la1[:6].reshape(2, 3), lo1[:6].reshape(2, 3), 0.0, 0.0)
    assert grid.shape == (2, 3)
    assert distance_km(np.array([]), np.array([]), np.array([]), np.array([])).shape == (0,)


def test_tiny_distances_keep_their_precision():
    # 1 mm apart: no cancellation in the half-angle form
    d = distance_km(45.0, 7.0, 45.0 + 1e-8, 7.0)
    assert d == pytest.approx(1e-8 * math.pi / 180 * EARTH_RADIUS_KM, rel=1e-7)


def test_pole_to_pole_and_antipodes():
    assert distance_km(90, 0, -90, 0) == pytest.approx(math.pi * EARTH_RADIUS_KM)
    assert distance_km(0, 0, 0, 180) == pytest.approx(math.pi * EARTH_RADIUS_KM)
    assert distance_km(10, 20, -10, -160) == pytest.approx(math.pi * EARTH_RADIUS_KM)


def test_bearings_to_the_poles():
    assert initial_bearing_deg(10, 30, 90, 0) == pytest.approx(0.0)
    assert initial_bearing_deg(10, 30, -90, 0) == pytest.approx(180.0)


def test_antimeridian_crossing():
    assert distance_km(0, 179.5, 0, -179.5) == pytest.approx(ARC_DEG_KM)
    assert initial_bearing_deg(0, 179.5, 0, -179.5) == pytest.approx(90.0)
    assert initial_bearing_deg(0, -179.5, 0, 179.5) == pytest.approx(270.0)
    lat, lon = interpolate(0, 179.5, 0, -179.5, 0.5)
    assert lat == pytest.approx(0.0, abs=1e-12)
    assert abs(abs(lon) - 180.0) < 1e-9


def test_identical_points():
    assert distance_km(51.5, -0.12, 51.5, -0.12) == 0.0
    assert initial_bearing_deg(51.5, -0.12, 51.5, -0.12) == 0.0
    assert interpolate(51.5, -0.12, 51.5, -0.12, 0.3) == pytest.approx((51.5, -0.12))


def test_bearing_is_never_360():
    # a target a hair west of due north gives a bearing just under 360, never 360 itself
    b = initial_bearing_deg(0.0, 0.0, 10.0, -1e-15)
    assert 0 <= b < 360


@pytest.mark.parametrize(
    ("bearing", "name"),
    [
        (0, "N"),
        (22.4999, "N"),
        (22.5, "NE"),
        (67.5, "E"),
        (112.5, "SE"),
        (180, "S"),
        (202.5, "SW"),
        (247.5, "W"),
        (292.5, "NW"),
        (337.4999, "NW"),
        (337.5, "N"),
        (360, "N"),
        (-45, "NW"),
        (719, "N"),
    ],
)
def test_compass_eight_sectors(bearing, name):
    assert compass_direction(bearing) == name


def test_compass_four_sectors_and_arrays():
    assert compass_direction(44.9, points=4) == "N"
    assert compass_direction(45, points=4) == "E"
    assert list(compass_direction(np.array([0, 90, 180, 270]), points=4)) == ["N", "E", "S", "W"]
    with pytest.raises(ValueError, match="points=16"):
        compass_direction(10, points=16)


@given(lats, lons, lats, lons, st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]))
@settings(max_examples=200)
def test_interpolate_matches_geographiclib(la1, lo1, la2, lo2, f):
    d = distance_km(la1, lo1, la2, lo2)
    if d > math.pi * EARTH_RADIUS_KM - 10:
        return  # near-antipodal: the great circle is ill-conditioned
    line = GLIB.InverseLine(la1, lo1, la2, lo2)
    ref = line.Position(f * line.s13)
    lat, lon = interpolate(la1, lo1, la2, lo2, f)
    assert distance_km(lat, lon, ref["lat2"], ref["lon2"]) < 1e-6


def test_interpolate_arrays_of_fractions():
    lat, lon = interpolate(0, 0, 0, 90, np.array([0.0, 0.5, 1.0]))
    np.testing.assert_allclose(lat, 0, atol=1e-12)
    np.testing.assert_allclose(lon, [0, 45, 90], atol=1e-9)


def test_interpolate_antipodes_raises():
    with pytest.raises(ValueError, match="antipodal"):
        interpolate(0, 0, 0, 180, 0.5)


@given(lats, lons, st.floats(0, 359.99), st.floats(0, 15000))
def test_destination_matches_geographiclib(lat, lon, brg, dist):
    ref = GLIB.Direct(lat, lon, brg, dist * 1000)
    la2, lo2 = destination(lat, lon, brg, dist)
    assert distance_km(la2, lo2, ref["lat2"], ref["lon2"]) < 1e-6
    assert -180 <= lo2 < 180


def test_destination_then_distance_round_trip_on_arrays():
    rng = np.random.default_rng(3)
    lat, lon = rng.uniform(-80, 80, 500), rng.uniform(-180, 180, 500)
    brg, d = rng.uniform(0, 360, 500), rng.uniform(0, 5000, 500)
    la2, lo2 = destination(lat, lon, brg, d)
    np.testing.assert_allclose(distance_km(lat, lon, la2, lo2), d, atol=1e-6)


def test_cross_track_sign_and_size():
    # travelling east along the equator, north is on the left
    assert cross_track_km(1, 5, 0, 0, 0, 10) == pytest.approx(-ARC_DEG_KM, rel=1e-9)
    assert cross_track_km(-1, 5, 0, 0, 0, 10) == pytest.approx(ARC_DEG_KM, rel=1e-9)
    assert cross_track_km(0, 5, 0, 0, 0, 10) == pytest.approx(0, abs=1e-9)
    xs = cross_track_km(np.array([1.0, -2.0]), 5, 0, 0, 0, 10)
    np.testing.assert_allclose(xs, [-ARC_DEG_KM, 2 * ARC_DEG_KM], rtol=1e-9)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((91, 0, 0, 0), r"lat1=91\.0 is outside \[-90, 90\]"),
        ((0, 0, -90.5, 0), r"lat2=-90\.5"),
        ((float("nan"), 0, 0, 0), r"lat1 contains nan"),
        ((0, float("inf"), 0, 0), r"lon1 contains inf"),
        ((0, 400, 0, 0), r"lon1=400\.0 is outside"),
        ((np.zeros(3), 0, np.zeros(4), 0), r"shapes do not match: lat1 \(3,\).*lat2 \(4,\)"),
        (("abc", 0, 0, 0), r"lat1='abc' is not a number"),
    ],
)
def test_bad_input_names_argument_and_value(args, message):
    with pytest.raises(ValueError, match=message):
        distance_km(*args)


def test_array_lat_out_of_range_reports_first_bad_value():
    with pytest.raises(ValueError, match=r"lat=95\.0"):
        destination(np.array([10.0, 95.0, 100.0]), 0, 0, 10)


def test_one_point_floats_give_exactly_the_array_result():
    # four floats skip the array checks: the value of the 0-d array path, to the last bit
    la1, lo1, la2, lo2 = rand_points(2000, seed=21)
    brg, d = np.random.default_rng(22).uniform(-720, 720, 2000), np.linspace(-9000, 9000, 2000)
    for k in range(2000):
        p = (float(la1[k]), float(lo1[k]), float(la2[k]), float(lo2[k]))
        assert distance_km(*p) == distance_km(*(np.array(v) for v in p))
        assert distance_km(*(np.float64(v) for v in p)) == distance_km(*p)
        one = destination(p[0], p[1], float(brg[k]), float(d[k]))
        assert one == destination(np.array(p[0]), p[1], np.array(brg[k]), np.array(d[k]))
        assert all(type(v) is float for v in one)


@pytest.mark.parametrize(
    ("lat", "lon", "name"),
    [(91.0, 0.0, r"lat\w*=91\.0 is outside"), (float("nan"), 0.0, r"lat\w* contains nan"),
     (0.0, -400.0, r"lon\w*=-400\.0 is outside"), (0.0, float("inf"), r"lon\w* contains inf")],
)  # fmt: skip
def test_bad_floats_are_named_as_arrays_are(lat, lon, name):
    for args in ((lat, lon, 0.0, 0.0), (0.0, 0.0, lat, lon)):
        with pytest.raises(ValueError, match=name):
            distance_km(*args)
    with pytest.raises(ValueError, match=name):
        destination(lat, lon, 0.0, 1.0)


@pytest.mark.parametrize(("bearing", "km"), [(float("nan"), 1.0), (0.0, float("inf"))])
def test_destination_names_a_bad_bearing_or_distance(bearing, km):
    with pytest.raises(ValueError, match="bearing_deg contains nan|distance_km contains inf"):
        destination(10.0, 10.0, bearing, km)
