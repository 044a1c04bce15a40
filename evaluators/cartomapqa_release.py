"""SRN responses in the original CartoMapQA release layout, scored both ways.

The published evaluation reads three folders holding one JSON file per
sample, under the same file name:

- responses: ``{"Answer": ["blue", ...], "route_directions": "[blue, ...]",
  "origin": [node, lat, lon], "destination": [node, lat, lon],
  "zoom_level": 17}``, where ``Answer`` is the list the published parser
  made of the reply;
- ``road_dict``: road name -> link id -> ``[[node, lat, lon], ...]``;
- ``road_conjunction``: road B -> road A -> ``[[node, lat, lon], ...]``, the
  nodes where A leads onto B.

``score_release`` gives, per zoom and overall:

- "original": SR^2, aSA and connectivity by the published arithmetic
  (``evaluators.navigation``, ``mode="original"``): the stored ``Answer``
  list is used as it is, item for item, and the truth is
  ``route_directions`` split on commas, its items stripped, then given
  the published continue-straight normalisation.  ``crashed (original)``
  counts the answers on which the published code raises ([blue, red]; a
  road that is no key of the junction table; a junction listed with no
  node; a missing or null ``Answer``): they are scored here, as not
  connected (a missing ``Answer`` as the empty reply), where the published
  run would stop;
- the correct SR^2 and aSA (``step_scores``): the same list, each item
  cleaned of the quotes, backticks and markdown around it and compared
  after ``normalise_name``, against the truth's items cleaned alike, a
  leading "blue" optional.  The release has no one-way or road-geometry
  data, so the stricter connectivity of ``evaluators.navigation`` cannot be
  computed from it.

An ``Answer`` stored as text (not the release's layout) is first parsed as
the published parser parses a reply ("original"), and by
``parse_route`` (the correct scores).  The published code knows zoom levels
17 to 19 only; here every zoom in the files gets its group.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError

from .navigation import (
    canonical_step,
    parse_route,
    published_connected,
    published_normalisation,
    published_parse,
    published_step_scores,
    step_scores,
)
from .numeric import AnswerParseError

__all__ = ["original_connected", "score_release"]

#: the columns of the table, in order (``crashed (original)`` is a count, the rest means)
METRICS = (
    "SR2 (original)",
    "aSA (original)",
    "connectivity (original)",
    "crashed (original)",
    "SR2",
    "aSA",
)


def original_connected(
    origin: list[Any], dest: list[Any], path: list[str], conj: dict, road_dict: dict
) -> bool:
    """Connectivity as the published scorer checks it, not counting its rule that an exact
    answer is connected (``published_connected``; an answer it would crash on is not)."""
    return published_connected(origin, dest, path, conj, road_dict).connected


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        # ValueError: bad JSON, or an integer of thousands of digits; RecursionError: nested
        # about a thousand deep
        raise DatasetError(f"{path}: not a readable JSON file ({str(exc)[:200]})") from None


def _published_items(text: str) -> list[str]:
    """A list written as text split as the published evaluator splits ``route_directions``."""
    return [t.strip() for t in text.replace("[", "").replace("]", "").split(",")]


def _answer(f: Path, data: dict[str, Any]) -> tuple[list[str], list[str] | None, str | None]:
    """(items for the published arithmetic, steps for the correct scores or None when
    unreadable, what the published code raises on it or None)."""
    answer = data.get("Answer")
    if answer is None:  # the published evaluator: KeyError, or TypeError zipping None
        what = "KeyError: no 'Answer'" if "Answer" not in data else "TypeError: 'Answer' is null"
        return [""], None, what
    if isinstance(answer, list):
        if not all(isinstance(a, str) for a in answer):
            bad = next(a for a in answer if not isinstance(a, str))
            raise DatasetError(
                f"{f}: 'Answer' holds {bad!r}, not text; the release stores the parsed route "
                "as a list of strings"
            )
        return list(answer), [canonical_step(a) for a in answer], None
    if isinstance(answer, str):
        crash = None
        try:
            items, crash = published_parse(answer)
        except AnswerParseError:  # over cartoqa's limits: read as a reply that is no route
            items = None
        published = [""] if items is None else items  # the published parser raises: as empty
        try:
            steps: list[str] | None = parse_route(answer)
        except AnswerParseError:
            steps = None
        return published, steps, crash
    raise DatasetError(
        f"{f}: 'Answer' is {type(answer).__name__} {str(answer)[:80]!r}; the release stores "
        "the parsed route as a list of strings"
    )


def _truth(f: Path, data: dict[str, Any]) -> list[str]:
    value = data.get("route_directions")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = [v.strip() for v in value]
    elif isinstance(value, str):
        items = _published_items(value)
    else:
        raise DatasetError(
            f"{f}: 'route_directions' is {str(value)[:80]!r}; the release writes the route as "
            "text, '[blue, <action>, <road>, ..., red]'"
        )
    if len(items) < 2:
        raise DatasetError(
            f"{f}: 'route_directions' {value!r} is no route; it must run from blue to red"
        )
    return items


def _score_file(f: Path, data: Any, conj: Any, roads: Any) -> dict[str, float]:
    if not isinstance(data, dict):
        raise DatasetError(f"{f}: a response file holds one JSON object, not {type(data).__name__}")
    truth = _truth(f, data)
    published, steps, crash = _answer(f, data)
    true = published_normalisation(truth) or truth
    exact, accuracy = published_step_scores(true, published)
    connected = exact
    if not exact and crash is None:
        try:
            check = published_connected(data["origin"], data["destination"], published, conj, roads)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise DatasetError(
                f"{f}: its origin, destination, road_dict or road_conjunction is not in the "
                f"release's layout ({type(exc).__name__}: {str(exc)[:120]})"
            ) from None
        connected, crash = check.connected, check.crash
    if steps is None:
        right, share = False, 0.0
    else:
        kept = [canonical_step(t) for t in truth] if isinstance(data.get("Answer"), list) else None
        if kept is None:  # an Answer written as text: the truth read the same way
            try:
                kept = parse_route(str(data["route_directions"]))
            except AnswerParseError:
                kept = [canonical_step(t) for t in truth]
        right, share = step_scores(steps, kept)
    return {
        "SR2 (original)": float(exact),
        "aSA (original)": accuracy,
        "connectivity (original)": float(connected),
        "crashed (original)": float(crash is not None),
        "SR2": float(right),
        "aSA": share,
    }


def score_release(responses: Path, road_dict: Path, road_conjunction: Path) -> dict[str, dict]:
    """Group ("all", "zoom=17", ...) -> metric -> value, over every response file: ``n``, the
    means of the scores and the count ``crashed (original)`` (see the module docstring)."""
    files = sorted(p for p in Path(responses).glob("*.json"))
    if not files:
        raise DatasetError(f"{responses} holds no *.json response files")
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for f in files:
        data = _load(f)
        for folder in (road_dict, road_conjunction):
            if not (Path(folder) / f.name).is_file():
                raise DatasetError(f"{Path(folder) / f.name} is missing: every response needs one")
        roads = _load(Path(road_dict) / f.name)
        conj = _load(Path(road_conjunction) / f.name)
        row = _score_file(f, data, conj, roads)
        rows["all"].append(row)
        rows[f"zoom={data.get('zoom_level')}"].append(row)
    out: dict[str, dict] = {}
    for group, items in rows.items():
        values: dict[str, Any] = {"n": len(items)}
        for m in METRICS:
            total = sum(r[m] for r in items)
            values[m] = int(total) if m == "crashed (original)" else total / len(items)
        out[group] = values
    return out
