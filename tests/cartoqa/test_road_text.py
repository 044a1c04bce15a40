"""The navigation tasks' text twin (``cartoqa.tasks.road_text``) holds each answer (issue 32).

Plans are made with the navigation code on the Monaco extract's road graph, without
rendering: RLE with ``attempt_rle`` itself; SRN and MML with the same route, junction and view
code as ``attempt_srn`` / ``attempt_mml`` (``shortest_route``, ``ambiguous_turn``,
``near_tie``, ``visible_legs``, ``place_view``) but without their label checks, which render
tiles and change no truth.  Each text is then read by a parser written here, and the answer
is worked out from the text alone, with this test's own arithmetic: Dijkstra over the parsed
segments, the road's direction from the parsed shapes (15 m from each junction, 25-40 m where
a name changes inside a bend, as ``maps.routes`` documents it), the prompt's angle rules.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from dataclasses import dataclass, field

import networkx as nx
import pytest

from cartoqa.errors import RouteError
from cartoqa.records import RoadPairTruth, RouteTruth
from cartoqa.tasks.navigation import (
    _two_road_junction,
    ambiguous_turn,
    attempt_rle,
    visible_legs,
)
from cartoqa.tasks.road_text import describe_path, describe_roads
from cartoqa.tasks.spec import get_task
from cartoqa.tasks.views import Plan, Question, Reject, ViewSampler, view_bounds
from maps import Marker, View
from maps.extracts import load_extract
from maps.roads import load_road_graph
from maps.routes import near_tie, road_network, shortest_route

from ..maps.conftest import OSM
from ..maps.osm_xml import write_osm
from ..maps.road_fixtures import ll

MONACO = OSM / "monaco.osm.pbf"  # the shared extracts beside the checkout (as the map tests)

STRAIGHT, RIGHT, LEFT = "continue straight", "turn right", "turn left"
U_TURN = "make a U-turn and continue straight"


# ------------------------------------------------------------------ the parser


@dataclass
class Seg:
    a: str
    b: str
    length_m: float
    points: list[tuple[float, float]]  # from a to b, junctions included


@dataclass
class MapText:
    scale: float = 0.0
    junctions: dict[str, tuple[float, float]] = field(default_factory=dict)
    roads: dict[str | None, list[tuple[str, str, bool, float, list]]] = field(default_factory=dict)
    markers: list[tuple[str, tuple[float, float], str | None]] = field(default_factory=list)

    def segments(self) -> list[tuple[str | None, Seg]]:
        """Every directed segment (a two-way one both ways), with its road."""
        out = []
        for road, segs in self.roads.items():
            for a, b, two_way, length, via in segs:
                pts = [self.junctions[a], *via, self.junctions[b]]
                out.append((road, Seg(a, b, length, pts)))
                if two_way:
                    out.append((road, Seg(b, a, length, pts[::-1])))
        return out


def _xy(text: str) -> tuple[float, float]:
    x, y = text.split(",")
    return float(x), float(y)


SEG = re.compile(r"(j\d+)(<>|>)(j\d+) (\d+(?:\.\d)?)m(?: via (.+))?$")


def parse_roads(text: str) -> MapText:
    out = MapText()
    lines = text.splitlines()
    out.scale = float(re.match(r"Scale: ([\d.]+) m per pixel", lines[0]).group(1))
    assert lines[1].startswith("Junctions (id x,y): ")
    for item in lines[1].removeprefix("Junctions (id x,y): ").rstrip(".").split("; "):
        jid, xy = item.split(" ")
        out.junctions[jid] = _xy(xy)
    assert lines[2].startswith("Roads (")
    for line in lines[3:-1]:
        if line.startswith("(unnamed): "):
            road, rest = None, line.removeprefix("(unnamed): ")
        else:
            road, end = json.JSONDecoder().raw_decode(line)
            assert line[end : end + 2] == ": "
            rest = line[end + 2 :]
        for part in rest.split("; "):
            m = SEG.match(part)
            assert m, part
            via = [_xy(p) for p in m.group(5).split(" ")] if m.group(5) else []
            out.roads.setdefault(road, []).append(
                (m.group(1), m.group(3), m.group(2) == "<>", float(m.group(4)), via)
            )
    assert lines[-1].startswith("Markers: ")
    body = lines[-1].removeprefix("Markers: ").rstrip(".")
    if body != "none":
        for item in body.split("; "):
            colour, xy, _, on = item.split(" ")
            out.markers.append((colour, _xy(xy), None if on == "none" else on))
    return out


# ------------------------------------------------------------------ routes from the text


def _bearing(p, q) -> float:
    """Clockwise from the top of the image (pixels: y down)."""
    return math.degrees(math.atan2(q[0] - p[0], -(q[1] - p[1]))) % 360.0


def _along(pts, d_px):
    walked = 0.0
    for a, b in itertools.pairwise(pts):
        seg = math.dist(a, b)
        if seg > 0 and walked + seg >= d_px:
            t = (d_px - walked) / seg
            return (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
        walked += seg
    return pts[-1]


def _length(pts) -> float:
    return sum(math.dist(a, b) for a, b in itertools.pairwise(pts))


class TextRoutes:
    """Shortest routes and their steps, from a parsed text alone."""

    def __init__(self, parsed: MapText):
        self.px = 1.0 / parsed.scale  # pixels per metre
        self.g = nx.MultiDiGraph()
        for road, seg in parsed.segments():
            self.g.add_edge(seg.a, seg.b, road=road, length=seg.length_m, pts=seg.points)

    def best(self, a, b) -> dict:
        return min(self.g.get_edge_data(a, b).values(), key=lambda d: d["length"])

    def end_headings(self, pts) -> tuple[float, float]:
        d = min(15.0 * self.px, _length(pts) / 2)
        head, tail = _along(pts, d), _along(pts[::-1], d)
        return _bearing(pts[0], head), _bearing(tail, pts[-1])

    def far_heading(self, pts) -> float:
        end = min(40.0 * self.px, _length(pts))
        a, b = _along(pts, max(0.0, end - 15.0 * self.px)), _along(pts, end)
        return self.end_headings(pts)[0] if a == b else _bearing(a, b)

    def bend(self, node) -> dict | None:
        """At a node of two named roads and two neighbours whose line bends 60 degrees or
        more within 40 m: arm -> (heading arriving from it, heading leaving towards it)."""
        g = self.g
        arms = (set(g.successors(node)) | set(g.predecessors(node))) - {node}
        names = {d["road"] for *_, d in g.out_edges(node, data=True)}
        names |= {d["road"] for *_, d in g.in_edges(node, data=True)}
        if len(arms) != 2 or len(names) != 2 or None in names:
            return None
        away = {}
        for arm in arms:
            if g.has_edge(node, arm):
                pts = self.best(node, arm)["pts"]
            else:
                pts = self.best(arm, node)["pts"][::-1]
            away[arm] = self.far_heading(pts)
        a, b = list(arms)
        turn = (away[b] - (away[a] + 180.0)) % 360.0
        if min(turn, 360.0 - turn) < 60.0:
            return None
        return {arm: ((h + 180.0) % 360.0, h) for arm, h in away.items()}

    def headings(self, a, b) -> tuple[float, float]:
        start, end = self.end_headings(self.best(a, b)["pts"])
        if (ba := self.bend(a)) is not None:
            start = ba[b][1]
        if (bb := self.bend(b)) is not None:
            end = bb[a][0]
        return start, end

    def steps(self, origin: str, dest: str) -> list[str]:
        nodes = nx.shortest_path(self.g, origin, dest, weight="length")
        pairs = list(itertools.pairwise(nodes))
        legs: list[list[tuple[str, str]]] = []
        for a, b in pairs:
            road = self.best(a, b)["road"]
            if legs and road is not None and self.best(*legs[-1][-1])["road"] == road:
                legs[-1].append((a, b))
            else:
                legs.append([(a, b)])
        out, heading = ["blue"], 0.0  # facing the top of the map
        for leg in legs:
            start = self.headings(*leg[0])[0]
            out += [action(heading, start), self.best(*leg[0])["road"] or "unnamed road"]
            heading = self.headings(*leg[-1])[1]
        out.append("red")
        merged = out[:2]
        i = 2
        while i < len(out):  # "X, continue straight, X" is one X
            if i + 1 < len(out) and out[i] == STRAIGHT and out[i + 1] == merged[-1]:
                i += 2
                continue
            merged.append(out[i])
            i += 1
        return merged


def action(old: float, new: float) -> str:
    """The prompt's rules: how far the heading turns, clockwise."""
    d = (new - old) % 360.0
    if d < 40 or d > 320:
        return STRAIGHT
    if d < 140:
        return RIGHT
    if d > 220:
        return LEFT
    return U_TURN


