"""UTM and Web Mercator: against direct pyproj calls and the textbook formulas."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyproj import Transformer

from cartoqa.geodesy import (
    MAX_MERCATOR_LAT_DEG,
    from_utm,
    from_web_mercator,
    to_utm,
    to_web_mercator,
    utm_zone,
)

WGS84_A = 6378137.0


@pytest.mark.parametrize(
    ("lon", "zone"),
    [(-180, 1), (-174.0001, 1), (-174, 2), (0, 31), (2.35, 31), (179.999, 60), (180, 1), (359, 30)],
)
def test_zone_rule(lon, zone):
    assert utm_zone(lon) == zone


def test_to_utm_matches_pyproj_epsg_codes():
    # Paris, Sydney, Rio, Anchorage
    pts = [
        (48.8566, 2.3522, 32631),
        (-33.8688, 151.2093, 32756),
        (-22.9068, -43.1729, 32723),
        (61.2181, -149.9003, 32606),
    ]
    for lat, lon, epsg in pts:
        e, n = Transformer.from_crs(4326, epsg, always_xy=True).transform(lon, lat)
        u = to_utm(lat, lon)
        assert (u.easting_m, u.northing_m) == pytest.approx((e, n), abs=1e-6)
        assert u.zone == epsg % 100
        assert u.hemisphere == ("S" if lat < 0 else "N")


def test_southern_hemisphere_uses_false_northing():
    u = to_utm(-0.0001, 3.0)
    assert u.hemisphere == "S"
    assert u.northing_m == pytest.approx(10_000_000 - 11.06, abs=0.1)
    assert u.easting_m == pytest.approx(500_000, abs=1e-6)


def test_arrays_across_many_zones_round_trip():
    rng = np.random.default_rng(1)
    lat, lon = rng.uniform(-79, 83, 3000), rng.uniform(-180, 180, 3000)
    u = to_utm(lat, lon)
    assert u.easting_m.shape == (3000,)
    assert set(np.unique(u.hemisphere)) == {"N", "S"}
    la2, lo2 = from_utm(u.easting_m, u.northing_m, u.zone, u.hemisphere)
    np.testing.assert_allclose(la2, lat, atol=1e-7)
    np.testing.assert_allclose(lo2, lon, atol=1e-7)


def test_forced_zone():
    u = to_utm(48.8566, 2.3522, zone=30)
    assert u.zone == 30
    assert u.easting_m > 800_000  # far east of zone 30's central meridian
    with pytest.raises(ValueError, match="zone=61"):
        to_utm(0, 0, zone=61)
    with pytest.raises(ValueError, match="hemisphere='X'"):
        from_utm(500000, 0, 31, "X")


@given(st.floats(-MAX_MERCATOR_LAT_DEG, MAX_MERCATOR_LAT_DEG), st.floats(-180, 179.999999))
def test_web_mercator_textbook_formula_and_inverse(lat, lon):
    x, y = to_web_mercator(lat, lon)
    assert x == pytest.approx(WGS84_A * math.radians(lon), abs=1e-6)
    assert y == pytest.approx(
        WGS84_A * math.log(math.tan(math.pi / 4 + math.radians(lat) / 2)), abs=1e-5
    )
    la2, lo2 = from_web_mercator(x, y)
    assert la2 == pytest.approx(lat, abs=1e-9)
    assert lo2 == pytest.approx(lon, abs=1e-9)


def test_web_mercator_refuses_polar_latitudes():
    with pytest.raises(ValueError, match=r"lat=89\.0 is beyond Web Mercator"):
        to_web_mercator(np.array([10.0, 89.0]), 0)
