"""Scorers of the navigation tasks: SRN (routes), RLE (route length), MML (marker roads).

SRN: ``parse_route`` reads a JSON list or CartoMapQA's bare bracket list,
splitting on the four action phrases rather than on commas, so a road name
with a comma survives.  ``score_route`` gives exact match (SR^2: same
length, same steps), step accuracy (aSA: the longest matching prefix after
"blue", over the true steps after "blue") and connectivity (the answer is a
drivable path from the blue to the red marker on the map's roads, whatever
its length: each road exists, consecutive roads meet, one-ways are
respected, and each action matches the geometry where it is taken).

``mode="original"`` reproduces the published CartoMapQA scorer's
behaviour, defects included (comma splitting; lists compared by zipping, so
a strict prefix of the truth counts as exact), for comparing numbers with
the paper; the default is the correct one.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cartoqa.geodesy import TURN_ACTIONS, turn_action
from cartoqa.records import NumberTruth, RoadNetwork, RoadPairTruth, RouteTruth

from .answers import MAX_JSON_DEPTH, last_json_value, normalise_name
from .numeric import (
    MAX_MAGNITUDE,
    AnswerParseError,
    check_answer_length,
    final_answer_text,
    parse_number,
)

__all__ = [
    "MAX_ROUTE_STEPS",
    "RouteScore",
    "grouped",
    "mml_correct",
    "parse_road_pair",
    "parse_route",
    "r_squared",
    "rle_metrics",
    "route_connected",
    "score_route",
]

Mode = Literal["cartoqa", "original"]
_ACTION_CANON = {a.lower(): a for a in TURN_ACTIONS}
_ACTION_RE = re.compile(
    "|".join(re.escape(a) for a in sorted(TURN_ACTIONS, key=len, reverse=True)), re.IGNORECASE
)


# ------------------------------------------------------------------ SRN

#: a route answer of more steps than this is unreadable (real routes have tens)
MAX_ROUTE_STEPS = 10_000


def _clean(token: str) -> str:
    """A token without the spaces, commas, quotes and markdown around it."""
    while True:
        out = token.strip().strip(",;").strip().strip("'\"`*")
        if out == token:
            return out
        token = out


def parse_route(text: str, *, mode: Mode = "cartoqa") -> list[str]:
    """The steps of a route answer: ["blue", action, road, ..., "red"] (actions spelled as in
    ``TURN_ACTIONS`` whatever their case)."""
    body = check_answer_length(text).replace("**", "").replace("`", "")
    brackets = re.findall(r"\[([^\[\]]*)\]", body)
    if not brackets:
        raise AnswerParseError(f"no [...] route in {text[:80]!r}")
    content = brackets[-1]
    if content.count(",") >= MAX_ROUTE_STEPS:
        raise AnswerParseError(f"a route of more than {MAX_ROUTE_STEPS:,} steps")
    if mode == "original":  # split the last bracket on commas, as the published scorer did
        return [_clean(t) for t in content.split(",")]
    value = None
    if content.count("{") <= MAX_JSON_DEPTH:  # more could nest too deep for json to read
        try:  # a JSON list of strings: names with commas are quoted, nothing to guess
            value = json.loads(f"[{content}]")
        except ValueError:  # not JSON (or an integer of thousands of digits)
            value = None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [_canon(v) for v in value]
    # a bare list: split on the action phrases, so "Boulevard Albert 1er, Monaco" stays one road
    parts = _ACTION_RE.split(content)
    if len(parts) > MAX_ROUTE_STEPS // 2:
        raise AnswerParseError(f"a route of more than {MAX_ROUTE_STEPS:,} steps")
    actions = [_ACTION_CANON[m.group(0).lower()] for m in _ACTION_RE.finditer(content)]
    if not actions:  # a list, but not a route: the checks will say what is wrong with it
        return [_canon(t) for t in content.split(",")]
    steps = [_clean(parts[0])]
    for action, road in zip(actions, parts[1:], strict=True):
        steps += [action, _clean(road)]
    last = steps[-1]
    m = re.search(r"[,;]\s*['\"]?red['\"]?\s*$", last, re.IGNORECASE)
    if m:
        steps[-1] = _clean(last[: m.start()])
        steps.append("red")
    return steps


def _canon(step: str) -> str:
    """Actions, blue and red in their canonical spelling; road names as written."""
    s = _clean(step)
    low = s.lower()
    if low in ("blue", "red"):
        return low
    return _ACTION_CANON.get(low, s)


@dataclass(frozen=True)
class RouteScore:
    """One SRN answer scored."""

    exact: bool
    """SR^2: the same steps, same length."""
    step_accuracy: float
    """aSA: longest matching prefix after "blue" / true steps after "blue"."""
    connected: bool | None
    """A drivable path from blue to red on the map's roads; None when not scorable."""
    why: str | None = None
    """Why connectivity failed, or why the answer was unreadable."""


def _norm_steps(steps: Sequence[str]) -> list[str]:
    return [normalise_name(s) for s in steps]


