"""MFS scoring: what models write and the default rule; the published arithmetic ("original"
mode) through the registered scorer, ``get_task("mfs").scorer("original")``
(``evaluators.published.mfs``'s parser itself: ``tests/evaluators/published/test_mfs.py``)."""

from __future__ import annotations

import math

import pytest

from cartoqa.records import ChoiceTruth, Metadata, Prompt, Provenance, Sample, SampleScore
from cartoqa.tasks.release.features import ORIGINAL_SEED
from cartoqa.tasks.spec import get_task
from evaluators import AnswerParseError
from evaluators.mfs import (
    format_mfs,
    mfs_metrics,
    mfs_score,
    parse_mfs,
)
from evaluators.published import rng_for

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


def original(sample: Sample, answer: str | None) -> SampleScore:
    """The registered "original" scorer of MFS."""
    return get_task("mfs").scorer("original")(sample, answer)


def _drawn(id_: str) -> str:
    """The published fall-back: a letter of A-E drawn from ``rng_for(seed, key)``; a cartoqa
    sample's key is its id."""
    return "ABCDE"[rng_for(ORIGINAL_SEED, id_).randint(0, 4)]


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
        sc = original(mfs("C", "h1"), answer)
        assert sc.values["correct"] in (0.0, 1.0)
        assert sc.parsed is None or len(sc.parsed) == 1


def test_format_is_the_letter_and_reads_back():
    for letter in "ABCDE":
        sample = mfs(letter)
        assert format_mfs(sample) == letter
        assert mfs_score(sample, format_mfs(sample)).correct is True
        assert original(sample, format_mfs(sample)).correct is True


# ------------------------------------------------------------------ original mode

# (answer, the letter the published parser stores; None: none, so a letter is drawn)
ORIGINAL_READS = [
    ("C", "C"),
    ("C) Bank", "C"),
    ("C\nBecause of the dollar sign.", "C"),
    ("Correct answer is B", "C"),  # its first character is one of A-E
    ("I think C", None),  # a first character that is no letter A-E reads nothing
    ("**C**", None),
    ("(C)", None),
    ("c", None),  # not upper-cased
    (" C", "C"),  # the reply is stripped first
    ("The answer is C.", None),
    ("Bank", "B"),  # any leading A-E, a word's initial included
    ("F", None),
    ("The correct answer is C.", "C"),
    ("The correct answer is **(C)** Bank", None),  # more than a letter after the phrase
    ("Looking closely, the correct answer is: c", None),  # no space after it: the parser raises
    ("The correct answer is Bank.", None),
    ("A: the correct answer is D", "A"),  # the first character wins over the phrase
    ("The correct answer is C, or rather the correct answer is D", None),
]


@pytest.mark.parametrize(("answer", "read"), ORIGINAL_READS)
def test_original_reads_as_published(answer, read):
    sc = original(mfs("C", "mfs-r"), answer)
    assert sc.parsed == read
    assert sc.values["drawn"] == (0.0 if read else 1.0)
    letter = read or _drawn("mfs-r")
    assert sc.correct is (letter == "C") and sc.values["correct"] == float(letter == "C")
    if read:
        assert sc.why == (None if read == "C" else f"answer {read!r}, correct 'C'")


def test_original_first_character_quirk_against_the_default():
    # a prose answer reads no letter in the original mode (a letter is drawn), or its first
    # character when that is one of A-E ("Answer: C" reads "A"), and is right in the default one
    sample = mfs("C")
    for answer in ("I think C", "The answer is C.", "**C**"):
        assert original(sample, answer).values["drawn"] == 1.0
        assert mfs_score(sample, answer).correct is True
    assert original(sample, "Answer: C").parsed == "A"
    assert original(sample, "Answer: C").correct is False
    assert mfs_score(sample, "Answer: C").correct is True
    # and an answer whose first character happens to be the truth's is right there
    assert original(sample, "Cafe, I think").correct is True
    assert mfs_score(sample, "Cafe, I think").correct is False


@pytest.mark.parametrize(
    ("answer", "crashes"),
    [
        ("", True),
        (None, True),
        ("The correct answer is", True),
        ("the correct answer is 3.", False),
    ],
)
def test_original_draws_when_no_letter_is_read(answer, crashes):
    sample = mfs("C", "mfs-7")
    sc = original(sample, answer)
    assert sc.values["drawn"] == 1.0 and sc.parsed is None
    # the published parser raises on an empty reply and on the phrase with no space after it
    assert sc.values["crashed"] == float(crashes)
    assert sc.correct is (_drawn("mfs-7") == "C")
    assert sc.correct or crashes or f"drew {_drawn('mfs-7')!r}" in sc.why


def test_original_draw_is_seeded_per_sample_from_a_to_e():
    ids = [f"mfs-{i}" for i in range(40)]
    first = [original(mfs("C", i), None).correct for i in ids]
    again = [original(mfs("C", i), "").correct for i in ids]
    assert first == again  # stable across calls (and the same for no response and "")
    assert first == [_drawn(i) == "C" for i in ids]
    assert len(set(first)) > 1  # differs by sample id
    # the published draw is from A-E whatever the options: a two-option sample draws C-E too
    two = {"A": "Bank", "B": "Cafe"}
    for i in ids:
        sc = original(mfs("B", i, options=two), "none of these")
        assert sc.correct is (_drawn(i) == "B")
        assert sc.correct or f"drew {_drawn(i)!r}" in sc.why
    assert {_drawn(i) for i in ids} - {"A", "B"}


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
    rows = [(mfs("C", i), original(mfs("C", i), a)) for i, a in zip(ids, answers, strict=True)]
    # right: "C", and each drawn one ("I think C", "" and None) that drew C
    right = 1 + sum(_drawn(i) == "C" for i in ("o1", "o2", "o3"))
    table = get_task("mfs").scores_table(rows, mode="original")["all"]
    assert table == {"n": 5, "accuracy": right / 5, "crashed": 2, "drawn at random": 3}


def test_metrics_on_made_scores_and_none():
    def made(right: bool, **values: float) -> tuple[Sample, SampleScore]:
        return mfs("C"), SampleScore(correct=right, values=values)

    rows = [
        made(True, correct=1.0, unanswered=0.0),
        made(False, correct=0.0, unanswered=1.0),
        made(False, correct=0.0, unanswered=0.0),
        made(True, correct=1.0, unanswered=0.0),
    ]
    assert mfs_metrics(rows) == {"n": 4, "accuracy": 0.5, "unanswered": 1}
    empty = mfs_metrics([])
    assert empty == {"n": 0, "accuracy": empty["accuracy"], "unanswered": 0}
    assert math.isnan(empty["accuracy"])
