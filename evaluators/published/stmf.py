"""STMF (one feature type per map: presence, counting, name listing) as published.

Each stored record (``Responses/STMF/<model>/<presence|counting|name_listing>/<file>.json``) is
the question's record plus "Response" (the raw reply) and "Answer" (what ``parse_stmf`` made of
it: "yes"/"no"; an int; a list of names).

Presence: the reply stripped, "**Answer:**" and every "*" removed, its first line lower-cased
with "-", "," and "." removed and stripped; "yes" or "no" when it starts with one, else a random
choice (drawn).  Scored: both labels lower-cased; accuracy over the pairs; macro precision,
recall and F1 (sklearn) over the labels mapped yes -> 1, no -> 0, each list mapped on its own,
other labels skipped (lists of different lengths make scikit-learn raise).

Counting: the first line with "-", "," and "." removed, when ``str.isnumeric``; else the text
after the first "There are ", "there are ", "There is " or "there is " (checked in that order)
of the whole reply, or that first line when none occurs; then its first word (split on " "):
numeric -> int; else the published number-word reader (``text2int``: case-sensitive, "" -> 0,
"and" allowed, scales multiply) when it reads it; else a random count 0..16 (drawn).  Scored:
RMSE and r2 (sklearn) pooled over all items.

Name listing: the reply's lines, a leading "N. " removed, "*" removed, stripped (blank lines
kept as "").  Scored per item: a single name saying "there are no"/"there is no" (lower-cased),
"I am unable to"/"I'm not able" (case-sensitive) or equal to "None" -> no names; the last name's
trailing "." removed; "<|eot|>" removed from the last name; names equal to '""' dropped;
precision as ``Precision_name_listing``; recall: the share of true names that are substrings of
the raw "Response"; F1.  Means over items.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from . import _metrics
from ._result import Evaluation, Item, crash_text, num, rng_for

__all__ = [
    "count_item",
    "count_table",
    "evaluate_count",
    "evaluate_names",
    "evaluate_presence",
    "names_item",
    "names_table",
    "parse_count",
    "parse_names",
    "parse_presence",
    "presence_item",
    "presence_table",
    "text2int",
]

_DROP = str.maketrans("", "", "-,.")
_UNITS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = ("hundred", "thousand", "million", "billion", "trillion")
_NUMWORDS: dict[str, tuple[int, int]] = {"and": (1, 0)}
_NUMWORDS.update({w: (1, i) for i, w in enumerate(_UNITS)})
_NUMWORDS.update({w: (1, i * 10) for i, w in enumerate(_TENS)})
_NUMWORDS.update({w: (10 ** (i * 3 or 2), 0) for i, w in enumerate(_SCALES)})
_THERE = ("There are ", "there are ", "There is ", "there is ")
_LEADING_NUMBER = re.compile(r"^\d+\.\s")


def text2int(text: str) -> int:
    """The published number-word reader: the whitespace-separated words of ``text``, each one
    of zero..nineteen, twenty..ninety, hundred..trillion or "and" (lower case only), summed with
    the scales; -1 when a word is not one of them; 0 for no word at all.  ("" is also a key, as
    the published table holds it for the first two tens, but ``split()`` never yields it.)"""
    current = result = 0
    for word in text.split():
        if word not in _NUMWORDS:
            return -1
        scale, increment = _NUMWORDS[word]
        current = current * scale + increment
        if scale > 100:
            result += current
            current = 0
    return result + current


def parse_presence(response: str, rng: Any) -> tuple[str, bool]:
    """("yes"/"no", drawn) as ``parse_stmf`` type 1 gives it."""
    text = response.strip().replace("**Answer:**", "").replace("*", "")
    first = text.split("\n")[0].lower().translate(_DROP).strip()
    if first.startswith("yes"):
        return "yes", False
    if first.startswith("no"):
        return "no", False
    return ("yes" if rng.randint(0, 1) == 1 else "no"), True


def parse_count(response: str, rng: Any) -> tuple[int, bool]:
    """(count, drawn) as ``parse_stmf`` type 2 gives it.  A token ``str.isnumeric`` accepts but
    ``int()`` rejects ("²") makes the published parser raise ValueError; so does this."""
    text = response.strip()
    token = text.split("\n")[0].translate(_DROP)
    if token.isnumeric():
        return int(token), False
    for mark in _THERE:
        if mark in text:
            token = text.split(mark)[1]
            break
    token = token.split(" ")[0].strip()
    if token.isnumeric():
        return int(token), False
    value = text2int(token)
    if value != -1:
        return int(value), False
    return rng.randint(0, 16), True


def parse_names(response: str) -> list[str]:
    """The names ``parse_stmf`` type 3 gives: one per line, blank lines kept as ""."""
    return [
        _LEADING_NUMBER.sub("", line).replace("*", "").strip()
        for line in response.strip().split("\n")
    ]


def _would_draw(record: Mapping[str, Any], parser: Any) -> bool:
    response = record.get("Response") if isinstance(record, Mapping) else None
    if not isinstance(response, str):
        return False
    try:
        return bool(parser(response, rng_for(0, ""))[1])
    except (ValueError, IndexError):
        return False


def _would_raise(record: Mapping[str, Any], parser: Any) -> str | None:
    """What the published parser raises on the record's "Response" (a count past Python's
    4,300 digits, "²"): the published run stops there before saving the record."""
    response = record.get("Response") if isinstance(record, Mapping) else None
    if not isinstance(response, str):
        return None
    try:
        parser(response, rng_for(0, ""))
    except (ValueError, IndexError) as exc:
        return crash_text(exc)
    return None


# ------------------------------------------------------------------ presence


def _label(value: str) -> float | None:
    return {"yes": 1.0, "no": 0.0}.get(value)


def presence_item(key: str, record: Mapping[str, Any]) -> Item:
    """values {"true": 1/0, "pred": 1/0 or None, "correct": 1/0}: both labels lower-cased and
    compared as text; "true"/"pred" None for a label that is neither yes nor no (skipped by the
    macro averages).  ``drawn`` when the parser would draw the stored "Response".  A record
    whose labels are missing or not text: crashed, not correct."""
    drawn = _would_draw(record, parse_presence)
    try:
        true, pred = record["Correct answer"].lower(), record["Answer"].lower()
    except (KeyError, TypeError, AttributeError) as exc:
        return Item(
            key,
            {"true": None, "pred": None, "correct": 0.0},
            crashed=crash_text(exc),
            drawn=drawn,
            why="no labels to compare",
        )
    right = true == pred
    why = None if right else f"answered {pred!r}, correct {true!r}"
    return Item(
        key,
        {"true": _label(true), "pred": _label(pred), "correct": float(right)},
        drawn=drawn,
        why=why,
    )


def _presence_lists(items: Sequence[Item]) -> tuple[list[int], list[int]]:
    true = [int(num(i.values["true"])) for i in items if i.values.get("true") is not None]
    pred = [int(num(i.values["pred"])) for i in items if i.values.get("pred") is not None]
    return true, pred


def presence_table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """{"all": {"n", "accuracy", "precision", "recall", "f1", "crashed", "drawn at random"}}:
    accuracy = matching labels / items; macro P/R/F1 over the mapped labels.  Where the mapped
    lists differ in length (the published run raises ValueError there), P/R/F1 over the items
    whose both labels map."""
    n = len(items)
    row: dict[str, float] = {"n": n}
    row["accuracy"] = sum(i.values["correct"] or 0.0 for i in items) / n if n else math.nan
    true, pred = _presence_lists(items)
    if len(true) != len(pred):
        pairs = [(i.values["true"], i.values["pred"]) for i in items]
        kept = [(int(t), int(p)) for t, p in pairs if t is not None and p is not None]
        true, pred = [t for t, _ in kept], [p for _, p in kept]
    if true:
        row["precision"], row["recall"], row["f1"] = _metrics.presence_prf(true, pred)
    else:
        row["precision"] = row["recall"] = row["f1"] = math.nan
    row["crashed"] = sum(i.crashed is not None for i in items)
    row["drawn at random"] = sum(i.drawn for i in items)
    return {"all": row}


def evaluate_presence(records: Sequence[tuple[str, Any]], *, seed: int = 0) -> Evaluation:
    """(file name, stored record) pairs of ``presence/`` -> the published evaluation.  The
    "Answer" was drawn when the record was saved; ``seed`` is not used (kept for the shared
    signature)."""
    items = [presence_item(k, r) for k, r in records]
    notes = []
    true, pred = _presence_lists(items)
    if len(true) != len(pred):
        notes.append(
            "labels other than yes/no make the mapped lists differ in length "
            f"({len(true)} true, {len(pred)} answered): the published run raises ValueError in "
            "scikit-learn; precision, recall and F1 here are over the items whose both labels map"
        )
    if not items:
        notes.append("no items: the published run divides by zero (ZeroDivisionError)")
    elif not true:
        notes.append("no yes/no labels: scikit-learn raises on empty lists; P/R/F1 are nan")
    if any(i.crashed for i in items):
        notes.append("the published run raises on the items marked crashed; scored here as wrong")
    return Evaluation("STMF presence", items, presence_table(items), notes)


# ------------------------------------------------------------------ counting


def count_item(key: str, record: Mapping[str, Any]) -> Item:
    """values {"true", "pred"}: the stored "Correct answer" and "Answer" as they are (numbers).
    ``drawn`` when the parser would draw the stored "Response".  A record missing either, or
    holding one that is not a number: crashed (scikit-learn or KeyError), pred None, left out
    of the table."""
    drawn = _would_draw(record, parse_count)
    parser_raises = _would_raise(record, parse_count)
    try:
        true, pred = record["Correct answer"], record["Answer"]
        if isinstance(true, str) or isinstance(pred, str):
            raise ValueError(
                "dtype='numeric' is not compatible with arrays of bytes/strings "
                f"(scikit-learn, on a count stored as text: "
                f"{pred if isinstance(pred, str) else true!r})"
            )
        values: dict[str, float | None] = {"true": float(true), "pred": float(pred)}
    except (KeyError, TypeError, ValueError, OverflowError) as exc:  # a count past 1e308 too
        return Item(
            key,
            {"true": None, "pred": None},
            crashed=crash_text(exc),
            drawn=drawn,
            why="no count to score",
        )
    why = None if values["true"] == values["pred"] else f"counted {pred!r}, true {true!r}"
    return Item(key, values, drawn=drawn, why=why, crashed=parser_raises)


def count_table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """{"all": {"n", "rmse", "r2", "crashed", "drawn at random"}}: RMSE and r2 (sklearn)
    pooled over the items (those with no number left out); nan with none."""
    kept = [
        i for i in items if i.values.get("pred") is not None and i.values.get("true") is not None
    ]
    true = [i.values["true"] for i in kept]
    pred = [i.values["pred"] for i in kept]
    row: dict[str, float] = {"n": len(items)}
    row["rmse"] = _metrics.rmse(true, pred) if kept else math.nan
    row["r2"] = _metrics.r2(true, pred) if kept else math.nan
    row["crashed"] = sum(i.crashed is not None for i in items)
    row["drawn at random"] = sum(i.drawn for i in items)
    return {"all": row}


def evaluate_count(records: Sequence[tuple[str, Any]], *, seed: int = 0) -> Evaluation:
    """(file name, stored record) pairs of ``counting/`` -> the published evaluation (``seed``
    unused: the draws were made when the records were saved)."""
    items = [count_item(k, r) for k, r in records]
    notes = []
    if not items:
        notes.append("no items: scikit-learn raises on empty lists; the values are nan")
    if any(i.crashed for i in items):
        notes.append("the published run raises on the items marked crashed; left out here")
    if len(items) == 1:
        notes.append("one item: r2 is undefined (scikit-learn warns and gives nan)")
    return Evaluation("STMF counting", items, count_table(items), notes)


# ------------------------------------------------------------------ name listing


def _cleaned(pred: list[Any]) -> list[Any]:
    pred = list(pred)
    if len(pred) == 1:
        first = pred[0]
        if (
            "there are no" in first.lower()
            or "there is no" in first.lower()
            or "I am unable to" in first
            or "I'm not able" in first
            or first == "None"
        ):
            pred = []
    if pred and len(pred[-1]) > 0 and pred[-1][-1] == ".":
        pred[-1] = pred[-1][:-1]
    if pred and "<|eot|>" in pred[-1]:
        pred[-1] = pred[-1].replace("<|eot|>", "")
    return [p for p in pred if p != '""']


def names_item(key: str, record: Mapping[str, Any]) -> Item:
    """values {"precision", "recall", "f1"} of the stored "Answer" list against the "Correct
    answer" list (the module docstring says how).  A record the published code cannot read
    (a missing field, names that are not text): crashed, scored as precision, recall and F1 0."""
    try:
        true = list(record["Correct answer"])
        pred = _cleaned(list(record["Answer"]))
        precision = _metrics.precision_name_listing(true, pred)
        recall = _metrics.recall_name_listing(true, record["Response"])
    except (KeyError, TypeError, AttributeError) as exc:
        zero: dict[str, float | None] = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
        return Item(key, zero, crashed=crash_text(exc), why="no names to score")
    f1 = _metrics.f1_name_listing(precision, recall)
    values: dict[str, float | None] = {
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
    }
    why = None if f1 == 1 else f"names read {pred!r}"
    return Item(key, values, why=why)


def names_table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """{"all": {"n", "precision", "recall", "f1", "crashed", "drawn at random"}}: numpy's means
    over the items (nan with none)."""
    n = len(items)
    row: dict[str, float] = {"n": n}
    for m in ("precision", "recall", "f1"):
        row[m] = _metrics.mean([num(i.values[m]) for i in items])
    row["crashed"] = sum(i.crashed is not None for i in items)
    row["drawn at random"] = 0
    return {"all": row}


def evaluate_names(records: Sequence[tuple[str, Any]], *, seed: int = 0) -> Evaluation:
    """(file name, stored record) pairs of ``name_listing/`` -> the published evaluation."""
    items = [names_item(k, r) for k, r in records]
    notes = []
    if not items:
        notes.append("no items: numpy's mean of nothing is nan (with a warning)")
    if any(i.crashed for i in items):
        notes.append("the published run raises on the items marked crashed; scored here as 0")
    return Evaluation("STMF name listing", items, names_table(items), notes)