def score_route(truth: RouteTruth, answer: str | None, *, mode: Mode = "cartoqa") -> RouteScore:
    """SR^2, aSA and connectivity of one answer."""
    if answer is None:
        return RouteScore(False, 0.0, False if truth.network else None, "no response")
    try:
        steps = parse_route(answer, mode=mode)
    except AnswerParseError as exc:
        return RouteScore(False, 0.0, False if truth.network else None, f"unreadable: {exc}")
    pred, true = _norm_steps(steps), _norm_steps(truth.steps)
    if mode == "original":
        pairs = list(zip(pred, true, strict=False))
        exact = all(a == b for a, b in pairs)
        k = sum(1 for a, b in pairs[1:] if a == b)
    else:
        exact = pred == true
        k = 0
        for a, b in zip(pred[1:], true[1:], strict=False):
            if a != b:
                break
            k += 1
    accuracy = k / max(1, len(true) - 1)
    if truth.network is None:
        return RouteScore(exact, accuracy, None)
    ok, why = route_connected(steps, truth.network)
    return RouteScore(exact, accuracy, ok, why)


def route_connected(steps: Sequence[str], net: RoadNetwork) -> tuple[bool, str | None]:
    """Whether ``steps`` drive from the network's origin to its destination; (False, why) if not.

    Each road is followed along its own directed edges (one-ways respected)
    from where the previous one was left to a node where the next road
    meets it (the junction table) or, for the last road, to the
    destination; each action must be what ``turn_action`` gives for the
    heading change there, starting from heading 0 at the origin.
    """
    if len(steps) < 4 or len(steps) % 2 or _canon(steps[0]) != "blue" or _canon(steps[-1]) != "red":
        return False, "not of the form [blue, action, road, ..., red]"
    pairs = [(_canon(steps[i]), steps[i + 1]) for i in range(1, len(steps) - 1, 2)]
    names = {normalise_name(n): n for n in net.roads}
    legs: list[tuple[str, str]] = []
    for action, road in pairs:
        if action not in TURN_ACTIONS:
            return False, f"{action!r} is not one of the four actions"
        real = names.get(normalise_name(road))
        if real is None:
            return False, f"no road named {road!r} on the map"
        legs.append((action, real))
    out: dict[str, dict[int, list[Any]]] = {}
    for name, edges in net.roads.items():
        adj: dict[int, list[Any]] = defaultdict(list)
        for e in edges:
            adj[e.u].append(e)
        out[name] = adj

    def meets(a: str, b: str, node: int) -> bool:
        if a == b:
            return True
        return node in net.junctions.get("|".join(sorted((a, b))), [])

    def ends(road: str, first: Any) -> dict[int, set[float]]:
        """Nodes reachable along ``road`` after leaving by edge ``first``, with arrival headings.
        Turning back the way one came needs a U-turn step of its own, so a leg never does."""
        found: dict[int, set[float]] = defaultdict(set)
        stack = [first]
        seen = set()
        while stack:
            e = stack.pop()
            if (e.u, e.v) in seen:
                continue
            seen.add((e.u, e.v))
            found[e.v].add(e.heading_end)
            stack.extend(n for n in out[road].get(e.v, []) if n.v != e.u)
        return found

    failures: list[tuple[int, str]] = []
    visited: set[tuple[int, int, float]] = set()
    last = len(legs) - 1
    arrived: tuple[int, float] = (-1, -1.0)  # this very tuple: the step onto the red marker

    def successors(i: int, road: str, turning: list[Any]) -> Iterator[tuple[int, float]]:
        for first in turning:
            for end, headings in ends(road, first).items():
                for h in headings:
                    if i == last:
                        if end == net.destination:
                            yield arrived
                    elif meets(road, legs[i + 1][1], end):
                        yield end, h

    def enter(i: int, node: int, heading: float) -> Iterator[tuple[int, float]] | None:
        """Leg ``i`` taken from ``node`` arriving with ``heading``: where it can lead, or None
        when it cannot be taken (the reason recorded) or was tried before."""
        key = (i, node, round(heading, 1))
        if key in visited:
            return None
        visited.add(key)
        action, road = legs[i]
        firsts = out[road].get(node, [])
        if not firsts:
            failures.append((i, f"{road!r} cannot be driven from where the route reaches it"))
            return None
        turning = [f for f in firsts if turn_action(heading, f.heading_start) == action]
        if not turning:
            failures.append((i, f"{action!r} onto {road!r} does not match the map"))
            return None
        return successors(i, road, turning)

    # depth first over (leg, node, heading), with a stack of its own: a route of thousands of
    # legs is as deep as it is long, far past Python's recursion limit
    first_leg = enter(0, net.origin, 0.0)
    stack: list[tuple[int, Iterator[tuple[int, float]]]] = [(0, first_leg)] if first_leg else []
    while stack:
        i, todo = stack[-1]
        step = next(todo, None)
        if step is None:  # every way on from here tried
            stack.pop()
            road = legs[i][1]
            if i == last:
                failures.append((i, f"{road!r} does not lead to the red marker"))
            else:
                failures.append((i, f"{road!r} does not meet {legs[i + 1][1]!r} on the way"))
            continue
        if step is arrived:
            return True, None
        after = enter(i + 1, *step)
        if after is not None:
            stack.append((i + 1, after))
    if not failures:
        return False, "not connected"
    deepest = max(i for i, _ in failures)  # the furthest the answer got, its first problem
    return False, next(msg for i, msg in failures if i == deepest)


