"""MFS scoring: what models write, the default rule, and the published arithmetic
("original" mode) recomputed by hand."""

from __future__ import annotations

import math
import random

import pytest

from cartoqa.records import ChoiceTruth, Metadata, Prompt, Provenance, Sample, SampleScore
from evaluators import AnswerParseError
from evaluators.mfs import (
    format_mfs,
    mfs_metrics,
    mfs_score,
    mfs_score_original,
    parse_mfs,
)
from evaluators.poi import ORIGINAL_SEED

OPTIONS = {"A": "Road", "B": "Cafe", "C": "Bank", "D": "Fast food", "E": "Park"}


def mfs(answer: str = "C", id_: str = "mfs-1", options: dict[str, str] | None = None) -> Sample:
    return Sample(
        id=id_,
        task="mfs",
        prompt=Prompt(
            text="Which map feature is this? A) Road B) Cafe C) Bank D) Fast food E) Park"
        ),
        ground_truth=ChoiceTruth(answer=answer, options=options or OPTIONS),
        provenance=Provenance(generator="tests"),
        metadata=Metadata(category="symbol"),
    )


def _drawn(id_: str, letters: str = "ABCDE") -> str:
    """The original mode's fall-back, by its stated rule."""
    return random.Random(f"{ORIGINAL_SEED}:{id_}").choice(sorted(letters))


# ------------------------------------------------------------------ default mode: reading


@pytest.mark.parametrize(
    "answer",
    [
        "C",
        "(C)",
        "C) Bank",
        "C: Bank",
        "c) bank",
        "C.",
        "**C**",
        "[C]",
        "[[[C]]]",
        "\\boxed{C}",
        "Option C",
        "The answer is C.",
        "Answer: C",
        "**Answer:** (C)",
        "<think>It could be A. Or B? No: the dollar sign means a bank.</think>\nC",
        "<think>A</think>The answer is C.",
        "FINAL ANSWER: C",
        "The symbol is a dollar sign. FINAL ANSWER: **C**",
        "The icon shows a dollar sign, as banks are drawn.\n\nC",
        "Looking at the symbol, which shows a dollar sign, I'd say C.",
        "I think C",
        "The correct answer is C) Bank.",
        "The answer is C, not A (option A is a road).",
        "C\n\nThe dollar sign is a bank; A would be a line and B a cup.",
        "C) Bank\n\nExplanation: the dollar sign marks a bank, not D) Fast food.",
        "Bank",
        "bank.",
        "BANK",
        "It is a bank.",
        "The answer is a bank.",
        "A bank",
        "FINAL ANSWER: a bank",
        "FINAL ANSWER: Bank",
        "c",
        "  c  ",
    ],
)
def test_reads_what_models_write(answer):
    assert parse_mfs(mfs("C"), answer) == "C"
    sc = mfs_score(mfs("C"), answer)
    assert sc.correct is True and sc.parsed == "C" and sc.why is None
    assert sc.values == {"correct": 1.0, "unanswered": 0.0}


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ("Fast food", "D"),
        ("fast-food", "D"),
        ("E) Park", "E"),
        ("a", "A"),
        ("A", "A"),
        ("The answer is C. Wait: the answer is D.", "D"),  # the last statement wins
        ("C) Cafe", "C"),  # a letter and another option's text: the letter wins
    ],
)
def test_reads_other_options(answer, want):
    assert parse_mfs(mfs("C"), answer) == want


def test_a_wrong_answer():
    sc = mfs_score(mfs("C"), "B) Cafe")
    assert sc.correct is False and sc.parsed == "B" and sc.why == "wrong"
    assert sc.values == {"correct": 0.0, "unanswered": 0.0}