# ------------------------------------------------------------------ plans on Monaco


@pytest.fixture(scope="module")
def monaco(tmp_path_factory):
    if not MONACO.is_file():
        pytest.skip(f"the shared extract {MONACO} is not here (it ships beside the project in CI)")
    cache = tmp_path_factory.mktemp("road-text-cache")
    extract = load_extract(MONACO, cache=cache)
    return extract, load_road_graph(extract, cache=cache)


def srn_plans(extract, roads, n: int, seed: int) -> list[Plan]:
    """SRN plans as ``attempt_srn`` makes them, its label and drawing checks left out."""
    sampler = ViewSampler(roads, None, extract.bounds, seed=seed)
    g, plans = sampler.g, []
    for _ in range(400):
        if len(plans) == n:
            break
        try:
            zoom = sampler.pick_zoom((17, 18, 19))
            origin = sampler.choose("srn", sampler.named_starts)
            dest = sampler.partner(origin, zoom, 250, 700)
            if sampler.pair("srn", origin, dest) in sampler.used:
                continue
            route = shortest_route(g, origin, dest)
            if len(route.legs) > 8 or ambiguous_turn(route) or near_tie(g, route) is not None:
                continue
            a, b = sampler.latlon(origin), sampler.latlon(dest)
            view = sampler.place_view(
                "srn", route.coords(g), zoom, [Marker(*a, "blue"), Marker(*b, "red")]
            )
            legs = visible_legs(g, route, view)
        except (Reject, RouteError):
            continue
        sampler.used.add(sampler.pair("srn", origin, dest))
        sampler.placed("srn", origin)
        network = road_network(g, origin, dest, view_bounds(view.center, zoom))
        truth = RouteTruth(
            steps=list(route.steps), network=network, nodes=list(route.nodes), legs=legs
        )
        plans.append(Plan("srn", view, [Question("", "", truth, {"zoom": zoom})]))
    assert len(plans) == n, f"only {len(plans)} SRN plans"
    return plans


