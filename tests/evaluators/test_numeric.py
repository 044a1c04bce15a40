"""Numbers out of model answers, and the numeric metrics."""

import math

import pytest

from evaluators import (
    AnswerParseError,
    final_answer_text,
    one_minus_mape,
    parse_number,
    tolerance_accuracy,
    within_tolerance,
)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("I think...\nFINAL ANSWER: 343.6 km", "343.6 km"),
        ("**FINAL ANSWER: 12 mi**", "12 mi"),
        ("final answer: B\nwait, FINAL ANSWER: C", "C"),
        ("no marker here\n\n  27 km  \n", "27 km"),
    ],
)
def test_final_answer_text(response, expected):
    assert final_answer_text(response) == expected


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("343.6 km", 343.6, "km"),
        ("1,234.5 kilometres", 1234.5, "km"),
        ("\u221212.5 m", -12.5, "m"),
        ("-7 ft", -7, "ft"),
        ("10,20", 10, None),  # two numbers, not 1020
        ("about 250 miles", 250, "mi"),
        ("45°", 45, "deg"),
        ("x2 = 3", 3, None),  # a digit inside a word is no number
    ],
)
def test_parse_number(text, value, unit):
    got = parse_number(text)
    assert got.value == value and got.unit == unit


def test_parse_number_without_a_number():
    with pytest.raises(AnswerParseError, match="no number in 'far away'"):
        parse_number("far away")
    with pytest.raises(AnswerParseError, match="empty"):
        final_answer_text("   ")


def test_tolerance_and_metrics():
    assert within_tolerance(104.9, 100, abs_tol=5, rel_tol=0.05)
    assert not within_tolerance(105.1, 100, abs_tol=5, rel_tol=0.05)
    assert within_tolerance(2099, 2000, abs_tol=5, rel_tol=0.05)
    assert not within_tolerance(float("nan"), 1.0, abs_tol=5)
    assert tolerance_accuracy([True, False, True, True]) == 0.75
    assert math.isnan(tolerance_accuracy([]))
    assert one_minus_mape([110, None, 300], [100, 50, 100]) == pytest.approx((0.9 + 0 + 0) / 3)
    with pytest.raises(ValueError, match="2 predictions for 1 truths"):
        one_minus_mape([1, 2], [1])
