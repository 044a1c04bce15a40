"""Scorers of the navigation tasks: SRN (routes), RLE (route length), MML (marker roads).

SRN: ``parse_route`` reads a JSON list or CartoMapQA's bare bracket list
(or, with no brackets, the list written as the final answer: "blue, turn
left, Oak Road, red"), splitting on the four action phrases rather than on
commas, so a road name with a comma survives; "blue" and "red" written as
items of their own are steps of their own wherever they stand, never part
of a road's name.  ``score_route`` gives exact match (SR^2: same
length, same steps), step accuracy (aSA: the longest matching prefix after
"blue", over the true steps after "blue") and connectivity (the answer is a
drivable path from the blue to the red marker on the map's roads, whatever
its length: each road exists, consecutive roads meet, one-ways are
respected, and each action matches the geometry where it is taken).  An
answer that leaves out the leading "blue" is read as if it had written it:
"blue" is where every route starts, so it says nothing about the route,
and the three metrics score the steps after it alike.  "red" is not
implied: it is the answer's claim that the route arrives.  An answer with
"red" before its end (it arrives, then drives on) is not exact, its aSA
counts its steps up to the first difference as for any answer (so all of
them, when it reached red the true way), and it is not connected (the
route goes on past the red marker); a "blue" after the first step is not
connected either.

The published CartoMapQA arithmetic is ``evaluators.published`` (used through
``cartoqa/tasks/release/features.py`` and ``routes.py``); the ``published_*`` pieces here
(the published parser, normalisation, connectivity check and road tables) are what
``evaluators.published.srn`` and ``cartoqa.tasks.release`` build it from.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cartoqa.geodesy import TURN_ACTIONS, turn_action
from cartoqa.records import NumberTruth, RoadNetwork, RoadPairTruth, RouteTruth

from . import metrics
from .answers import MAX_JSON_DEPTH, last_json_value, normalise_name
from .numeric import (
    MAX_MAGNITUDE,
    AnswerParseError,
    NumberAnswer,
    answer_body,
    check_answer_length,
    final_answer_text,
    in_unit,
    parse_number,
)

__all__ = [
    "MAX_ROUTE_STEPS",
    "PUBLISHED_ACTION_WORDS",
    "PublishedCheck",
    "RouteScore",
    "canonical_step",
    "grouped",
    "mml_correct",
    "parse_road_pair",
    "parse_route",
    "published_bearing",
    "published_connected",
    "published_directions",
    "published_normalisation",
    "published_parse",
    "published_tables",
    "published_turn",
    "r_squared",
    "rle_length",
    "rle_metrics",
    "rle_value",
    "route_connected",
    "score_route",
    "step_scores",
]

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


def parse_route(text: str) -> list[str]:
    """The steps of a route answer: ["blue", action, road, ..., "red"] (actions spelled as in
    ``TURN_ACTIONS`` whatever their case).

    It reads the last [...] list of the answer (end-of-turn tokens removed:
    ``evaluators.numeric.answer_body``); an answer with no brackets is read from its final
    answer (after the last ``FINAL ANSWER:``, else its last non-empty line), a leading
    label ("Answer:", "The route is:") and a closing full stop aside, and is unreadable
    when that holds neither an action nor a colour step.  A JSON list of strings is taken
    as it is; a bare list is split on the four action phrases (so a road name with a comma
    stays one road), and "blue" and "red", written as items of their own, are steps of
    their own wherever they stand ("Oak Road, red, turn left" is a road, red, an action):
    never part of a road's name."""
    body = answer_body(text).replace("**", "").replace("`", "")
    brackets = re.findall(r"\[([^\[\]]*)\]", body)
    content = brackets[-1] if brackets else _bare_route(body)
    if content.count(",") >= MAX_ROUTE_STEPS:
        raise AnswerParseError(f"a route of more than {MAX_ROUTE_STEPS:,} steps")
    value = None
    if content.count("{") <= MAX_JSON_DEPTH:  # more could nest too deep for json to read
        try:  # a JSON list of strings: names with commas are quoted, nothing to guess
            value = json.loads(f"[{content}]")
        except ValueError:  # not JSON (or an integer of thousands of digits)
            value = None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [canonical_step(v) for v in value]
    # a bare list: split on the action phrases, so "Boulevard Albert 1er, Monaco" stays one road
    actions = list(_ACTION_RE.finditer(content))
    if len(actions) > MAX_ROUTE_STEPS // 2:
        raise AnswerParseError(f"a route of more than {MAX_ROUTE_STEPS:,} steps")
    if not actions:  # a list, but not a route: the checks will say what is wrong with it
        return [canonical_step(t) for t in content.split(",")]
    steps = _segment_steps(content[: actions[0].start()], after_action=False)
    for m, after in itertools.zip_longest(actions, actions[1:]):
        steps.append(_ACTION_CANON[m.group(0).lower()])
        segment = content[m.end() : after.start() if after else len(content)]
        steps += _segment_steps(segment, after_action=True)
    return steps