def mml_plans(extract, roads, n: int, seed: int) -> list[Plan]:
    """MML plans as ``attempt_mml`` makes them, its label checks left out."""
    sampler = ViewSampler(roads, None, extract.bounds, seed=seed)
    nodes = [v for v in sampler.nodes if _two_road_junction(sampler, v)]
    plans = []
    for i in range(200):
        if len(plans) == n:
            break
        colour = "blue" if i % 2 == 0 else "red"
        try:
            zoom = sampler.pick_zoom((17, 18, 19))
            node = sampler.choose("mml", nodes)
            at = sampler.latlon(node)
            view = sampler.place_view("mml", [at], zoom, [Marker(*at, colour)])
        except Reject:
            continue
        sampler.placed("mml", node)
        names = sorted(roads.roads_at(node))
        truth = RoadPairTruth(road_1=names[0], road_2=names[1], junction=node)
        plans.append(Plan("mml", view, [Question("", "", truth, {"colour": colour})]))
    assert len(plans) == n
    return plans


def rle_plans(extract, roads, n: int, seed: int) -> list[Plan]:
    sampler = ViewSampler(roads, None, extract.bounds, seed=seed)
    plans = []
    for i in range(300):
        if len(plans) == n:
            break
        try:
            plans.append(attempt_rle(sampler, "simple" if i % 2 == 0 else "complex"))
        except Reject:
            continue
    assert len(plans) == n
    return plans


