"""Writing and reading coordinates as text."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cartoqa.geodesy import parse_coordinate, to_dms


def test_to_dms_format():
    assert to_dms(12.582416666, -98.118472222) == "12°34'56.7\"N, 98°07'06.5\"W"
    assert to_dms(-33.8688, 151.2093, precision=0) == "33°52'08\"S, 151°12'33\"E"
    assert to_dms(0, 0) == "0°00'00.0\"N, 0°00'00.0\"E"


def test_to_dms_rounding_carries():
    # 10.9999999 degrees: seconds round to 60.0 and must carry into degrees
    assert to_dms(10.9999999, 20.0) == "11°00'00.0\"N, 20°00'00.0\"E"


def test_to_dms_arrays():
    out = to_dms(np.array([1.5, -2.25]), np.array([3.0, 4.0]))
    assert out.tolist() == ["1°30'00.0\"N, 3°00'00.0\"E", "2°15'00.0\"S, 4°00'00.0\"E"]


@pytest.mark.parametrize(
    ("text", "lat", "lon"),
    [
        ("48.8566, 2.3522", 48.8566, 2.3522),
        ("48.8566 2.3522", 48.8566, 2.3522),
        ("-33.87, 151.21", -33.87, 151.21),
        ("\u221233.87, 151.21", -33.87, 151.21),
        ("33.87\u00b0 S, 151.21\u00b0 E", -33.87, 151.21),
        ("48°51'24\"N 2°21'08\"E", 48.856667, 2.352222),
        ("48°51′24″N, 2°21′08″W", 48.856667, -2.352222),
        ("48d51m24sN 2d21m8sE", 48.856667, 2.352222),
        ("48 51 24 N, 2 21 8 E", 48.856667, 2.352222),
        ("48 51 24 2 21 8", 48.856667, 2.352222),
        ("N 48°51.4' W 2°21.13'", 48.856667, -2.352167),
        ("2.3522E 48.8566N", 48.8566, 2.3522),
        ("S33.86 E151.2", -33.86, 151.2),
        ("33.86 S 151.2 E", -33.86, 151.2),
        ("33.86s 151.2e", -33.86, 151.2),
        ("North 10, West 20", 10, -20),
        ("48 deg 51 min 24 sec N, 2 deg 21 min 8 sec E", 48.856667, 2.352222),
        ("+40.7128; -74.0060", 40.7128, -74.006),
    ],
)
def test_parse_coordinate_forms(text, lat, lon):
    assert parse_coordinate(text) == pytest.approx((lat, lon), abs=1e-6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("hello", "unexpected 'h'"),
        ("91, 0", r"latitude=91\.0 is outside"),
        ("10, 200", "longitude 200.0 is outside"),
        ("10,20,30", "found 3 coordinate part"),
        ("-33 S, 151 E", "both a minus sign and 'S'"),
        ("48°61'N 2E", r"must be in \[0, 60\)"),
        ("10 N 20 N", "do not give one latitude"),
        ("5' 3°", "degrees are missing"),
    ],
)
def test_parse_coordinate_errors_name_the_text(text, message):
    with pytest.raises(ValueError, match=message):
        parse_coordinate(text)


@given(st.floats(-90, 90), st.floats(-180, 179.999))
def test_dms_round_trip(lat, lon):
    back = parse_coordinate(to_dms(lat, lon, precision=3))
    assert back == pytest.approx((lat, lon), abs=0.0006 / 3600 + 1e-12)
