"""Issue 30: answers the default ("cartoqa") scorers misread, as an outside reviewer found
them (the "original" mode is not concerned: it keeps the published code's readings).

1. STMF count: hyphenated (or spaced) number words, "twenty-one", read whole.
2. STMF presence: markdown emphasis around yes/no ("*Yes*", "**No**", "_Yes_").
3. STMF names: a statement that nothing is named, shown or found is the empty list.
4. End-of-turn tokens ("<|eot|>", "<|eot_id|>", "<|im_end|>", "<|endoftext|>", "</s>")
   removed from every answer before any task's parsing.
5. RLE: a length is never negative: a "-" before the number is a list dash; a true minus
   sign (U+2212) makes the answer unreadable.
6. SRN: an answer without brackets reads.
7. SRN: "blue" and "red" are steps of their own wherever they appear.
"""

from __future__ import annotations

import pytest

from cartoqa.models.baselines import oracle_answer
from cartoqa.records import (
    BooleanTruth,
    CountTruth,
    FeatureTableTruth,
    NamesTruth,
    NumberTruth,
    Prompt,
    Provenance,
    RouteTruth,
    Sample,
)
from cartoqa.scoring import score_sample
from cartoqa.tasks.spec import get_task
from evaluators import AnswerParseError, numeric
from evaluators.answers import parse_yes_no
from evaluators.navigation import parse_route, rle_length, score_route
from evaluators.poi import (
    count_score,
    names_score,
    parse_count,
    parse_feature_map,
    parse_names,
    parse_presence,
    presence_score,
)

L, R, S = "turn left", "turn right", "continue straight"


def _sample(truth, task: str, id_: str = "s1") -> Sample:
    return Sample(
        id=id_,
        task=task,
        prompt=Prompt(text="q"),
        ground_truth=truth,
        provenance=Provenance(generator="tests"),
    )


def _count(value: int) -> Sample:
    return _sample(CountTruth(value=value, feature_type="bank"), "stmf_count")


def _presence(value: bool) -> Sample:
    return _sample(BooleanTruth(value=value, feature_type="bank"), "stmf_presence")


def _names(names: list[str]) -> Sample:
    return _sample(NamesTruth(names=names, feature_type="bank"), "stmf_names")


# ------------------------------------------------------------------ 1. number words


@pytest.mark.parametrize(
    "answer",
    [
        "twenty-one",
        "Twenty-one",
        "TWENTY-ONE",
        "twenty one",
        "twenty–one",  # an en dash
        "twenty-one (21)",
        "There are twenty-one banks on the map.",
        "**Twenty-one**",
        "I count twenty-one.",
    ],
)
def test_hyphenated_number_words_are_read_whole(answer):
    assert parse_count(_count(21), answer) == 21
    assert count_score(_count(21), answer).correct


@pytest.mark.parametrize(
    ("answer", "want"),
    [("thirty", 30), ("forty-two", 42), ("ninety-nine", 99), ("twenty", 20), ("seven", 7)],
)
def test_number_words_up_to_ninety_nine(answer, want):
    assert parse_count(_count(want), answer) == want


def test_a_hyphenated_word_and_another_count_as_alternatives_is_hedged():
    with pytest.raises(AnswerParseError, match="hedged"):
        parse_count(_count(21), "twenty-one or twenty-two")


def test_mtmf_counts_written_as_hyphenated_words():
    sample = _sample(FeatureTableTruth(features={}), "mtmf")
    got = parse_feature_map(sample, '{"bank": {"count": "twenty-one", "names": []}}')
    assert got["bank"]["count"] == 21


def test_the_original_mode_keeps_its_own_number_words():
    # the published reader drops the hyphen ("twentyone" is no number word of its converter),
    # and the original mode's reading is not this business
    assert get_task("stmf_count").scorer("original")(_count(21), "twenty-one").values["pred"] != 21


