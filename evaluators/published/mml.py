"""MML (the two roads meeting at a marker) as published.

Parser (``parse_mml``): the reply stripped, every "json", "`" and "<|eot|>" removed, then
``json.loads``; None when that fails.  The stored record is the question's ground-truth record
(``road_1``, ``road_2``, ``zoom_level``) plus "Marker_color", "Response" and "Answer": the JSON
value, or the RAW REPLY (text) when it did not parse.

A reply ``null`` parses to None too, so its record also holds the raw reply "null".

Scorer (``evaluate_mml.py``): an "Answer" of None is not answered: neither correct nor counted
at its zoom (only a hand-made record holds it: the published parser stores the raw reply
whenever the value is None).  Otherwise correct when (Answer["road_1"], Answer["road_2"])
equals (road_1, road_2) or (road_2, road_1), exact strings, evaluated left to right as the
published expression (a wrong "road_1" never reads "road_2").  An Answer that is text (an
unparsed reply), a list, a number, or an object missing a key it reads: the published code
raises TypeError/KeyError; here the item is crashed, not correct, and counted as answered at
its zoom (it was answered, wrongly).  Accuracy = correct / files; the blue and red accuracies
divide by HALF the number of files, however many of each colour there are; per zoom, correct /
answered.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ._result import Evaluation, Item, crash_note, crash_text

__all__ = ["COLOURS", "evaluate", "item", "parse", "table"]

COLOURS = ("blue", "red")


def parse(response: str) -> Any | None:
    """The JSON value of the cleaned reply, or None when it does not parse or is ``null`` (the
    record's "Answer" is then the raw reply)."""
    text = response.strip().replace("json", "").replace("`", "").replace("<|eot|>", "")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _correct(answer: Any, record: Mapping[str, Any]) -> bool:
    a, b = record["road_1"], record["road_2"]
    return bool(
        (answer["road_1"] == a and answer["road_2"] == b)
        or (answer["road_1"] == b and answer["road_2"] == a)
    )


def item(key: str, record: Mapping[str, Any]) -> Item:
    """values {"correct": 1/0, "answered": 1/0}; groups {"colour": Marker_color, "zoom":
    str(zoom_level)} (the module docstring says how)."""
    groups = {"colour": str(record.get("Marker_color")), "zoom": str(record.get("zoom_level"))}
    if "Answer" in record and record["Answer"] is None:
        return Item(key, {"correct": 0.0, "answered": 0.0}, groups, why="not answered (null)")
    try:
        right = _correct(record["Answer"], record)
    except (KeyError, TypeError, IndexError) as exc:
        answer = record.get("Answer")
        what = "an unparsed reply" if isinstance(answer, str) else type(answer).__name__
        return Item(
            key,
            {"correct": 0.0, "answered": 1.0},
            groups,
            crashed=crash_text(exc),
            why=f"Answer is {what}: not correct",
        )
    why = None if right else f"answered {record['Answer']!r}"
    return Item(key, {"correct": float(right), "answered": 1.0}, groups, why=why)


def _zoom_order(z: str) -> tuple[int, float, str]:
    try:
        return (0, float(z), z)
    except ValueError:
        return (1, 0.0, z)


def table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """ "all" {"n", "correct", "accuracy", "crashed", "drawn at random"}; "colour=blue",
    "colour=red" {"n" (files of that colour), "correct", "accuracy" = correct / (files / 2)};
    "zoom=Z" for each zoom with an answered item {"n", "answered", "correct", "accuracy" =
    correct / answered}."""
    n = len(items)
    correct = sum(i.values["correct"] or 0.0 for i in items)
    out: dict[str, dict[str, float]] = {
        "all": {
            "n": n,
            "correct": correct,
            "accuracy": correct / n if n else math.nan,
            "crashed": sum(i.crashed is not None for i in items),
            "drawn at random": 0,
        }
    }
    for colour in COLOURS:
        members = [i for i in items if i.groups.get("colour") == colour]
        right = sum(i.values["correct"] or 0.0 for i in members)
        out[f"colour={colour}"] = {
            "n": len(members),
            "correct": right,
            "accuracy": right / (n / 2) if n else math.nan,
        }
    zooms = sorted({i.groups.get("zoom", "None") for i in items}, key=_zoom_order)
    for z in zooms:
        members = [i for i in items if i.groups.get("zoom", "None") == z]
        answered = sum(i.values["answered"] or 0.0 for i in members)
        if not answered:
            continue
        right = sum(i.values["correct"] or 0.0 for i in members)
        out[f"zoom={z}"] = {
            "n": len(members),
            "answered": answered,
            "correct": right,
            "accuracy": right / answered,
        }
    return out


def evaluate(records: Sequence[tuple[str, Any]], *, seed: int = 0) -> Evaluation:
    """(file name, stored record) pairs -> the published MML evaluation (``seed`` unused)."""
    items = [item(k, r) for k, r in records]
    tab = table(items)
    notes = []
    notes += crash_note(items, "record(s)", "as answered and not correct")
    counts = {c: tab[f"colour={c}"]["n"] for c in COLOURS}
    if items and (counts["blue"] != counts["red"] or sum(counts.values()) != len(items)):
        notes.append(
            f"{counts['blue']} blue and {counts['red']} red of {len(items)} files: the published "
            "colour accuracies still divide by half the number of files"
        )
    if not items:
        notes.append("no files: the published run divides by zero (ZeroDivisionError)")
    silent = sorted(
        {i.groups["zoom"] for i in items} - {k[5:] for k in tab if k.startswith("zoom=")}
    )
    if silent:
        notes.append(
            f"zoom {', '.join(silent)}: no answered file; the published run prints no line for it"
        )
    return Evaluation("MML", items, tab, notes)