def test_options_need_not_be_a_to_e():
    sample = mfs("B", options={"A": "Bank", "B": "Cafe"})
    assert parse_mfs(sample, "Cafe") == "B"
    with pytest.raises(AnswerParseError):
        parse_mfs(sample, "C")  # a letter, but no option of this sample


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   \n\t ",
        "F",
        "The answer is F.",
        "I'm not sure.",
        "Not a bank.",
        "<think>C</think>",  # nothing outside the reasoning
        "<think>the answer is C",  # a block never closed: all reasoning
        "A) Road\nB) Cafe\nC) Bank\nD) Fast food\nE) Park",  # the options echoed: none chosen
    ],
)
def test_unreadable(answer):
    with pytest.raises(AnswerParseError):
        parse_mfs(mfs("C"), answer)
    sc = mfs_score(mfs("C"), answer)
    assert sc.correct is False and sc.parsed is None and sc.why.startswith("unreadable: ")
    assert sc.values == {"correct": 0.0, "unanswered": 1.0}


def test_no_response():
    sc = mfs_score(mfs("C"), None)
    assert sc.correct is False and sc.why == "no response" and sc.parsed is None
    assert sc.values == {"correct": 0.0, "unanswered": 1.0}


@pytest.mark.parametrize(
    "answer",
    [
        "C" * (1 << 20),  # 1 MiB: over MAX_ANSWER_CHARS
        "x" * 999_999,  # just under it, one line
        "a" * 999_999,
        "\n" * 999_999,
        "C\n" * 499_999,  # more lines than MAX_LINES
        "[" * 400_000 + "]" * 400_000,
        "(" * 400_000 + "C" + ")" * 400_000,
        "{" * 300_000 + "}" * 300_000,
        "answer" + " " * 900_000,
        "the answer is " * 70_000,
        "correct option" + " " * 900_000 + "x",
        "<think>" * 140_000,
        "The symbol is " + "very " * 190_000 + "bank",
        " " * 999_999,
    ],
)
def test_hostile_answers_are_unreadable(answer):
    with pytest.raises(AnswerParseError):
        parse_mfs(mfs("C"), answer)
    assert mfs_score(mfs("C"), answer).why.startswith("unreadable: ")


def test_hostile_answers_in_original_mode_finish():
    for answer in ("C" * (1 << 20), "correct answer is" + " " * 900_000, "[" * 999_999):
        sc = mfs_score_original(mfs("C", "h1"), answer)
        assert sc.parsed is not None and len(sc.parsed) == 1


def test_format_is_the_letter_and_reads_back():
    for letter in "ABCDE":
        sample = mfs(letter)
        assert format_mfs(sample) == letter
        assert mfs_score(sample, format_mfs(sample)).correct is True
        assert mfs_score_original(sample, format_mfs(sample)).correct is True


# ------------------------------------------------------------------ original mode


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        ("C", "C"),
        ("C) Bank", "C"),
        ("C\nBecause of the dollar sign.", "C"),
        ("Correct answer is B", "C"),  # case-sensitive phrase: the first character, "C"
        ("I think C", "I"),  # the first character, an option or not
        ("**C**", "*"),
        ("(C)", "("),
        ("c", "c"),  # not upper-cased
        (" C", " "),  # not stripped
        ("The answer is C.", "T"),
        ("Bank", "B"),
        ("F", "F"),
        ("The correct answer is C.", "C"),
        ("The correct answer is **(C)** Bank", "C"),
        ("Looking closely, the correct answer is: c", "c"),
        ("The correct answer is Bank.", "B"),  # the first letter after the phrase
        ("A: the correct answer is D", "D"),  # the phrase wins over the first character
        ("The correct answer is C, or rather the correct answer is D", "C"),  # its first
    ],
)
def test_original_reads_as_published(answer, read):
    sc = mfs_score_original(mfs("C"), answer)
    assert sc.parsed == read
    assert sc.values["drawn_at_random"] == 0.0 and sc.values["unanswered"] == 0.0
    assert sc.correct is (read == "C")
    assert sc.why == (None if read == "C" else "wrong")


