"""MTMF (22 feature types per map: counts and names) as published.

Parser (``get_response_mtmf.py``): the reply with "```json", "```" and "<|eot|>" removed is read
by ``json.loads`` as a whole; each key of the value whose lower-cased form is one of a type's
spellings (``ALTERNATE_NAMES``) gives that type (``TYPES``, the published names; a type under
two keys keeps the last); each type present gets "true_count" and "true_names" from the map's
ground truth.  The saved record is ``[normalised, raw]``.  Any failure (not JSON, a value that
is not an object of objects, a type missing from the ground truth) saves the cleaned text
instead, as a ``.txt`` file.  A JSON value that is a string or a list of strings that name no
type passes: ``[{}, value]``.

Scorer (``evaluate_mtmf.py``), per map: for the 22 types in ``TYPES`` order, the true and
given counts (as given: -1 and 2.5 scored), the true names and the given names that are not
blank (a string given for "names" is iterated by character); RMSE and r2 (sklearn) of the 22
count pairs; precision of the pooled names as ``Precision_name_listing``; recall as
``Recall_name_listing`` with the pooled given NAMES LIST (membership, nothing stripped); F1.
The table is the mean of each over the maps.

Where the published evaluator raises on a map (a ``.txt`` record, a type or field missing, a
count that is not a number), the item is ``crashed`` and scored as the empty answer (every
count 0, no names) against the ground truth: the ``truth`` argument when given, else the
record's own true counts and names when it holds all 22; with neither, its values are None and
it is left out of the means.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from . import _metrics
from ._result import Evaluation, Item, crash_note, crash_text, num

__all__ = ["ALTERNATE_NAMES", "TYPES", "evaluate", "item", "parse", "table"]

#: the published type names, in the published order
TYPES: tuple[str, ...] = (
    "convenience store",
    "supermarket",
    "drug store/pharmacy",
    "general clinic",
    "hospital",
    "restaurant",
    "fast food store",
    "coffee shop",
    "ATM or cash point",
    "bank",
    "playground",
    "park area",
    "fitness center",
    "clothes shop",
    "beauty shop",
    "water stream",
    "river",
    "bus stop",
    "gas station",
    "primary road",
    "car parking lot",
    "public toilet",
)


def _spellings(name: str) -> tuple[str, ...]:
    low = name.lower()
    under = low.replace(" ", "_")
    return (low,) if under == low else (low, under)


#: published type name -> the lower-cased keys the parser accepts for it
ALTERNATE_NAMES: dict[str, tuple[str, ...]] = {t: _spellings(t) for t in TYPES}
_METRICS = ("rmse", "r2", "precision", "recall", "f1")


def parse(response: str, truth: Mapping[str, Mapping]) -> list | str:
    """The record ``get_response_mtmf.py`` saves: ``[normalised, raw]``, or the cleaned text
    (the ``.txt`` case).  ``truth``: published type name -> {"count", "names"} (the map's
    ground-truth file)."""
    text = response.replace("```json", "").replace("```", "").replace("<|eot|>", "")
    try:
        value = json.loads(text)
        raw = copy.deepcopy(value)
        normalised: dict[str, Any] = {}
        for key in value:
            low = key.lower()
            for name, spellings in ALTERNATE_NAMES.items():
                if low in spellings:
                    normalised[name] = value[key]
        for name in normalised:
            normalised[name]["true_count"] = truth[name]["count"]
            normalised[name]["true_names"] = truth[name]["names"]
    except Exception:  # the published code's bare except: any failure saves the text
        return text
    return [normalised, raw]


def _published(record: list | str) -> dict[str, float]:
    data = (json.loads(record) if isinstance(record, str) else record)[0]
    true_counts, counts, true_names, names = [], [], [], []
    for name in TYPES:
        true_counts.append(data[name]["true_count"])
        counts.append(data[name]["count"])
        valid = [n for n in data[name]["names"] if n.strip() != ""]
        true_names += data[name]["true_names"]
        names += valid
    return _scores(true_counts, counts, true_names, names)


def _scores(true_counts: list, counts: list, true_names: list, names: list) -> dict[str, float]:
    precision = _metrics.precision_name_listing(true_names, names)
    recall = _metrics.recall_name_listing(true_names, names)
    return {
        "rmse": _metrics.rmse(true_counts, counts),
        "r2": _metrics.r2(true_counts, counts),
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(_metrics.f1_name_listing(precision, recall)),
    }


def _truth_of(record: Any, truth: Mapping[str, Mapping] | None) -> tuple[list, list] | None:
    """(true counts, true names) for the empty answer, or None when unknown."""
    if truth is not None:
        counts = [truth.get(t, {}).get("count", 0) for t in TYPES]
        names = [n for t in TYPES for n in truth.get(t, {}).get("names", [])]
        return counts, names
    try:
        data = record[0]
        return (
            [data[t]["true_count"] for t in TYPES],
            [n for t in TYPES for n in data[t]["true_names"]],
        )
    except Exception:
        return None


def item(key: str, record: list | str, truth: Mapping[str, Mapping] | None = None) -> Item:
    """values {"rmse", "r2", "precision", "recall", "f1"} of one saved record (the module
    docstring says how; ``truth``, the map's ground truth, is used only for a crashed item)."""
    try:
        values: dict[str, float | None] = dict(_published(record))
    except Exception as exc:
        crash = crash_text(exc)
        if isinstance(record, str):
            crash += " (a .txt record: the published evaluator reads it with json.load)"
        known = _truth_of(record, truth)
        if known is None:
            values = dict.fromkeys(_METRICS)
            why = "crashed, and no ground truth to score the empty answer against"
        else:
            try:
                values = dict(_scores(known[0], [0] * len(TYPES), known[1], []))
                why = "scored as the empty answer"
            except Exception:
                values = dict.fromkeys(_METRICS)
                why = "crashed; its ground truth is not numbers"
        return Item(key, values, crashed=crash, why=why)
    right = values["f1"] == 1 and values["rmse"] == 0
    return Item(key, values, why=None if right else "counts or names differ")


def table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """{"all": {"n", "rmse", "r2", "precision", "recall", "f1", "crashed", "drawn at random"}}:
    numpy's means over the maps (items with values None left out; nan with none)."""
    kept = [i for i in items if i.values.get("rmse") is not None]
    row: dict[str, float] = {"n": len(items)}
    for m in _METRICS:
        row[m] = _metrics.mean([num(i.values[m]) for i in kept])
    row["crashed"] = sum(i.crashed is not None for i in items)
    row["drawn at random"] = 0
    return {"all": row}


def evaluate(
    records: Sequence[tuple[str, Any]],
    *,
    seed: int = 0,
    truths: Mapping[str, Mapping[str, Mapping]] | None = None,
) -> Evaluation:
    """(file name, saved record: list, or str for a ``.txt``) pairs -> the published
    evaluation.  ``truths``: file name -> that map's ground truth (optional; used to score
    crashed items as the empty answer).  ``seed`` is unused (no draws in MTMF)."""
    items = [item(k, r, (truths or {}).get(k)) for k, r in records]
    notes = []
    notes += crash_note(items, "map(s)", "as the empty answer")
    if any(i.values.get("rmse") is None for i in items):
        notes.append("crashed maps with no ground truth at hand are left out of the means")
    if not items:
        notes.append("no maps: numpy's mean of nothing is nan")
    return Evaluation("MTMF", items, table(items), notes)
