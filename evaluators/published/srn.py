"""SRN (the shortest route between two markers, as directions) as published.

Parser (``parse_srn``, stored as "Answer"): the reply stripped; "**Answer:**", every "*",
"Answer:", "[", "]" and "<|eot|>" removed; split on ","; each item stripped; then the
continue-straight normalisation (``evaluators.navigation.published_normalisation``).

Scorer (``evaluate_srn.py``), per file: the truth is "route_directions" with "[" and "]" removed,
split on "," and each item stripped (a road name holding a comma splits; the truth is NOT
normalised).  The stored "Answer" is compared with it item by item up to the first difference
or the end of the shorter: exact (SR^2) when none differs; aSA = (k - 1) / (len(truth) - 1), k
the items matched, not clamped.  Connectivity: 1 when exact, else the published
``check_valid_route`` (``evaluators.navigation.published_connected``) with the file's
road_dict and road_conjunction.  Tables per zoom 17, 18, 19 (a zoom with no file makes the
published run divide by zero: its values are nan, with a note) and "all".

Where the published code raises (an Answer of [blue, red]; a road missing from the junction
table; a missing or null Answer; a zoom other than the integers 17, 18, 19, which are its only
keys): ``crashed`` says what; the item is scored, as not connected (a missing or null Answer as
the empty reply [""]), and any other zoom gets its own group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.navigation import published_connected, published_parse

from ._result import Evaluation, Item, crash_note, crash_text, num

__all__ = ["ZOOMS", "evaluate", "item", "parse", "table", "truth_items"]

#: the zoom levels the published evaluator knows (its dictionaries' keys)
ZOOMS = (17, 18, 19)


def parse(response: str) -> list[str]:
    """The stored "Answer".  Where the published normalisation raises IndexError (a run of
    "continue straight" at the end), the published parser raises: ValueError here, naming it."""
    steps, crash = published_parse(response)
    if steps is None:
        raise ValueError(f"the published parser raises on this reply: {crash}")
    return steps


def truth_items(route_directions: str) -> list[str]:
    """The truth as the published evaluator reads it: brackets removed, split on ",", each item
    stripped."""
    return [t.strip() for t in route_directions.replace("[", "").replace("]", "").split(",")]


def _steps(truth: Sequence[str], answer: Sequence[Any]) -> tuple[bool, int]:
    k = 0
    for t, a in zip(truth, answer, strict=False):
        if t != a:
            return False, k
        k += 1
    return True, k


def item(
    key: str,
    record: Mapping[str, Any],
    road_dict: Mapping[str, Any],
    conjunction: Mapping[str, Any],
) -> Item:
    """values {"exact": 1/0, "step_accuracy", "connected": 1/0}; groups {"zoom":
    str(zoom_level)} (the module docstring says how)."""
    zoom = record.get("zoom_level")
    groups = {"zoom": str(zoom)}
    crash: str | None = None
    directions = record.get("route_directions")
    if isinstance(directions, str):
        truth = truth_items(directions)
    elif isinstance(directions, list):  # not the release's layout: its items as they are
        truth = [str(t).strip() for t in directions]
        crash = "AttributeError: 'list' object has no attribute 'replace' (route_directions)"
    else:
        truth = [""]
        crash = (
            "KeyError: 'route_directions'"
            if "route_directions" not in record
            else f"AttributeError: route_directions is {type(directions).__name__}, not text"
        )
    answer: Any = record.get("Answer")
    unread = answer is None
    if unread:
        crash = crash or (
            "KeyError: 'Answer'"
            if "Answer" not in record
            else "TypeError: 'NoneType' object is not iterable (a null Answer)"
        )
        answer = [""]
    try:
        iter(answer)
    except TypeError as exc:
        crash, answer, unread = crash or crash_text(exc), [""], True
    exact, k = _steps(truth, answer)
    if not (isinstance(zoom, int) and not isinstance(zoom, bool) and zoom in ZOOMS):
        crash = crash or f"KeyError: {zoom!r} (the published tables know zooms 17, 18, 19)"
    if len(truth) > 1:
        accuracy = (k - 1) / (len(truth) - 1)
    else:
        crash = crash or "ZeroDivisionError: division by zero (a truth of one item)"
        accuracy = math.nan
    why: str | None = None
    if unread:
        connected = False
        why = "no Answer to read: scored as the empty reply"
    elif exact:
        connected = True
    else:
        try:
            check = published_connected(
                record["origin"], record["destination"], answer, conjunction, road_dict
            )
            connected, why = check.connected, check.why
            crash = crash or check.crash
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            connected, why = False, "the connectivity check raises"
            crash = crash or crash_text(exc)
        why = why or "not the shortest route"
    values: dict[str, float | None] = {
        "exact": float(exact),
        "step_accuracy": accuracy,
        "connected": float(connected),
    }
    return Item(key, values, groups, crashed=crash, why=why)


def _zoom_order(z: str) -> tuple[int, float, str]:
    try:
        return (0, float(z), z)
    except ValueError:
        return (1, 0.0, z)


def _row(members: Sequence[Item]) -> dict[str, float]:
    n = len(members)
    if not n:
        return {"n": 0, "SR2": math.nan, "aSA": math.nan, "connectivity": math.nan}
    return {
        "n": n,
        "SR2": sum(i.values["exact"] or 0.0 for i in members) / n,
        "aSA": sum(num(i.values["step_accuracy"]) for i in members) / n,
        "connectivity": sum(i.values["connected"] or 0.0 for i in members) / n,
    }


def table(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """ "all", then "zoom=17", "zoom=18", "zoom=19" always, then any other zoom present: {"n",
    "SR2", "aSA", "connectivity"} (means; nan for a zoom with no file); "all" also has
    "crashed" and "drawn at random"."""
    out = {"all": _row(items)}
    out["all"]["crashed"] = sum(i.crashed is not None for i in items)
    out["all"]["drawn at random"] = 0
    zooms = [str(z) for z in ZOOMS]
    zooms += sorted({i.groups.get("zoom", "None") for i in items} - set(zooms), key=_zoom_order)
    for z in zooms:
        out[f"zoom={z}"] = _row([i for i in items if i.groups.get("zoom", "None") == z])
    return out


def evaluate(
    records: Sequence[tuple[str, Any]],
    *,
    seed: int = 0,
    road_dicts: Mapping[str, dict],
    conjunctions: Mapping[str, dict],
) -> Evaluation:
    """(file name, stored record) pairs, with each file's road_dict and road_conjunction
    (keyed by the same file name) -> the published SRN evaluation (``seed`` unused)."""
    items = [item(k, r, road_dicts[k], conjunctions[k]) for k, r in records]
    tab = table(items)
    notes = []
    notes += crash_note(items, "file(s)", "as not connected")
    for z in ZOOMS:
        if tab[f"zoom={z}"]["n"] == 0:
            notes.append(
                f"zoom {z}: no file; the published run divides by zero there "
                "(ZeroDivisionError); values nan"
            )
    others = [k for k in tab if k.startswith("zoom=") and k[5:] not in {str(z) for z in ZOOMS}]
    if others:
        notes.append(
            f"{', '.join(others)}: the published evaluator knows zooms 17-19 only and "
            "raises KeyError on these files"
        )
    return Evaluation("SRN", items, tab, notes)
