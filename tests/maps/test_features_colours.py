"""The colour matching of the coded render (``maps.feature_pixels._near_colours``): a pixel a unit
off a code colour in a channel is that code's (text drawn with a halo of its own colour
composes so), an exact match wins over a near one, and a pixel two codes reach alike is
nobody's."""

from __future__ import annotations

import numpy as np

from maps.feature_pixels import COLOUR_TOLERANCE, _near_colours


def _owner(values: np.ndarray, which: np.ndarray, pixel: int) -> int | None:
    at = int(np.searchsorted(values, pixel))
    if at < len(values) and values[at] == pixel:
        return int(which[at])
    return None


def _word(r: int, g: int, b: int) -> int:
    return r | g << 8 | b << 16


def test_a_pixel_a_unit_off_in_each_channel_is_the_codes_and_two_units_off_is_not():
    a = _word(0x53, 0x0A, 0x68)
    values, which = _near_colours([a])
    assert _owner(values, which, a) == 0
    assert _owner(values, which, _word(0x54, 0x0B, 0x69)) == 0  # seen on a small label
    assert _owner(values, which, _word(0x52, 0x09, 0x67)) == 0
    assert _owner(values, which, _word(0x55, 0x0A, 0x68)) is None
    assert len(values) == (2 * COLOUR_TOLERANCE + 1) ** 3


def test_channels_do_not_wrap_into_each_other():
    values, which = _near_colours([_word(0xFF, 0x00, 0x10)])
    assert _owner(values, which, _word(0x00, 0x01, 0x10)) is None  # 0xFF + 1 is no 0x00
    assert len(values) == 2 * 2 * 3  # R in {FE, FF}, G in {00, 01}, B in {0F, 10, 11}


def test_an_exact_match_wins_and_a_shared_near_pixel_is_nobodys():
    a, b = _word(100, 100, 100), _word(101, 100, 100)
    values, which = _near_colours([a, b])
    assert _owner(values, which, a) == 0 and _owner(values, which, b) == 1
    assert _owner(values, which, _word(100, 101, 100)) == -1  # within 1 of both
    assert _owner(values, which, _word(99, 100, 100)) == 0  # only a reaches it
    # the same colour twice (two objects under one salt): nobody's, exact or not
    values, which = _near_colours([a, a])
    assert _owner(values, which, a) == -1