# "blue" or "red" written as an item of its own: between commas (or semicolons), or at an end
_COLOUR_ITEM = re.compile(r"(?:^|[,;])\s*['\"]?(blue|red)['\"]?\s*(?=[,;]|$)", re.IGNORECASE)
# a label before a route written without brackets: "Answer:", "The route is:", "Route -"
_ROUTE_LABEL = re.compile(
    r"^[^,:\n]{0,60}?(?::|\bis\b\s*:?|\s-)\s*['\"]?(?=(?:blue|red)\b|" + _ACTION_RE.pattern + ")",
    re.IGNORECASE,
)


def _bare_route(body: str) -> str:
    """The route of an answer written without brackets: its final answer, less a leading
    label and a closing full stop; ``AnswerParseError`` when that is no route (neither an
    action phrase nor a colour step)."""
    text = _ROUTE_LABEL.sub("", final_answer_text(body), count=1).strip().rstrip(".!").strip()
    if _ACTION_RE.search(text) is None and _COLOUR_ITEM.search(text) is None:
        raise AnswerParseError(f"no route ([blue, action, road, ..., red]) in {body[:80]!r}")
    return text


def _segment_steps(segment: str, *, after_action: bool) -> list[str]:
    """The steps between two action phrases: the road named there, with each colour step
    ("blue", "red") written beside it as a step of its own.  After an action, a segment
    that holds nothing at all is the empty road (an action with no road named)."""
    out: list[str] = []
    pos = 0
    for m in _COLOUR_ITEM.finditer(segment):
        road = _clean(segment[pos : m.start()])
        if road:
            out.append(road)
        out.append(m.group(1).lower())
        pos = m.end()
    road = _clean(segment[pos:])
    if road:
        out.append(road)
    if after_action and not out:
        out.append("")
    return out


def canonical_step(step: str) -> str:
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


def step_scores(steps: Sequence[str], truth: Sequence[str]) -> tuple[bool, float]:
    """SR^2 and aSA of parsed ``steps`` against the ``truth`` steps, names compared after
    ``normalise_name``.  A leading "blue" is optional: the steps after it (or all of them, when
    the answer does not begin with "blue") are compared with the true steps after "blue"."""
    pred = [normalise_name(s) for s in steps]
    true = [normalise_name(s) for s in truth]
    rest = pred[1:] if pred[:1] == ["blue"] else pred
    k = 0
    for a, b in zip(rest, true[1:], strict=False):
        if a != b:
            break
        k += 1
    return rest == true[1:], k / max(1, len(true) - 1)


def score_route(truth: RouteTruth, answer: str | None) -> RouteScore:
    """SR^2, aSA and connectivity of one answer."""
    if answer is None:
        return RouteScore(False, 0.0, False if truth.network else None, "no response")
    try:
        steps = parse_route(answer)
    except AnswerParseError as exc:
        return RouteScore(False, 0.0, False if truth.network else None, f"unreadable: {exc}")
    exact, accuracy = step_scores(steps, truth.steps)
    if truth.network is None:
        return RouteScore(exact, accuracy, None)
    if steps[:1] != ["blue"]:  # read as if it began with "blue", as for SR^2 and aSA
        steps = ["blue", *steps]
    ok, why = route_connected(steps, truth.network)
    return RouteScore(exact, accuracy, ok, why)


# ------------------------------------------------------------------ SRN, as published

#: the words that make an item of an answer an action for the published connectivity check
#: (substrings, case-sensitive: "Wright Street" is read as an action)
PUBLISHED_ACTION_WORDS = ("left", "right", "straight", "u-turn")
_STRAIGHT = "continue straight"


def published_parse(text: str) -> tuple[list[str] | None, str | None]:
    """(The items the published parser makes of a reply, None), or (None, what it raises).
    AnswerParseError when the reply is over cartoqa's limits (``MAX_ANSWER_CHARS``,
    ``MAX_ROUTE_STEPS``)."""
    body = check_answer_length(text).strip()
    for gone in ("**Answer:**", "*", "Answer:", "[", "]", "<|eot|>"):
        body = body.replace(gone, "")
    if body.count(",") >= MAX_ROUTE_STEPS:
        raise AnswerParseError(f"a route of more than {MAX_ROUTE_STEPS:,} steps")
    steps = published_normalisation([item.strip() for item in body.split(",")])
    if steps is None:
        return None, "IndexError (pop index out of range) in its continue-straight normalisation"
    return steps, None


