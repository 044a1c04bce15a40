"""evaluators.published.mml: the published MML parser, crashes and its denominators."""

from __future__ import annotations

import pytest

from evaluators.published import mml


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        (
            '{"road_1": "Oak Road", "road_2": "Elm Street"}',
            {"road_1": "Oak Road", "road_2": "Elm Street"},
        ),
        ('```json\n{"road_1": "A", "road_2": "B"}\n```<|eot|>', {"road_1": "A", "road_2": "B"}),
        ('{"road_1": "Jsonweg", "road_2": "json Lane"}', {"road_1": "Jsonweg", "road_2": " Lane"}),
        ("null", None),
        ("[1, 2]", [1, 2]),
        ("Oak Road and Elm Street", None),
        ("{'road_1': 'A', 'road_2': 'B'}", None),  # single quotes are not JSON
    ],
)
def test_parse(reply: str, value: object) -> None:
    assert mml.parse(reply) == value


def _rec(answer, colour="blue", zoom=17):
    return {
        "road_1": "Oak Road",
        "road_2": "Elm Street",
        "Marker_color": colour,
        "zoom_level": zoom,
        "Answer": answer,
    }


def test_item_either_order_exact_strings() -> None:
    assert mml.item("a", _rec({"road_1": "Elm Street", "road_2": "Oak Road"})).values == {
        "correct": 1.0,
        "answered": 1.0,
    }
    assert (
        mml.item("b", _rec({"road_1": "Oak road", "road_2": "Elm Street"})).values["correct"] == 0.0
    )
    it = mml.item("c", _rec({"road_1": "Oak Road", "road_2": "Elm Street"}, "red", 18))
    assert it.groups == {"colour": "red", "zoom": "18"}


def test_item_null_answer_not_answered() -> None:
    it = mml.item("a", _rec(None))
    assert it.values == {"correct": 0.0, "answered": 0.0} and it.crashed is None


@pytest.mark.parametrize(
    ("answer", "crash"),
    [
        ("Oak Road and Elm Street", "TypeError"),  # the raw reply, stored when unparsed
        (["Oak Road", "Elm Street"], "TypeError"),
        (5, "TypeError"),
        ({"road_1": "Oak Road"}, "KeyError: 'road_2'"),
        ({"roads": ["Oak Road", "Elm Street"]}, "KeyError: 'road_1'"),
    ],
)
def test_item_crashes(answer: object, crash: str) -> None:
    it = mml.item("a", _rec(answer))
    assert it.crashed is not None and it.crashed.startswith(crash)
    assert it.values == {"correct": 0.0, "answered": 1.0}


def test_item_wrong_first_road_never_reads_the_second() -> None:
    it = mml.item("a", _rec({"road_1": "Pine Way"}))
    assert it.crashed is None and it.values["correct"] == 0.0


def test_table_colour_denominator_is_half_the_files() -> None:
    right = {"road_1": "Oak Road", "road_2": "Elm Street"}
    recs = [
        ("1-blue.json", _rec(right, "blue", 17)),
        ("2-blue.json", _rec(right, "blue", 17)),
        ("3-blue.json", _rec(right, "blue", 18)),
        ("1-red.json", _rec("Oak Road", "red", 18)),  # crashed, answered
        ("2-red.json", _rec(None, "red", 19)),  # not answered: no zoom 19 row
    ]
    ev = mml.evaluate(recs)
    t = ev.table
    assert t["all"]["accuracy"] == pytest.approx(3 / 5)
    assert t["all"]["crashed"] == 1
    assert t["colour=blue"]["accuracy"] == pytest.approx(3 / 2.5)  # over 1
    assert t["colour=red"]["accuracy"] == 0.0
    assert t["zoom=17"]["accuracy"] == 1.0
    assert t["zoom=18"]["accuracy"] == pytest.approx(1 / 2)
    assert "zoom=19" not in t
    notes = " ".join(ev.notes)
    assert "half the number of files" in notes and "zoom 19" in notes