# ------------------------------------------------------------------ the tests


def test_the_text_gives_every_srn_route_turn_by_turn(monaco):
    extract, roads = monaco
    plans = srn_plans(extract, roads, 8, seed=3)
    for plan in plans:
        question = plan.questions[0]
        text = describe_roads(plan, question, roads)
        parsed = parse_roads(text)
        (blue, _, origin), (red, _, dest) = parsed.markers
        assert (blue, red) == ("blue", "red") and origin and dest
        derived = TextRoutes(parsed).steps(origin, dest)
        assert derived == question.truth.steps, (plan.view.id, text)


def test_the_text_names_the_two_roads_at_the_mml_marker(monaco):
    extract, roads = monaco
    for plan in mml_plans(extract, roads, 6, seed=5):
        question = plan.questions[0]
        parsed = parse_roads(describe_roads(plan, question, roads))
        [(colour, _, node)] = parsed.markers
        assert colour == question.metadata["colour"] and node is not None
        at = {road for road, segs in parsed.roads.items() for a, b, *_ in segs if node in (a, b)}
        assert None not in at
        assert sorted(at) == [question.truth.road_1, question.truth.road_2]


def test_the_text_gives_the_rle_length_from_the_path_and_the_scale(monaco):
    extract, roads = monaco
    plans = rle_plans(extract, roads, 4, seed=7)
    seen_units = set()
    for plan in plans:
        for question in plan.questions:
            text = describe_path(plan, question, roads)
            scale = float(re.search(r"Scale: ([\d.]+) m per pixel", text).group(1))
            path = re.search(r"^Path \(blue line, (\d+) points in order\): (.+)$", text, re.M)
            pts = [_xy(p) for p in path.group(2).split(" ")]
            assert len(pts) == int(path.group(1))
            unit = re.search(r"The length is asked in (\w+)", text).group(1)
            metres = _length(pts) * scale
            got = metres if unit == "metres" else metres / 0.3048
            truth = question.truth
            assert {"metres": "m", "feet": "ft"}[unit] == truth.unit
            assert got == pytest.approx(truth.value, rel=0.01), text
            seen_units.add(unit)
            bar = re.search(r"shows (\d+) m as (\d+) px and (\d+) ft as (\d+) px", text)
            assert bar, text  # both lines of the scale bar, in round lengths
            assert int(bar.group(1)) / int(bar.group(2)) == pytest.approx(scale, rel=0.02)
    assert seen_units == {"metres", "feet"}


def test_the_text_never_holds_the_route_as_a_whole(monaco):
    extract, roads = monaco
    for plan in srn_plans(extract, roads, 3, seed=11):
        steps = plan.questions[0].truth.steps
        text = describe_roads(plan, plan.questions[0], roads)
        for sep in (", ", ",", " ", "\n", "; "):
            assert sep.join(steps) not in text
            assert sep.join(steps[1:-1]) not in text
        assert json.dumps(steps) not in text and str(steps) not in text
        assert "continue straight" not in text and "turn" not in text


def test_the_specs_carry_the_text_twin():
    srn, mml, rle = (get_task(n) for n in ("srn", "mml", "rle"))
    assert srn.describe is describe_roads and mml.describe is describe_roads
    assert rle.describe is describe_path
    q = Question("", "", RoadPairTruth(road_1="A", road_2="B"), {})
    assert srn.needs_labels(q) is True and mml.needs_labels(q) is True
    assert rle.needs_labels is None