def published_normalisation(steps: Sequence[str]) -> list[str] | None:
    """``steps`` with each "continue straight" that stands between two equal items removed
    together with the item after it, as the published code removes them: every such pair is
    marked first, then the marked positions are popped from the highest down, so a position
    marked twice (inside a run of "continue straight") pops the item that has moved into it.
    None where that pop runs past the end (the published code raises IndexError there).
    Linear time: the first item still present after a position is found through a table of
    forward links that each lookup shortens."""
    n = len(steps)
    marks: list[int] = []
    for i in range(1, n - 1):
        if steps[i] == _STRAIGHT and steps[i + 1] == steps[i - 1]:
            marks += (i, i + 1)
    if not marks:
        return list(steps)
    gone = [False] * n
    onward = list(range(n + 1))  # onward[j]: towards the first position >= j still present

    def present_from(j: int) -> int:
        root = j
        while onward[root] != root:
            root = onward[root]
        while onward[j] != root:
            onward[j], j = root, onward[j]
        return root

    for i in sorted(marks, reverse=True):
        # positions below i are all present, so the item at i is the first one present from i
        j = present_from(i)
        if j >= n:
            return None
        gone[j] = True
        onward[j] = j + 1
    return [s for s, g in zip(steps, gone, strict=True) if not g]


