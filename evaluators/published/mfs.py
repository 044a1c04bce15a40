"""MFS (map feature symbols, five options) as the published code parses and scores it.

The stored file is one JSON object: question id -> the question's record plus "Response" (the
raw reply) and "Answer" (the parsed letter, or "" when the parser found none).

Parser (what ``get_response_mfs.py`` stores as "Answer"): the first character of the stripped
reply, when it is one of A-E; otherwise, when "correct answer is" occurs in the reply, the text
after the first "correct answer is " of the stripped reply, stripped, every "." removed, kept
only when it is then exactly one letter A-E; otherwise "".  An empty reply makes the published
parser raise IndexError; a reply holding "correct answer is" not followed by a space raises
IndexError too; both are scored here as "" (a random letter).

Scorer (``evaluate_mfs.py``): an "Answer" of "" is replaced by a letter drawn at random (here
from ``rng_for(seed, key)``); anything else is compared verbatim with "Correct answer", so
" C" or "c" is wrong.  Accuracy = correct / questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._result import Evaluation, Item, crash_text, rng_for

__all__ = ["LETTERS", "evaluate", "item", "parse", "table"]

LETTERS = ("A", "B", "C", "D", "E")
_MARK = "correct answer is"


def parse(response: str) -> tuple[str, str | None]:
    """(the letter, or "" when none is read; what the published parser raises, or None)."""
    stripped = response.strip()
    if not stripped:
        return "", "IndexError: string index out of range (an empty reply)"
    if stripped[0] in LETTERS:
        return stripped[0], None
    if _MARK not in response:
        return "", None
    parts = stripped.split(_MARK + " ")
    if len(parts) < 2:
        return "", f"IndexError: list index out of range ({_MARK!r} not followed by a space)"
    answer = parts[1].strip().replace(".", "")
    return (answer if answer in LETTERS else ""), None


def item(key: str, record: Mapping[str, Any], rng: Any) -> Item:
    """The record's "Answer" against its "Correct answer": values {"correct": 1.0/0.0}; an
    "Answer" of "" is drawn at random from A-E with ``rng`` (``drawn``).  A record missing
    either field: crashed (KeyError), not correct.  A "Response" the published parser raises
    on (``parse``): crashed too, scored by its "Answer" all the same (the published run would
    have stopped while asking)."""
    try:
        answer, truth = record["Answer"], record["Correct answer"]
    except (KeyError, TypeError) as exc:
        return Item(key, {"correct": 0.0}, crashed=crash_text(exc), why="no Answer to score")
    drawn = answer == ""
    if drawn:
        answer = LETTERS[rng.randint(0, 4)]
    right = answer == truth
    why = None if right else f"answer {answer!r}, correct {truth!r}"
    if drawn:
        why = f"no letter read; drew {answer!r}" + ("" if right else f", correct {truth!r}")
    # a reply the published parser raises on (empty; the mark with no space after it) stops
    # the published run before any record is saved: scored here as the record says
    reply = record.get("Response")
    crashed = parse(reply)[1] if isinstance(reply, str) else None
    return Item(key, {"correct": float(right)}, drawn=drawn, why=why, crashed=crashed)


def table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """{"all": {"n", "accuracy", "crashed", "drawn at random"}}; accuracy nan with no item
    (the published run divides by zero there)."""
    n = len(items)
    correct = sum(i.values["correct"] or 0.0 for i in items)
    return {
        "all": {
            "n": n,
            "accuracy": correct / n if n else float("nan"),
            "crashed": sum(i.crashed is not None for i in items),
            "drawn at random": sum(i.drawn for i in items),
        }
    }


def evaluate(records: Sequence[tuple[str, Any]], *, seed: int = 0) -> Evaluation:
    """(question id, stored record) pairs -> the published MFS evaluation."""
    items = [item(k, r, rng_for(seed, k)) for k, r in records]
    notes = []
    if not items:
        notes.append("no questions: the published run divides by zero (ZeroDivisionError)")
    if any(i.crashed for i in items):
        notes.append(
            "the published code raises on the items marked crashed (its parser, on the reply: "
            "get_response_mfs.py stops there; or its evaluator, on a record missing a field); "
            "scored here by the stored answer, an empty one drawn for"
        )
    return Evaluation("MFS", items, table(items), notes)
