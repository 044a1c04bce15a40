"""evaluators.published.srn: the published SRN scorer on stored records.

The map, (lat, lon) degrees::

    J (0.001, 0) -- East Road --- D (0.001, 0.001)   red marker at D
    |                              |
    North Street               Side Street           Lone Lane: L (0.002, 0.001) -- D
    |                              |                 (in no junction)
    O (0, 0) ---- South Lane ---- K (0, 0.001)
    blue marker at O

From heading 0: O->J is straight on, J->D a right turn; O->K a right turn, K->D a left turn.
"""

from __future__ import annotations

import math

import pytest

from evaluators.published import srn

S, L, R = "continue straight", "turn left", "turn right"
TRUTH = ["blue", S, "North Street", R, "East Road", "red"]
DETOUR = ["blue", R, "South Lane", L, "Side Street", "red"]
NODES = {1: (0.0, 0.0), 2: (0.001, 0.0), 3: (0.001, 0.001), 4: (0.0, 0.001), 7: (0.002, 0.001)}
ROADS = {
    "North Street": [1, 2],
    "East Road": [2, 3],
    "South Lane": [1, 4],
    "Side Street": [4, 3],
    "Lone Lane": [7, 3],
}
MEETS = {
    ("North Street", "East Road"): 2,
    ("North Street", "South Lane"): 1,
    ("South Lane", "Side Street"): 4,
    ("Side Street", "East Road"): 3,
}


def _pt(n: int) -> list:
    return [n, *NODES[n]]


ROAD_DICT = {name: {"0": [_pt(n) for n in nodes]} for name, nodes in ROADS.items()}
CONJ: dict[str, dict[str, list]] = {}
for (a, b), node in MEETS.items():
    CONJ.setdefault(a, {})[b] = [_pt(node)]
    CONJ.setdefault(b, {})[a] = [_pt(node)]


def _rec(answer, truth=TRUTH, zoom=17, **more):
    rec = {
        "route_directions": "[" + ", ".join(truth) + "]",
        "origin": _pt(1),
        "destination": _pt(3),
        "zoom_level": zoom,
        "Answer": answer,
    }
    rec.update(more)
    return rec


def _item(answer, **kw):
    return srn.item("r.json", _rec(answer, **kw), ROAD_DICT, CONJ)


@pytest.mark.parametrize(
    "reply",
    [
        "[blue, continue straight, North Street, turn right, East Road, red]",
        "**Answer:** [blue, continue straight, North Street, turn right, East Road, red]",
        "blue, continue straight, North Street, turn right, East Road, red<|eot|>",  # no brackets
        "Answer: [blue, turn right, North Street, continue straight, North Street, turn right,"
        " East Road, red]".replace("turn right, North", "continue straight, North"),
    ],
)
def test_parse(reply: str) -> None:
    assert srn.parse(reply) == TRUTH


def test_truth_items_split_a_road_name_holding_a_comma() -> None:
    assert srn.truth_items("[blue, turn left, Oak Road, West, red]") == [
        "blue",
        "turn left",
        "Oak Road",
        "West",
        "red",
    ]


def test_exact_and_detour() -> None:
    assert _item(list(TRUTH)).values == {"exact": 1.0, "step_accuracy": 1.0, "connected": 1.0}
    it = _item(list(DETOUR))
    assert it.values == {"exact": 0.0, "step_accuracy": 0.0, "connected": 1.0}
    assert it.crashed is None


def test_a_prefix_answer_is_exact() -> None:
    # compared up to the end of the shorter list: the published SR^2 counts it
    it = _item(["blue", S, "North Street"])
    assert it.values["exact"] == 1.0 and it.values["step_accuracy"] == pytest.approx(2 / 5)


def test_wrong_turn_not_connected() -> None:
    it = _item(["blue", L, "North Street", R, "East Road", "red"])
    assert it.values == {"exact": 0.0, "step_accuracy": 0.0, "connected": 0.0}
    assert it.crashed is None


