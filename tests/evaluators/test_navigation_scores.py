"""MML and RLE scoring: parsing what models write, metrics against hand-computed values."""

import math

import pytest

from cartoqa.records import NumberTruth, RoadPairTruth
from evaluators import AnswerParseError
from evaluators.navigation import (
    grouped,
    mml_correct,
    parse_road_pair,
    r_squared,
    rle_metrics,
    rle_value,
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
