"""evaluators.published.mfs: the published MFS parser and scorer, case by case from its rules."""

from __future__ import annotations

import math

import pytest

from evaluators.published import mfs, rng_for


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("C", "C"),
        ("  C) Park", "C"),  # stripped first: the first character of the stripped reply
        ("A park is shown", "A"),  # any leading A-E counts, a word's initial included
        ("The correct answer is C.", "C"),
        ("The correct answer is C", "C"),
        ("I think the correct answer is B. The correct answer is D.", ""),  # "B The  D"
        ("The correct answer is C) Park.", ""),  # more than one letter after it
        ("The correct answer is c.", ""),  # lower case is not a letter A-E
        ("c", ""),
        ("Option C", ""),
        ("The Correct Answer is C.", ""),  # case-sensitive
        ("My pick: the correct answer is   E..", "E"),
    ],
)
def test_parse(reply: str, letter: str) -> None:
    assert mfs.parse(reply) == (letter, None)


def test_parse_empty_reply_crashes_published_parser() -> None:
    letter, crash = mfs.parse("   ")
    assert letter == ""
    assert crash is not None and crash.startswith("IndexError")


def test_parse_mark_without_following_space_crashes() -> None:
    letter, crash = mfs.parse("So the correct answer is\nC")
    assert letter == ""
    assert crash is not None and crash.startswith("IndexError")


@pytest.mark.parametrize(("answer", "right"), [("C", True), (" C", False), ("c", False)])
def test_item_compares_verbatim(answer: str, right: bool) -> None:
    rec = {"Answer": answer, "Correct answer": "C", "Response": answer}
    it = mfs.item("q1", rec, rng_for(0, "q1"))
    assert it.values == {"correct": float(right)}
    assert not it.drawn


def test_item_draws_a_seeded_letter_for_empty_answer() -> None:
    rec = {"Answer": "", "Correct answer": "C"}
    letter = "ABCDE"[rng_for(7, "q9").randint(0, 4)]
    it = mfs.item("q9", rec, rng_for(7, "q9"))
    assert it.drawn
    assert it.values["correct"] == float(letter == "C")
    # the same seed and key give the same draw whatever the order
    again = mfs.evaluate([("q0", {"Answer": "A", "Correct answer": "A"}), ("q9", rec)], seed=7)
    assert again.items[1].values == it.values


def test_evaluate_table() -> None:
    records = [
        ("1", {"Answer": "A", "Correct answer": "A"}),
        ("2", {"Answer": " B", "Correct answer": "B"}),
        ("3", {"Answer": "c", "Correct answer": "C"}),
        ("4", {"Answer": "D", "Correct answer": "D"}),
        ("5", {"Correct answer": "D"}),
    ]
    ev = mfs.evaluate(records, seed=0)
    assert ev.release_task == "MFS"
    row = ev.table["all"]
    assert row["n"] == 5
    assert row["accuracy"] == pytest.approx(2 / 5)
    assert row["crashed"] == 1 and row["drawn at random"] == 0
    assert ev.items[4].crashed == "KeyError: 'Answer'"
    assert ev.notes


def test_evaluate_drawn_counted_and_empty() -> None:
    ev = mfs.evaluate([(str(i), {"Answer": "", "Correct answer": "A"}) for i in range(50)])
    row = ev.table["all"]
    assert row["drawn at random"] == 50
    assert 0 < row["accuracy"] < 1  # 50 draws from five letters
    empty = mfs.evaluate([])
    assert math.isnan(empty.table["all"]["accuracy"]) and empty.notes
