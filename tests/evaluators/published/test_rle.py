"""evaluators.published.rle: the published RLE parser, dropped answers and grouped table."""

from __future__ import annotations

import math

import pytest

from evaluators.published import rle


@pytest.mark.parametrize(
    ("reply", "result"),
    [
        ("625", "625"),
        ("625m", -1),  # no token float() accepts, no " is "
        ("The route is 625m long.", "625m"),  # the first token after " is ", kept as text
        ("The length is approximately 1,250 meters.", "1250"),
        ("The length is about 300 feet", "300"),
        ("-3000", "3000"),  # every "-" removed
        ("**450** meters", "450"),
        ("Roughly 12.5 m", "12.5"),
        ("I measured: 2 segments of 40", "2"),  # the first float in the first line
        ("About 100 feet, which converts to 30 meters", "100"),
        ("Roughly a hundred\nsteps, which converts to 30.5 m", "30.5"),
        ("No idea.", -1),
        ("The answer\n is 5", -1),  # " is " only looked for in the first line
        ("", -1),
        ("It is", -1),  # " is " needs a space after it... here it ends the line
    ],
)
def test_parse(reply: str, result: str | int) -> None:
    assert rle.parse(reply) == result


def test_parse_converts_without_space_raises() -> None:
    with pytest.raises(IndexError):
        rle.parse("Hmm, which converts to")


def _rec(result, truth=100.0, difficulty="Simple", unit="meters"):
    return {
        "Correct_answer": truth,
        "Result": result,
        "Measure": unit,
        "Difficulty": difficulty,
        "Response": str(result),
    }


def test_item_dropped_and_crashed() -> None:
    assert rle.item("a", _rec(-1)).values == {"true": 100.0, "pred": None}
    crashed = rle.item("b", _rec("625m"))
    assert crashed.values["pred"] is None
    assert crashed.crashed == "ValueError: could not convert string to float: '625m'"
    empty = rle.item("c", _rec(""))
    assert empty.crashed is not None and empty.values["pred"] is None
    ok = rle.item("d", _rec("3000", difficulty="Complex", unit="feet"))
    assert ok.values == {"true": 100.0, "pred": 3000.0}
    assert ok.groups == {"difficulty": "Complex", "unit": "feet"}


def test_table_groups_rounding_and_empty_group() -> None:
    recs = [
        ("1", _rec("110", 100.0)),
        ("2", _rec("190", 200.0)),
        ("3", _rec("330", 300.0)),
        ("4", _rec(-1, 50.0)),
        ("5", _rec("625m", 60.0)),
        ("6", _rec("40", 35.5, unit="feet")),
        ("7", _rec("10", 20.0, difficulty="Complex")),
        ("8", _rec("30", 25.0, difficulty="Complex")),
        ("9", _rec("12", 10.0, difficulty="Hard")),
    ]
    ev = rle.evaluate(recs)
    tab = ev.table
    assert list(tab) == ["all", "Simple meters", "Simple feet", "Complex meters", "Complex feet"]
    assert tab["all"] == {"n": 9, "dropped": 2, "crashed": 1, "drawn at random": 0}
    sm = tab["Simple meters"]
    assert sm["n"] == 5 and sm["dropped"] == 2
    true, pred = [100.0, 200.0, 300.0], [110.0, 190.0, 330.0]
    sse = sum((t - p) ** 2 for t, p in zip(true, pred, strict=True))
    assert sm["rmse"] == round(math.sqrt(sse / 3), 2)
    assert sm["mae"] == round(sum(abs(t - p) for t, p in zip(true, pred, strict=True)) / 3, 2)
    assert sm["mape"] == round(sum(abs(t - p) / t for t, p in zip(true, pred, strict=True)) / 3, 2)
    assert sm["r2"] == round(1 - sse / 20000.0, 2)
    assert math.isnan(tab["Simple feet"]["r2"])  # one value: r2 undefined
    assert tab["Simple feet"]["rmse"] == 4.5
    assert all(math.isnan(v) for k, v in tab["Complex feet"].items() if k not in ("n", "dropped"))
    assert tab["Complex meters"]["mape"] == round((10 / 20 + 5 / 25) / 2, 2)
    notes = " ".join(ev.notes)
    assert "Complex feet" in notes and "Out of scope" in notes and "625m" in notes