def test_original_first_character_quirk_against_the_default():
    # a prose answer is wrong in the original mode (its first character is compared, not
    # drawn) and right in the default one
    sample = mfs("C")
    for answer in ("I think C", "The answer is C.", "**C**", "Answer: C"):
        original = mfs_score_original(sample, answer)
        assert original.correct is False and original.values["drawn_at_random"] == 0.0
        assert mfs_score(sample, answer).correct is True
    # and an answer whose first character happens to be the truth's is right there
    assert mfs_score_original(sample, "Cafe, I think").correct is True
    assert mfs_score(sample, "Cafe, I think").correct is False


@pytest.mark.parametrize("answer", ["", None, "The correct answer is", "the correct answer is 3."])
def test_original_draws_when_the_answer_is_empty(answer):
    sample = mfs("C", "mfs-7")
    sc = mfs_score_original(sample, answer)
    assert sc.values["drawn_at_random"] == 1.0 and sc.values["unanswered"] == 0.0
    assert sc.parsed == _drawn("mfs-7")
    assert sc.correct is (sc.parsed == "C")
    assert sc.why == (None if sc.correct else "wrong (drawn at random)")


def test_original_draw_is_seeded_per_sample():
    ids = [f"mfs-{i}" for i in range(40)]
    first = [mfs_score_original(mfs("C", i), None).parsed for i in ids]
    again = [mfs_score_original(mfs("C", i), "").parsed for i in ids]
    assert first == again  # stable across calls (and the same for no response and "")
    assert first == [_drawn(i) for i in ids]
    assert len(set(first)) > 1  # differs by sample id
    assert set(first) <= set("ABCDE")


def test_original_draws_from_the_sample_options():
    sample = mfs("B", "two-options", options={"A": "Bank", "B": "Cafe"})
    sc = mfs_score_original(sample, "")
    assert sc.parsed == _drawn("two-options", "AB")


# ------------------------------------------------------------------ metrics


def test_metrics_default_by_hand():
    answers = ["C", "B", "Bank", None, "F", "The answer is C."]
    rows = [(mfs("C", f"d{i}"), None) for i in range(len(answers))]
    rows = [(s, mfs_score(s, a)) for (s, _), a in zip(rows, answers, strict=True)]
    # right: "C", "Bank", "The answer is C." -> 3 of 6; unanswered: None, "F" -> 2
    assert mfs_metrics(rows) == {"n": 6, "accuracy": 0.5, "unanswered": 2}


def test_metrics_original_by_hand():
    ids = ["o0", "o1", "o2", "o3", "o4"]
    answers = ["C", "I think C", "", None, "B"]
    rows = [
        (mfs("C", i), mfs_score_original(mfs("C", i), a)) for i, a in zip(ids, answers, strict=True)
    ]
    # right: "C", and each drawn one ("" and None) that drew C
    right = 1 + sum(_drawn(i) == "C" for i in ("o2", "o3"))
    m = mfs_metrics(rows)
    assert m == {"n": 5, "accuracy": right / 5, "unanswered": 0, "drawn_at_random": 2}


def test_metrics_on_made_scores_and_none():
    def made(right: bool, **values: float) -> tuple[Sample, SampleScore]:
        return mfs("C"), SampleScore(correct=right, values=values)

    rows = [
        made(True, correct=1.0, unanswered=0.0, drawn_at_random=1.0),
        made(False, correct=0.0, unanswered=0.0, drawn_at_random=0.0),
        made(False, correct=0.0, unanswered=0.0, drawn_at_random=1.0),
        made(True, correct=1.0, unanswered=0.0, drawn_at_random=0.0),
    ]
    assert mfs_metrics(rows) == {"n": 4, "accuracy": 0.5, "unanswered": 0, "drawn_at_random": 2}
    empty = mfs_metrics([])
    assert empty["n"] == 0 and empty["unanswered"] == 0 and math.isnan(empty["accuracy"])
    assert "drawn_at_random" not in empty