# ------------------------------------------------------------------ MML


def parse_road_pair(text: str) -> tuple[str, str]:
    """The two road names of an MML answer: JSON {"road_1": ..., "road_2": ...}, or two names
    joined by "and", "&", ";" or a new line after FINAL ANSWER."""
    check_answer_length(text)
    try:
        value = last_json_value(text.replace("```json", "").replace("```", ""), "{")
    except AnswerParseError:
        value = None
    if isinstance(value, dict):
        vals = [v for k, v in value.items() if str(k).lower().startswith("road")]
        if len(vals) == 2 and all(isinstance(v, str) for v in vals):
            return vals[0].strip(), vals[1].strip()
    final = final_answer_text(text)
    # "(?<!\s)": a run of spaces is tried from its start only (from each of its spaces, a long
    # run would cost time quadratic in its length; the matches are the same)
    parts = [p for p in re.split(r"(?<!\s)\s+(?:and|&)\s+|;|\n", final) if p.strip()]
    if len(parts) == 2:
        return _clean(parts[0]), _clean(parts[1])
    raise AnswerParseError(f"no pair of road names in {text[:80]!r}")


def mml_correct(truth: RoadPairTruth, answer: str | None) -> bool:
    """The pair matches in either order (after ``normalise_name``)."""
    if answer is None:
        return False
    try:
        a, b = parse_road_pair(answer)
    except AnswerParseError:
        return False
    want = sorted([normalise_name(truth.road_1), normalise_name(truth.road_2)])
    return sorted([normalise_name(a), normalise_name(b)]) == want


# ------------------------------------------------------------------ RLE


def rle_value(truth: NumberTruth, answer: str | None) -> float | None:
    """The length an RLE answer gives, in the truth's unit (None when unreadable).

    The first line holds the answer; a value in the other unit (m vs ft) is
    converted through the truth's ``equivalents``.
    """
    if not answer or not answer.strip():
        return None
    try:
        first = check_answer_length(answer).strip().splitlines()[0]
        got = parse_number(final_answer_text(first))
    except AnswerParseError:
        return None
    if got.unit and truth.unit and got.unit != truth.unit and got.unit in truth.equivalents:
        return got.value * truth.value / truth.equivalents[got.unit]
    return got.value


def r_squared(predicted: Sequence[float], truth: Sequence[float]) -> float:
    """1 - SS_res / SS_tot (nan for fewer than two truths, constant truths, or a sum of
    squares too large for a float: never an ``OverflowError``)."""
    if len(truth) < 2:
        return math.nan
    mean = sum(truth) / len(truth)
    ss_tot = sum((t - mean) * (t - mean) for t in truth)  # x * x gives inf, x ** 2 raises
    if ss_tot == 0 or not math.isfinite(ss_tot):
        return math.nan
    ss_res = sum((p - t) * (p - t) for p, t in zip(predicted, truth, strict=True))
    if not math.isfinite(ss_res):
        return math.nan
    return 1 - ss_res / ss_tot


def rle_metrics(pairs: Sequence[tuple[float | None, float]]) -> dict[str, float]:
    """RMSE, MAE, MAPE and r^2 of (predicted, true) lengths; unreadable answers (and lengths
    not finite or larger than ``MAX_MAGNITUDE``) are counted in ``unanswered`` and left out
    of the error metrics (reported, not guessed), so every metric is finite or nan."""
    got = [
        (p, t) for p, t in pairs if p is not None and math.isfinite(p) and abs(p) <= MAX_MAGNITUDE
    ]
    n = len(got)
    if n == 0:
        return {
            "n": len(pairs),
            "unanswered": len(pairs),
            "rmse": math.nan,
            "mae": math.nan,
            "mape": math.nan,
            "r2": math.nan,
        }
    errors = [p - t for p, t in got]
    return {
        "n": len(pairs),
        "unanswered": len(pairs) - n,
        "rmse": math.sqrt(sum(e * e for e in errors) / n),
        "mae": sum(abs(e) for e in errors) / n,
        "mape": sum(abs(p - t) / abs(t) for p, t in got if t) / n,
        "r2": r_squared([p for p, _ in got], [t for _, t in got]),
    }


# ------------------------------------------------------------------ grouping


def grouped(
    items: Iterable[Any], key: Callable[[Any], Any], reduce: Callable[[list[Any]], Any]
) -> dict[Any, Any]:
    """``reduce`` of the items in each group of ``key`` (plus "all")."""
    groups: dict[Any, list[Any]] = defaultdict(list)
    everything = []
    for item in items:
        groups[key(item)].append(item)
        everything.append(item)
    out = {k: reduce(v) for k, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}
    out["all"] = reduce(everything)
    return out