def published_bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """The initial great-circle bearing, degrees clockwise from north in [0, 360), computed as
    the published scorer does (each longitude turned to radians before the difference)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    d = math.radians(lon2) - math.radians(lon1)
    x = math.sin(d) * math.cos(p2)
    y = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(d)
    return (math.degrees(math.atan2(x, y)) + 360) % 360


def published_turn(old: float, new: float) -> str:
    """The action for a change of bearing, with the published thresholds: the clockwise change
    under 40 or over 320 degrees is straight on, under 140 right, over 220 left, else a U-turn."""
    diff = (new - old + 360) % 360
    if diff < 40 or diff > 320:
        return _STRAIGHT
    if diff < 140:
        return "turn right"
    if diff > 220:
        return "turn left"
    return "make a U-turn and continue straight"


def published_directions(points: Sequence[Sequence[Any]], roads: Sequence[str]) -> list[str]:
    """[blue, action, road, ..., red] for the straight lines between ``points`` ([node, lat,
    lon]: origin, the junctions, destination), one road per line, from bearing 0."""
    out, heading = ["blue"], 0.0
    for a, b, road in zip(points, points[1:], roads, strict=False):
        bearing = published_bearing(float(a[1]), float(a[2]), float(b[1]), float(b[2]))
        out += [published_turn(heading, bearing), road]
        heading = bearing
    return [*out, "red"]


@dataclass(frozen=True)
class PublishedCheck:
    """The published connectivity check of one answer."""

    connected: bool
    why: str | None = None
    """Why it failed."""
    crash: str | None = None
    """What the published code raises here (the answer is then not connected)."""


def _holds(links: Any, point: Sequence[Any]) -> bool:
    return any(str(point[0]) == str(n[0]) for link in links for n in links[link])


def published_connected(
    origin: Sequence[Any],
    destination: Sequence[Any],
    path: Sequence[str],
    conj: Mapping[str, Mapping[str, Sequence[Any]]],
    road_dict: Mapping[str, Mapping[str, Sequence[Any]]],
) -> PublishedCheck:
    """Connectivity of the items ``path`` as the published scorer checks it (not counting its
    rule that an exact answer is connected).  ``origin`` and ``destination`` are ``[node, lat,
    lon]``; ``road_dict`` road -> link -> nodes; ``conj`` road B -> road A -> the junctions
    where A leads onto B (``conj[next][previous]``).

    The path must start with "blue" and end with "red"; its items 2 and -2 must be roads of
    the dictionary holding the origin's and the destination's node.  The roads are the items
    that are not "blue" or "red" and contain none of ``PUBLISHED_ACTION_WORDS``; with at most
    one of them the path passes.  Otherwise every one must be in the dictionary, consecutive
    distinct ones in the junction table, and the path must agree, item by item up to the
    shorter, with ``published_directions`` through the first junction node of each pair.
    """
    if not path:
        return PublishedCheck(False, "an empty answer", "IndexError: the answer has no items")
    if path[0] != "blue" or path[-1] != "red":
        return PublishedCheck(False, "does not start with 'blue' and end with 'red'")
    if len(path) < 3:
        return PublishedCheck(False, "names no road", "IndexError: [blue, red] has no item 2")
    first, last = path[2], path[-2]
    for road in (first, last):
        if road not in road_dict:
            return PublishedCheck(
                False, f"{road!r} (item {2 if road == first else -2}) is not in the road dictionary"
            )
    if not _holds(road_dict[first], origin):
        return PublishedCheck(False, f"the blue marker is not on {first!r}")
    if not _holds(road_dict[last], destination):
        return PublishedCheck(False, f"the red marker is not on {last!r}")
    streets = [
        p
        for p in path
        if p not in ("blue", "red") and not any(w in p for w in PUBLISHED_ACTION_WORDS)
    ]
    if len(streets) <= 1:
        return PublishedCheck(True)
    for name in streets:
        if name not in road_dict:
            return PublishedCheck(False, f"no road named {name!r} in the road dictionary")
    roads = [streets[0]]
    for name in streets[1:]:
        if name != roads[-1]:
            roads.append(name)
    junctions = []
    for prev, nxt in itertools.pairwise(roads):
        if nxt not in conj:
            return PublishedCheck(
                False,
                f"{nxt!r} is not in the junction table",
                f"KeyError: {nxt!r} is not a key of the junction table",
            )
        if prev not in conj[nxt]:
            return PublishedCheck(False, f"{prev!r} does not lead onto {nxt!r}")
        if not conj[nxt][prev]:
            return PublishedCheck(
                False,
                f"{prev!r} and {nxt!r} meet at no node",
                f"IndexError: the junction table lists no node for {nxt!r} <- {prev!r}",
            )
        junctions.append(conj[nxt][prev][0])
    expected = published_directions([origin, *junctions, destination], roads)
    for got, want in zip(path, expected, strict=False):
        if got != want:
            return PublishedCheck(False, f"{got!r} where the published geometry gives {want!r}")
    return PublishedCheck(True)


def published_tables(
    net: RoadNetwork,
) -> tuple[list[Any], list[Any], dict[str, dict[str, list[Any]]], dict[str, dict[str, list[Any]]]]:
    """(origin, destination, junction table, road dictionary) of a ``RoadNetwork`` in the
    release's form: nodes as [node, lat, lon]; the road dictionary road -> one link -> its
    nodes; the junction table both ways round for each pair of roads that meet (a road that
    meets none is not a key of it, as the published code then raises KeyError)."""

    def point(n: int) -> list[Any]:
        lat, lon = net.nodes.get(str(n), (math.nan, math.nan))
        return [n, lat, lon]

    road_dict = {
        name: {"0": [[n] for n in sorted({e.u for e in edges} | {e.v for e in edges})]}
        for name, edges in net.roads.items()
    }
    conj: dict[str, dict[str, list[Any]]] = {}
    for pair, nodes in net.junctions.items():
        # "A|B", the names sorted: the split that gives two of the map's roads
        splits = [
            (pair[:i], pair[i + 1 :])
            for i, c in enumerate(pair)
            if c == "|" and pair[:i] in net.roads and pair[i + 1 :] in net.roads
        ]
        for a, b in splits[:1]:
            conj.setdefault(a, {})[b] = [point(n) for n in nodes]
            conj.setdefault(b, {})[a] = [point(n) for n in nodes]
    return point(net.origin), point(net.destination), conj, road_dict


def route_connected(steps: Sequence[str], net: RoadNetwork) -> tuple[bool, str | None]:
    """Whether ``steps`` drive from the network's origin to its destination; (False, why) if not.

    Each road is followed along its own directed edges (one-ways respected)
    from where the previous one was left to a node where the next road
    meets it (the junction table) or, for the last road, to the
    destination; each action must be what ``turn_action`` gives for the
    heading change there, starting from heading 0 at the origin.
    """
    for i, step in enumerate(steps[1:-1], 2):
        colour = canonical_step(step)
        if colour == "red":
            return (
                False,
                f"'red' at step {i} of {len(steps)}: the route goes on past the red marker",
            )
        if colour == "blue":
            return False, f"'blue' at step {i} of {len(steps)}: a route leaves the blue marker once"
    if (
        len(steps) < 4
        or len(steps) % 2
        or canonical_step(steps[0]) != "blue"
        or canonical_step(steps[-1]) != "red"
    ):
        return False, "not of the form [blue, action, road, ..., red]"
    pairs = [(canonical_step(steps[i]), steps[i + 1]) for i in range(1, len(steps) - 1, 2)]
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
        reached = next(todo, None)
        if reached is None:  # every way on from here tried
            stack.pop()
            road = legs[i][1]
            if i == last:
                failures.append((i, f"{road!r} does not lead to the red marker"))
            else:
                failures.append((i, f"{road!r} does not meet {legs[i + 1][1]!r} on the way"))
            continue
        if reached is arrived:
            return True, None
        after = enter(i + 1, *reached)
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
    text = answer_body(text)
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


# a dash before the first number of a length: a list dash ("- 3000 m"), or after a label
# ("Length: -3000 m"); never a minus sign, as a length is never negative
_LIST_DASH = re.compile(r"^(\D*?)(?<![\w.])[-\u2013\u2014]\s*(?=\.?\d)")
# the minus sign proper (U+2212) before the first number: a negative length, which is no answer
_MINUS_SIGN = re.compile(r"^\D*?\u2212\s*(?=\.?\d)")


def parse_first_line_number(answer: str) -> NumberAnswer:
    """The length (and its unit) on the first line of an answer: RLE's layout (end-of-turn
    tokens removed: ``evaluators.numeric.answer_body``).  A length is never negative: a
    "-" (or an en or em dash) before the first number is a list dash or a dash after a
    label ("-3000", "- 3000 m", "Length: -3000 m" read 3000), and the minus sign proper,
    U+2212 ("\u22123000"), makes the answer unreadable: it writes a negative length, which no
    route has."""
    body = answer_body(answer)
    first = body.strip().splitlines()[0] if body.strip() else ""
    text = final_answer_text(first)
    if _MINUS_SIGN.match(text):
        raise AnswerParseError(f"a negative length: {text[:40]!r} (a route has no negative length)")
    return parse_number(_LIST_DASH.sub(r"\1", text, count=1))


def rle_length(truth: NumberTruth, answer: str | None) -> float:
    """The length an RLE answer gives, in the truth's unit: the number on the first line,
    converted from any length unit written ("0.3 km", "984 ft", "328 yards", "0.19 miles");
    a number with no unit is taken in the unit asked.  ``AnswerParseError`` when there is
    none, when it is hedged ("90 or 100 m") or negated ("not 90 m"), or written in a unit
    that is no length ("90 km²") or no unit known ("90 furlongs")."""
    if not answer or not answer.strip():
        raise AnswerParseError("no answer")
    got = parse_first_line_number(answer)
    if truth.unit is None:
        return got.value
    return in_unit(got, truth.unit)


def rle_value(truth: NumberTruth, answer: str | None) -> float | None:
    """``rle_length``, or None when the answer is unreadable."""
    try:
        return rle_length(truth, answer)
    except AnswerParseError:
        return None


def r_squared(predicted: Sequence[float], truth: Sequence[float]) -> float:
    """``evaluators.metrics.r_squared``: 1 - SS_res / SS_tot (nan for fewer than two
    truths, constant truths, or a sum of squares too large for a float: never an
    ``OverflowError``)."""
    return metrics.r_squared(predicted, truth)


def rle_metrics(pairs: Sequence[tuple[float | None, float]]) -> dict[str, float]:
    """RMSE, MAE, MAPE and r^2 of (predicted, true) lengths; unreadable answers (and lengths
    not finite or larger than ``MAX_MAGNITUDE``) are counted in ``unanswered`` and left out
    of the error metrics (reported, not guessed), so every metric is finite or nan.  The
    arithmetic is ``evaluators.metrics``'."""
    got = [
        (p, t) for p, t in pairs if p is not None and math.isfinite(p) and abs(p) <= MAX_MAGNITUDE
    ]
    predicted, truth = [p for p, _ in got], [t for _, t in got]
    return {
        "n": len(pairs),
        "unanswered": len(pairs) - len(got),
        "rmse": metrics.rmse(predicted, truth),
        "mae": metrics.mae(predicted, truth),
        "mape": metrics.mape(predicted, truth),
        "r2": metrics.r_squared(predicted, truth),
    }


# ------------------------------------------------------------------ grouping


def grouped(
    items: Iterable[Any], key: Callable[[Any], Any], reduce: Callable[[list[Any]], Any]
) -> dict[Any, Any]:
    """``evaluators.metrics.grouped``: ``reduce`` of the items in each group of ``key``
    (plus "all"; a group named "all" is a ``ValueError``)."""
    return metrics.grouped(items, key, reduce)
