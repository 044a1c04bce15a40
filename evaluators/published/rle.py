"""RLE (route length from the map's scale bar) as published.

Parser (``parse_rle``, stored as "Result"): the first line of the stripped reply with every
"-", "," and "*" removed, stripped.  When it holds " is ": the text after the first " is ",
"about" and "approximately" removed, stripped, its first space-separated token.  Else the first
space-separated token that ``float()`` accepts.  Else, when the whole reply holds "which
converts to", the first token after the first "which converts to " of the stripped reply.  Else
-1.  The token is kept as text ("625m" stays "625m"); "-3000" becomes "3000".

Scorer (``evaluate_rle.py``): a record whose ``float(Result)`` is -1 is dropped; one whose
"Result" ``float()`` rejects makes the published run raise ValueError (scored here as dropped,
and counted crashed).  The rest are grouped by "Difficulty" (Simple/Complex) and "Measure"
(meters/feet; another difficulty is "Out of scope", skipped); per group RMSE, MAE, MAPE
(sklearn, a fraction) and r2 of float(Correct_answer) against float(Result), each rounded to 2
decimals.  An empty group makes scikit-learn raise (the published run stops there): its values
are nan, with a note.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from . import _metrics
from ._result import Evaluation, Item, crash_note, crash_text

__all__ = ["DIFFICULTIES", "UNITS", "evaluate", "item", "parse", "table"]

DIFFICULTIES = ("Simple", "Complex")
UNITS = ("meters", "feet")
_CONVERTS = "which converts to"


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse(response: str) -> str | int:
    """The stored "Result": the token read (text), or -1.  An answer holding "which converts
    to" not followed by a space makes the published parser raise IndexError: IndexError here."""
    line = response.strip().split("\n")[0].replace("-", "").replace(",", "").replace("*", "")
    line = line.strip()
    if " is " in line:
        rest = line.split(" is ")[1].strip()
        rest = rest.replace("about", "").replace("approximately", "").replace(",", "").strip()
        return rest.split(" ")[0]
    tokens = line.split(" ")
    for token in tokens:
        if _is_float(token):
            return token
    if _CONVERTS in response:
        rest = response.strip().split(_CONVERTS + " ")[1].strip()
        return rest.split(" ")[0]
    return -1


def group_name(difficulty: str, unit: str) -> str:
    """ "Simple meters", "Complex feet", ..."""
    return f"{difficulty} {unit}"


def item(key: str, record: Mapping[str, Any]) -> Item:
    """values {"true": float(Correct_answer), "pred": float(Result), or None when dropped};
    groups {"difficulty", "unit"} as stored ("Difficulty", "Measure").  A "Result" of -1 is
    dropped; one ``float()`` rejects ("625m", ""): crashed (ValueError), scored as dropped."""
    groups = {"difficulty": str(record.get("Difficulty")), "unit": str(record.get("Measure"))}
    result = record.get("Result")
    try:
        pred = float(result)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        true = _number(record.get("Correct_answer"))
        return Item(
            key,
            {"true": true, "pred": None},
            groups,
            crashed=crash_text(exc),
            why=f"Result {result!r} is no number: dropped",
        )
    if pred == -1:
        true = _number(record.get("Correct_answer"))
        return Item(key, {"true": true, "pred": None}, groups, why="no number read: dropped")
    if not math.isfinite(pred):  # "1e999", "inf", "nan": scikit-learn raises on the group
        return Item(
            key,
            {"true": _number(record.get("Correct_answer")), "pred": None},
            groups,
            crashed="ValueError: Input contains infinity or NaN (scikit-learn, on its group)",
            why=f"Result {result!r} is no finite number: dropped",
        )
    try:
        true = float(record["Correct_answer"])
    except (KeyError, TypeError, ValueError) as exc:
        return Item(
            key,
            {"true": None, "pred": None},
            groups,
            crashed=crash_text(exc),
            why="no Correct_answer: dropped",
        )
    why = None if pred == true else f"read {result!r}, true {true!r}"
    return Item(key, {"true": true, "pred": pred}, groups, why=why)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _scored(i: Item, difficulty: str, unit: str) -> bool:
    return (
        i.groups.get("difficulty") == difficulty
        and i.groups.get("unit") == unit
        and i.values.get("pred") is not None
        and i.values.get("true") is not None
    )


def table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """ "all" ({"n", "dropped", "crashed", "drawn at random"}), then per group "Simple meters",
    "Simple feet", "Complex meters", "Complex feet": {"n" (items of the group), "dropped",
    "rmse", "mae", "mape", "r2"}, each metric rounded to 2 decimals, nan for an empty group."""
    out: dict[str, dict[str, float]] = {
        "all": {
            "n": len(items),
            "dropped": sum(i.values.get("pred") is None for i in items),
            "crashed": sum(i.crashed is not None for i in items),
            "drawn at random": 0,
        }
    }
    for difficulty in DIFFICULTIES:
        for unit in UNITS:
            members = [
                i
                for i in items
                if i.groups.get("difficulty") == difficulty and i.groups.get("unit") == unit
            ]
            kept = [i for i in members if _scored(i, difficulty, unit)]
            true = [i.values["true"] for i in kept]
            pred = [i.values["pred"] for i in kept]
            row: dict[str, float] = {"n": len(members), "dropped": len(members) - len(kept)}
            for name, fn in (
                ("rmse", _metrics.rmse),
                ("mae", _metrics.mae),
                ("mape", _metrics.mape),
                ("r2", _metrics.r2),
            ):
                row[name] = round(fn(true, pred), 2) if kept else math.nan
            out[group_name(difficulty, unit)] = row
    return out


def evaluate(records: Sequence[tuple[str, Any]], *, seed: int = 0) -> Evaluation:
    """(file name, stored record) pairs -> the published RLE evaluation (``seed`` unused)."""
    items = [item(k, r) for k, r in records]
    tab = table(items)
    notes = []
    notes += crash_note(items, "record(s)", "as dropped")
    odd = sorted(
        {i.groups["difficulty"] for i in items if i.values.get("pred") is not None}
        - set(DIFFICULTIES)
    )
    if odd:
        notes.append(
            f"difficulty {', '.join(odd)}: the published run prints 'Out of scope' "
            "and skips those records"
        )
    for difficulty in DIFFICULTIES:
        for unit in UNITS:
            g = group_name(difficulty, unit)
            if tab[g]["n"] - tab[g]["dropped"] == 0:
                notes.append(
                    f"{g}: no scored record; scikit-learn raises on the empty lists "
                    "and the published run stops there; values nan"
                )
            elif tab[g]["n"] - tab[g]["dropped"] == 1:
                notes.append(f"{g}: one scored record; r2 is undefined (nan)")
    return Evaluation("RLE", items, tab, notes)