def test_blue_red_crashes() -> None:
    it = _item(["blue", "red"])
    assert it.crashed is not None and it.crashed.startswith("IndexError")
    assert it.values == {"exact": 0.0, "step_accuracy": 0.0, "connected": 0.0}


def test_road_missing_from_junction_table_crashes() -> None:
    it = _item(["blue", S, "North Street", R, "Lone Lane", "red"])
    assert it.crashed is not None and it.crashed.startswith("KeyError")
    assert it.values["connected"] == 0.0
    assert it.values["step_accuracy"] == pytest.approx(3 / 5)


@pytest.mark.parametrize("missing", [True, False])
def test_missing_or_null_answer_crashes_as_the_empty_reply(missing: bool) -> None:
    rec = _rec(None)
    if missing:
        del rec["Answer"]
    it = srn.item("r.json", rec, ROAD_DICT, CONJ)
    assert it.crashed is not None
    assert it.values == {"exact": 0.0, "step_accuracy": pytest.approx(-1 / 5), "connected": 0.0}


def test_answer_not_led_by_blue_is_unclamped() -> None:
    it = _item(["North Street", "red"])
    assert it.values["step_accuracy"] == pytest.approx(-1 / 5)


def test_truth_with_a_comma_and_not_normalised() -> None:
    truth = ["blue", L, "Oak Road", "West", R, "East Road", "red"]  # "Oak Road, West"
    it = _item(["blue", L, "Oak Road, West", R, "East Road", "red"], truth=truth)
    assert it.values["exact"] == 0.0
    assert it.values["step_accuracy"] == pytest.approx(1 / 6)  # k = 2 of 7
    # a truth holding "continue straight" between equal roads is kept as it is
    truth2 = ["blue", L, "North Street", S, "North Street", R, "East Road", "red"]
    parsed = srn.parse(", ".join(truth2))
    assert parsed == ["blue", L, "North Street", R, "East Road", "red"]
    it2 = _item(parsed, truth=truth2)
    assert it2.values["exact"] == 0.0
    assert it2.values["step_accuracy"] == pytest.approx(2 / 7)


def test_table_zooms_and_notes() -> None:
    recs = [
        ("1.json", _rec(list(TRUTH), zoom=17)),
        ("2.json", _rec(list(DETOUR), zoom=17)),
        ("3.json", _rec(["blue", "red"], zoom=18)),
        ("4.json", _rec(list(TRUTH), zoom=16)),
    ]
    ev = srn.evaluate(
        recs,
        road_dicts=dict.fromkeys(dict(recs), ROAD_DICT),
        conjunctions=dict.fromkeys(dict(recs), CONJ),
    )
    t = ev.table
    assert list(t) == ["all", "zoom=17", "zoom=18", "zoom=19", "zoom=16"]
    assert t["all"]["n"] == 4 and t["all"]["crashed"] == 2
    assert t["all"]["SR2"] == 0.5
    assert t["all"]["aSA"] == pytest.approx((1 + 0 + 0 + 1) / 4)
    assert t["all"]["connectivity"] == pytest.approx(3 / 4)
    assert t["zoom=17"] == {"n": 2, "SR2": 0.5, "aSA": 0.5, "connectivity": 1.0}
    assert t["zoom=19"]["n"] == 0 and math.isnan(t["zoom=19"]["SR2"])
    assert ev.items[3].crashed is not None and ev.items[3].crashed.startswith("KeyError: 16")
    notes = " ".join(ev.notes)
    assert "zoom 19" in notes and "zoom=16" in notes


def test_route_directions_not_text_crashes() -> None:
    rec = _rec(list(TRUTH))
    rec["route_directions"] = list(TRUTH)
    it = srn.item("r.json", rec, ROAD_DICT, CONJ)
    assert it.crashed is not None and it.crashed.startswith("AttributeError")
    assert it.values["exact"] == 1.0
    del rec["route_directions"]
    gone = srn.item("r.json", rec, ROAD_DICT, CONJ)
    assert gone.crashed == "KeyError: 'route_directions'"