def test_unnamed_roads_one_ways_and_bends_are_written_right(tmp_path):
    """A hand-made town: a two-way named street, a one-way named street drawn against the
    order of its nodes' ids, an unnamed street, and a street with a bend."""
    nodes = {1: (0, 0), 2: (2, 0), 3: (4, 0), 4: (2, 2), 5: (4, 2), 6: (0, 2), 7: (3, 3)}
    lines = [
        f'  <node id="{n}" version="1" lat="{ll(*p)[0]:.7f}" lon="{ll(*p)[1]:.7f}"/>'
        for n, p in nodes.items()
    ]

    def way(wid, refs, **tags):
        tags = {"highway": "residential", **tags}
        return (
            f'  <way id="{wid}" version="1">'
            + "".join(f'<nd ref="{r}"/>' for r in refs)
            + "".join(f'<tag k="{k}" v="{html.escape(v)}"/>' for k, v in tags.items())
            + "</way>"
        )

    lines += [
        way(100, [1, 2, 3], name='Main "Street"'),  # two-way, a quote in its name
        way(101, [5, 3], name="Down Lane", oneway="yes"),  # one-way from 5 to 3
        way(102, [2, 4]),  # unnamed
        way(103, [4, 7, 5], name="Bent Road"),  # bends at 7 (no junction there)
        way(104, [6, 4], name="Down Lane"),  # two-way: one name, one-way in part only
    ]
    path = tmp_path / "town.osm"
    write_osm(path, lines)
    cache = tmp_path / "cache"
    roads = load_road_graph(load_extract(path, cache=cache), cache=cache)
    view = View.make(ll(2, 1.5), 17, markers=[Marker(*ll(2, 0), "blue"), Marker(*ll(4, 2), "red")])
    plan = Plan("srn", view, [])
    text = describe_roads(plan, Question("", "", RoadPairTruth(road_1="A", road_2="B"), {}), roads)
    parsed = parse_roads(text)
    at = {}  # junction id -> the grid point it is at
    for jid, (x, y) in parsed.junctions.items():
        [here] = [p for p, n in ((p, n) for n, p in nodes.items()) if _near(view, p, (x, y))]
        at[jid] = here
    segs = {
        (road, at[a], at[b], two_way): (length, len(via))
        for road, ss in parsed.roads.items()
        for a, b, two_way, length, via in ss
    }
    pairs = {(r, frozenset((a, b)) if t else (a, b), t) for r, a, b, t in segs}
    assert pairs == {
        ('Main "Street"', frozenset({(0, 0), (2, 0)}), True),
        ('Main "Street"', frozenset({(2, 0), (4, 0)}), True),
        ("Down Lane", ((4, 2), (4, 0)), False),  # one-way, from 5 to 3 only
        ("Down Lane", frozenset({(0, 2), (2, 2)}), True),
        (None, frozenset({(2, 0), (2, 2)}), True),
        ("Bent Road", frozenset({(2, 2), (4, 2)}), True),
    }
    bent = next(v for k, v in segs.items() if k[0] == "Bent Road")
    assert bent[1] == 1  # the bend at (3, 3) is written as its one "via" point
    assert bent[0] == pytest.approx(2 * math.hypot(100, 100), rel=0.01)
    assert "(unnamed): " in text and '"Main \\"Street\\"": ' in text
    # the one-way is only driven one way: no route from 3 to 5 along it
    routes = TextRoutes(parsed)
    j = {p: jid for jid, p in at.items()}
    assert routes.g.has_edge(j[(4, 2)], j[(4, 0)]) and not routes.g.has_edge(j[(4, 0)], j[(4, 2)])
    [(b, _, on_b), (r, _, on_r)] = parsed.markers
    assert (b, at[on_b], r, at[on_r]) == ("blue", (2, 0), "red", (4, 2))


def _near(view: View, grid: tuple[float, float], px: tuple[float, float]) -> bool:
    x, y = view.pixel(*ll(*grid))
    return abs(x - px[0]) < 0.06 and abs(y - px[1]) < 0.06
