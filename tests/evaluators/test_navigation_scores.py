"""MML, RLE and SRN scoring: parsing what models write, metrics against hand-computed values."""

import json
import math

import pytest

from cartoqa.records import NumberTruth, RoadEdge, RoadNetwork, RoadPairTruth, RouteTruth
from evaluators import AnswerParseError
from evaluators.navigation import (
    grouped,
    mml_correct,
    parse_road_pair,
    parse_route,
    r_squared,
    rle_metrics,
    rle_value,
    score_route,
)

PAIR = RoadPairTruth(road_1="Rue Grimaldi", road_2="Boulevard Albert 1er, Monaco")


@pytest.mark.parametrize(
    "answer",
    [
        '{"road_1": "Rue Grimaldi", "road_2": "Boulevard Albert 1er, Monaco"}',
        '```json\n{"road_1": "boulevard albert 1er, monaco", "road_2": "Rue Grimaldi"}\n```',
        "The marker is at a corner.\nFINAL ANSWER: Rue Grimaldi and Boulevard Albert 1er, Monaco",
        "FINAL ANSWER: **Rue Grimaldi** & Boulevard Albert 1er, Monaco",
    ],
)
def test_mml_pairs_match_in_either_order_in_the_ways_models_write_them(answer):
    assert mml_correct(PAIR, answer)


def test_mml_wrong_or_unreadable_pairs():
    assert not mml_correct(PAIR, '{"road_1": "Rue Grimaldi", "road_2": "Rue Grimaldi"}')
    assert not mml_correct(PAIR, "I cannot tell.")
    assert not mml_correct(PAIR, None)
    with pytest.raises(AnswerParseError):
        parse_road_pair("FINAL ANSWER: Rue Grimaldi")


def test_rle_reads_the_first_line_and_converts_the_other_unit():
    truth = NumberTruth(value=300.0, unit="m", equivalents={"ft": 984.252})
    assert rle_value(truth, "300 m\nabout three scale bars") == 300
    assert rle_value(truth, "984.252 ft\n") == pytest.approx(300)
    assert rle_value(truth, "1,200 m") == 1200
    assert rle_value(truth, "I am not sure\n300 m") is None
    assert rle_value(truth, "") is None


def test_rle_metrics_against_hand_computed_values():
    pairs = [(110.0, 100.0), (180.0, 200.0), (300.0, 300.0), (None, 400.0)]
    m = rle_metrics(pairs)
    assert m["n"] == 4 and m["unanswered"] == 1
    assert m["rmse"] == pytest.approx(math.sqrt((100 + 400 + 0) / 3))
    assert m["mae"] == pytest.approx(10)
    assert m["mape"] == pytest.approx((0.1 + 0.1 + 0) / 3)
    # r^2 = 1 - 500 / sum((t - 200)^2 for t in 100, 200, 300)
    assert m["r2"] == pytest.approx(1 - 500 / 20000)
    assert math.isnan(r_squared([1.0], [1.0]))
    assert math.isnan(rle_metrics([(None, 5.0)])["rmse"])


def test_grouped_reduces_each_group_and_all():
    items = [("a", 1), ("b", 2), ("a", 3)]
    out = grouped(items, key=lambda t: t[0], reduce=lambda xs: sum(x for _, x in xs))
    assert out == {"a": 4, "b": 2, "all": 6}


# ------------------------------------------------------------------ SRN, the correct mode

S, L, R = "continue straight", "turn left", "turn right"
ROUTE = ["blue", S, "North Street", R, "East Road", "red"]


def _cross() -> RouteTruth:
    """North Street north from the blue marker (1) to 2; East Road east from 2 to red (3)."""

    def two_way(u, v, heading):
        back = (heading + 180) % 360
        return [
            RoadEdge(u=u, v=v, length_m=100, heading_start=heading, heading_end=heading),
            RoadEdge(u=v, v=u, length_m=100, heading_start=back, heading_end=back),
        ]

    net = RoadNetwork(
        origin=1,
        destination=3,
        nodes={"1": (0.0, 0.0), "2": (0.001, 0.0), "3": (0.001, 0.001)},
        roads={"North Street": two_way(1, 2, 0), "East Road": two_way(2, 3, 90)},
        junctions={"East Road|North Street": [2]},
    )
    return RouteTruth(steps=ROUTE, network=net)


@pytest.mark.parametrize(
    "answer",
    [
        f"[{S}, North Street, {R}, East Road, red]",
        json.dumps(ROUTE[1:]),
        f"Route: [{S.upper()}, North Street, {R}, East Road, red]",
    ],
)
def test_an_answer_that_leaves_out_blue_is_read_as_if_it_began_with_it(answer):
    sc = score_route(_cross(), answer)
    assert (sc.exact, sc.step_accuracy, sc.connected) == (True, 1.0, True), sc.why
    assert parse_route(answer)[0] == S  # parsed as written: nothing before the first action


def test_an_answer_led_by_something_else_than_blue_or_an_action():
    sc = score_route(_cross(), f"[start, {S}, North Street, {R}, East Road, red]")
    assert (sc.exact, sc.step_accuracy, sc.connected) == (False, 0.0, False)
    # ... and one without red is not exact: red says the route arrives
    sc = score_route(_cross(), f"[blue, {S}, North Street, {R}, East Road]")
    assert (sc.exact, sc.step_accuracy, sc.connected) == (False, 4 / 5, False)


@pytest.mark.parametrize(
    ("answer", "exact", "accuracy", "connected"),
    [
        (json.dumps(ROUTE), True, 1.0, True),
        (f"[blue, {S}, north street, {R}, east road, red]", True, 1.0, True),  # case folded
        (f"[blue, {L}, North Street, {R}, East Road, red]", False, 0.0, False),  # first turn
        (f"[blue, {S}, North Street, {L}, East Road, red]", False, 2 / 5, False),
        (f"[blue, {S}, North Street]", False, 2 / 5, False),  # a prefix is not exact here
        ("I cannot tell.", False, 0.0, False),
    ],
)
def test_answers_led_by_blue_score_as_before(answer, exact, accuracy, connected):
    sc = score_route(_cross(), answer)
    assert (sc.exact, sc.connected) == (exact, connected), sc.why
    assert sc.step_accuracy == pytest.approx(accuracy)
    assert 0.0 <= sc.step_accuracy <= 1.0
