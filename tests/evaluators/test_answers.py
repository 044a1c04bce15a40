"""Answer formats: what the oracle writes parses back and matches; model-style variants too.

The round trip of every task goes through its registered scorer (``cartoqa.scoring``), the
one production path; ``score_response`` reads by the ground truth's kind alone (how a task
without a scorer of its own is scored)."""

import pytest

from cartoqa.models.baselines import oracle_answer
from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    NumberTruth,
    Prompt,
    Provenance,
    RoadPairTruth,
    RouteTruth,
    Sample,
    TextTruth,
)
from cartoqa.scoring import score_sample
from evaluators import AnswerParseError
from evaluators.answers import answer_matches, parse_answer, score_response
from tests.cartoqa.model_data import CASES


def sample(task, truth, text="q?"):
    return Sample(
        id="s1",
        task=task,
        prompt=Prompt(text=text),
        ground_truth=truth,
        provenance=Provenance(generator="tests"),
    )


@pytest.mark.parametrize(("task", "truth", "question"), CASES, ids=[c[0] for c in CASES])
def test_every_kind_round_trips_through_format_parse_and_match(task, truth, question):
    s = sample(task, truth)
    text = oracle_answer(s)
    assert verdict(s, text) == (True, None)
    if task not in ("rle", "stmf_names"):  # these two are read by line position
        # the same answer after some reasoning still reads back
        assert verdict(s, "Let me look at the map carefully.\n" + text) == (True, None)


def verdict(s, text):
    """(correct, why) by the task's registered scorer, as ``cartoqa score`` gives it."""
    sc = score_sample(s, text)
    return sc.correct, sc.why


@pytest.mark.parametrize(("task", "truth", "question"), CASES, ids=[c[0] for c in CASES])
def test_a_wrong_or_empty_answer_is_not_scored_correct(task, truth, question):
    s = sample(task, truth)
    assert score_response(s, None) == (False, "no response")
    ok, why = score_response(s, "")
    assert not ok and why.startswith("unreadable")
    ok, why = score_response(s, "I cannot see the map, sorry.")
    assert not ok


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("FINAL ANSWER: **B**", "B"),
        ("FINAL ANSWER: (c)", "C"),
        ("FINAL ANSWER: Option D", "D"),
        ("FINAL ANSWER: A. bank", "A"),
        ("Reasoning...\nB)", "B"),
    ],
)
def test_choice_letters_in_the_ways_models_write_them(text, letter):
    assert parse_answer("choice", text) == letter


def test_yes_no_reads_the_word_not_a_prefix():
    assert parse_answer("boolean", "FINAL ANSWER: No.") is False
    assert parse_answer("boolean", "FINAL ANSWER: **yes**") is True
    assert parse_answer("boolean", "FINAL ANSWER: Yes, there are two.") is True
    for unclear in ("north of the river", "no idea", "not sure", "none"):
        with pytest.raises(AnswerParseError):
            parse_answer("boolean", f"FINAL ANSWER: {unclear}")


def test_numbers_in_another_unit_match_the_equivalent():
    s = sample("distance", NumberTruth(value=1609.344, unit="km", equivalents={"mi": 1000}))
    assert score_response(s, "FINAL ANSWER: 1,000 miles") == (True, None)
    assert score_response(s, "FINAL ANSWER: 1000 km")[0] is False
    assert score_response(s, "FINAL ANSWER: 1000 ft")[0] is False


def test_rle_reads_the_first_line():
    s = sample("rle", NumberTruth(value=250, unit="m"))
    assert verdict(s, "250 m\nThe path is about 2.5 scale bars (100 m each).")[0]
    assert not verdict(s, "300 m\nthen 250 m")[0]


def test_road_pairs_match_in_either_order_and_ignore_case():
    s = sample("mml", RoadPairTruth(road_1="Rue Grimaldi", road_2="Avenue de la Costa"))
    assert score_response(s, '{"road_1": "avenue de la costa", "road_2": "Rue Grimaldi"}')[0]
    assert not score_response(s, '{"road_1": "Rue Grimaldi", "road_2": "Rue Grimaldi"}')[0]


def test_routes_must_match_exactly_not_as_a_prefix():
    truth = RouteTruth(steps=["blue", "turn left", "A Street", "turn right", "B Road", "red"])
    s = sample("srn", truth)
    assert score_response(s, "[blue, turn left, A Street, turn right, B Road, red]")[0]
    assert not score_response(s, '["blue", "turn left", "A Street", "red"]')[0]
    assert not score_response(s, oracle_answer(s)[:-1] + ', "turn left", "C Lane"]')[0]


def test_text_answers_accept_listed_alternatives_and_case():
    s = sample("place_association", TextTruth(answer="Zürich", accepted=["Zurich"]))
    assert score_response(s, "FINAL ANSWER: zurich")[0]
    assert not score_response(s, "FINAL ANSWER: Geneva")[0]


def test_a_parsed_value_of_the_wrong_shape_is_wrong_not_a_crash():
    s = sample("mml", RoadPairTruth(road_1="a", road_2="b"))
    assert score_response(s, '{"road_1": ["a"], "road_2": 3}')[0] is False
    s = sample("stmf_presence", BooleanTruth(value=True))
    assert answer_matches(s.ground_truth, True)
    s = sample("mfs", ChoiceTruth(answer="A", options={"A": "x", "B": "y"}))
    assert score_response(s, "FINAL ANSWER: 42")[0] is False