# ------------------------------------------------------------------ 2. emphasis around yes/no


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ("*Yes*", True),
        ("**No**", False),
        ("_Yes_", True),
        ("__No__", False),
        ("***Yes***", True),
        ("*No*, there is none.", False),
        ("Answer: *Yes*", True),
        ("- _No_", False),
    ],
)
def test_emphasis_around_yes_or_no_is_read(answer, want):
    assert parse_presence(_presence(want), answer) is want
    assert presence_score(_presence(want), answer).correct


@pytest.mark.parametrize(
    ("answer", "want"), [("*Yes*", True), ("**No**", False), ("_Yes_", True), ("__No__", False)]
)
def test_the_yes_no_answers_of_other_tasks_read_emphasis_alike(answer, want):
    assert parse_yes_no(answer) is want


# ------------------------------------------------------------------ 3. "no names" statements


@pytest.mark.parametrize(
    "answer",
    [
        "I am unable to identify any names",
        "I am unable to identify any names.",
        "I'm unable to identify any names on this map.",
        "I’m not able to read any names.",
        "I cannot identify any named banks.",
        "I can't see any names on the map.",
        "I could not find any banks with names.",
        "I don't see any names.",
        "Unable to identify any names.",
        "No names are visible.",
        "No named banks were found.",
        "None found.",
        "None visible",
        "Nothing is labelled.",
        "The map shows no named banks.",
        "**I am unable to identify any names.**",
        "I am unable to identify any names.\nThe labels are too small to read.",
    ],
)
def test_statements_that_nothing_is_named_are_the_empty_list(answer):
    assert parse_names(_names([]), answer) == []
    assert names_score(_names([]), answer).correct


@pytest.mark.parametrize(
    "answer", ["None Such Café", "Nothing Hill Bank", "No. 5 Bar", "Unable Street Pharmacy"]
)
def test_real_names_that_begin_like_a_statement_stay_names(answer):
    assert parse_names(_names([answer]), answer) == [answer]


def test_a_heading_that_says_none_found_but_lists_names_keeps_the_names():
    answer = "I couldn't find any other banks, but these are labelled:\nNordea\nDanske Bank"
    assert parse_names(_names(["Nordea", "Danske Bank"]), answer) == ["Nordea", "Danske Bank"]


# ------------------------------------------------------------------ 4. end-of-turn tokens


@pytest.mark.parametrize("token", ["<|eot|>", "<|eot_id|>", "<|im_end|>", "<|endoftext|>", "</s>"])
def test_end_of_turn_tokens_are_known(token):
    assert token in numeric.END_OF_TURN_TOKENS


@pytest.mark.parametrize("token", ["<|eot|>", "<|eot_id|>", "<|im_end|>", "<|endoftext|>", "</s>"])
def test_every_task_reads_its_oracle_answer_with_an_end_of_turn_token(every_task_samples, token):
    misread = []
    for sample in every_task_samples:
        answer = oracle_answer(sample)
        if answer is None or not score_sample(sample, answer).correct:
            continue
        for tail in (token, f"{token}\n", f"\n{token}"):
            if not score_sample(sample, answer + tail).correct:
                misread.append((sample.task, sample.id, answer + tail))
    assert not misread


@pytest.mark.parametrize(
    ("sample", "answer"),
    [
        (_names(["Nordea", "Danske Bank"]), "Nordea\nDanske Bank<|eot|>"),
        (_names(["Nordea"]), "Nordea<|eot_id|>"),
        (_presence(True), "Yes<|im_end|>"),
        (_count(3), "3</s>"),
    ],
)
def test_a_token_glued_to_the_answer_is_removed(sample, answer):
    assert score_sample(sample, answer).correct


def test_route_ending_in_a_token_reads():
    truth = RouteTruth(steps=["blue", L, "Oak Road", "red"])
    assert score_route(truth, "[blue, turn left, Oak Road, red]<|eot|>").exact
    assert score_route(truth, "blue, turn left, Oak Road, red<|eot_id|>").exact


# ------------------------------------------------------------------ 5. RLE signs

_RLE = NumberTruth(value=3000.0, unit="m", equivalents={"ft": 9842.52})


@pytest.mark.parametrize(
    "answer",
    ["-3000", "- 3000 m", "-3000 m\nThe route follows Main Street.", "– 3000", "Length: -3000 m"],
)
def test_a_dash_before_the_length_is_a_list_dash(answer):
    assert rle_length(_RLE, answer) == 3000.0


