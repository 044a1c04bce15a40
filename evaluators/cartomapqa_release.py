"""SRN responses in the original CartoMapQA release layout, scored both ways.

The published evaluation reads three folders holding one JSON file per
sample, under the same file name:

- responses: ``{"Answer": "[blue, ...]", "route_directions": "[blue, ...]",
  "origin": [node, lat, lon], "destination": [node, lat, lon],
  "zoom_level": 17}``;
- ``road_dict``: road name -> link id -> ``[[node, lat, lon], ...]``;
- ``road_conjunction``: road B -> road A -> ``[[node, lat, lon], ...]``, the
  nodes where they meet.

``score_release`` gives, per zoom and overall, SR^2 and aSA in both modes
("original": the published scorer's behaviour, comma splitting and lists
compared by zipping; "cartoqa": exact comparison, comma-safe parsing) and
connectivity as the published scorer computes it (an exact answer counts
as connected; otherwise the origin must lie on the first road and the
destination on the last, consecutive roads must meet, and the actions are
recomputed from the straight lines between origin, junctions and
destination).  The release has no one-way or road-geometry data, so the
stricter connectivity of ``evaluators.navigation`` cannot be computed from
it.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError
from cartoqa.geodesy import initial_bearing_deg, turn_action

from .answers import normalise_name
from .navigation import parse_route
from .numeric import AnswerParseError

__all__ = ["original_connected", "score_release"]


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.replace("[", "").replace("]", "").split(",")]


def _directions(points: list[list[Any]], roads: list[str]) -> list[str]:
    out, heading = ["blue"], 0.0
    for (_, lat1, lon1), (_, lat2, lon2), road in zip(points, points[1:], roads, strict=False):
        nxt = float(initial_bearing_deg(float(lat1), float(lon1), float(lat2), float(lon2)))
        out += [turn_action(heading, nxt), road]
        heading = nxt
    return [*out, "red"]


def original_connected(
    origin: list[Any], dest: list[Any], path: list[str], conj: dict, road_dict: dict
) -> bool:
    """Connectivity as the published scorer checks it (see the module docstring)."""
    if len(path) < 3 or path[0] != "blue" or path[-1] != "red":
        return False
    first, last = path[2], path[-2]
    if first not in road_dict or last not in road_dict:
        return False

    def on(road: str, node: list[Any]) -> bool:
        return any(str(node[0]) == str(n[0]) for link in road_dict[road].values() for n in link)

    if not on(first, origin) or not on(last, dest):
        return False
    words = ("left", "right", "straight", "u-turn")
    streets = [p for p in path if p not in ("blue", "red") and not any(w in p for w in words)]
    if len(streets) <= 1:
        return True
    if any(s not in road_dict for s in streets):
        return False
    roads = [streets[0]]
    for s in streets[1:]:
        if s != roads[-1]:
            roads.append(s)
    junctions: list[list[Any]] = []
    for a, b in itertools.pairwise(roads):
        if a not in conj.get(b, {}):
            return False
        junctions.append(conj[b][a][0])
    expected = _directions([origin, *junctions, dest], roads)
    return all(x == y for x, y in zip(path, expected, strict=False))


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        # ValueError: bad JSON, or an integer of thousands of digits; RecursionError: nested
        # about a thousand deep
        raise DatasetError(f"{path}: not a readable JSON file ({str(exc)[:200]})") from None


def score_release(responses: Path, road_dict: Path, road_conjunction: Path) -> dict[str, dict]:
    """Group ("all", "zoom=17", ...) -> metric -> value, over every response file."""
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
        truth = _split(data["route_directions"])
        answer = data.get("Answer") or ""
        try:
            got = parse_route(answer if "[" in answer else f"[{answer}]", mode="original")
        except AnswerParseError:
            got = []
        zipped = list(zip(got, truth, strict=False))
        success = all(a == b for a, b in zipped)
        prefix = 0
        for a, b in zipped:
            if a != b:
                break
            prefix += 1
        try:
            exact_steps = parse_route(answer if "[" in answer else f"[{answer}]")
        except AnswerParseError:
            exact_steps = []
        true_n = [normalise_name(t) for t in truth]
        got_n = [normalise_name(t) for t in exact_steps]
        k = 0
        for a, b in zip(got_n[1:], true_n[1:], strict=False):
            if a != b:
                break
            k += 1
        connected = success or original_connected(
            data["origin"], data["destination"], got, conj, roads
        )
        row = {
            "SR2 (original)": float(success),
            "aSA (original)": max(0, prefix - 1) / max(1, len(truth) - 1),
            "SR2": float(got_n == true_n),
            "aSA": k / max(1, len(truth) - 1),
            "connectivity (original)": float(connected),
        }
        rows["all"].append(row)
        rows[f"zoom={data.get('zoom_level')}"].append(row)
    return {
        group: {"n": len(items), **{m: sum(r[m] for r in items) / len(items) for m in items[0]}}
        for group, items in rows.items()
    }