def test_a_true_minus_sign_makes_the_length_unreadable():
    # U+2212 is the minus sign proper, never a list dash: a negative length is no length
    with pytest.raises(AnswerParseError, match="negative"):
        rle_length(_RLE, "\u22123000")


def test_a_range_in_the_length_is_still_hedged():
    with pytest.raises(AnswerParseError, match="hedged"):
        rle_length(_RLE, "2900-3100 m")


# ------------------------------------------------------------------ 6, 7. SRN


_TRUTH = ["blue", L, "Oak Road", R, "Elm Street", "red"]


@pytest.mark.parametrize(
    "answer",
    [
        "blue, turn left, Oak Road, turn right, Elm Street, red",
        "Blue, Turn left, Oak Road, turn right, Elm Street, Red.",
        "The route is: blue, turn left, Oak Road, turn right, Elm Street, red",
        "Let me trace it.\nFINAL ANSWER: blue, turn left, Oak Road, turn right, Elm Street, red",
        "Answer: blue, turn left, Oak Road, turn right, Elm Street, red",
        '"blue", "turn left", "Oak Road", "turn right", "Elm Street", "red"',
    ],
)
def test_a_route_without_brackets_reads(answer):
    assert parse_route(answer) == _TRUTH
    assert score_route(RouteTruth(steps=_TRUTH), answer).exact


def test_a_route_without_brackets_or_blue_reads_as_one_that_left_out_blue():
    answer = "Answer: turn left, Oak Road, turn right, Elm Street, red"
    assert parse_route(answer) == _TRUTH[1:]
    assert score_route(RouteTruth(steps=_TRUTH), answer).exact


def test_an_answer_with_no_route_at_all_is_unreadable():
    with pytest.raises(AnswerParseError):
        parse_route("I cannot tell from this map.")


def test_red_in_the_middle_is_a_step_of_its_own():
    answer = "[blue, turn left, Oak Road, red, turn right, Elm Street, red]"
    assert parse_route(answer) == ["blue", L, "Oak Road", "red", R, "Elm Street", "red"]


def test_blue_in_the_middle_is_a_step_of_its_own():
    answer = "[blue, turn left, Oak Road, blue, turn right, Elm Street, red]"
    assert parse_route(answer) == ["blue", L, "Oak Road", "blue", R, "Elm Street", "red"]


def test_a_road_whose_name_has_a_comma_or_a_colour_word_stays_one_road():
    answer = "[blue, turn left, Boulevard Albert 1er, Monaco, turn right, Red Lion Street, red]"
    assert parse_route(answer) == [
        "blue",
        L,
        "Boulevard Albert 1er, Monaco",
        R,
        "Red Lion Street",
        "red",
    ]


def test_an_answer_that_goes_on_after_red_scores_its_prefix_but_is_not_exact():
    # the truth ends at red: an answer that reaches red and drives on is not the route
    # (SR^2 0), its steps up to red are all right (aSA 1), and it is not a drivable route
    # from blue to red ending there (connectivity: red mid-route is no action)
    truth = RouteTruth(steps=["blue", L, "Oak Road", "red"])
    sc = score_route(truth, "[blue, turn left, Oak Road, red, turn left, Elm Street, red]")
    assert not sc.exact
    assert sc.step_accuracy == 1.0
    assert score_route(truth, "[blue, turn left, Oak Road, red]").exact


def test_red_in_the_middle_is_not_a_connected_route():
    from tests.evaluators.test_hostile_answers import _cross

    route = ["blue", S, "North Street", R, "East Road", "red"]
    truth = RouteTruth(steps=route, network=_cross())
    assert score_route(
        truth, "[blue, continue straight, North Street, turn right, East Road, red]"
    ).connected
    sc = score_route(
        truth,
        "[blue, continue straight, North Street, turn right, East Road, red,"
        " turn left, East Road, red]",
    )
    assert (sc.exact, sc.step_accuracy, sc.connected) == (False, 1.0, False)
    assert "past the red marker" in sc.why
