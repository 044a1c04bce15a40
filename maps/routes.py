"""Shortest drivable routes and their turn-by-turn steps, as CartoMapQA's SRN task states them.

A route is a path on the road graph (``maps.roads``), one-way streets
respected.  Its steps are ``["blue", action, road, ..., action, road,
"red"]``: consecutive edges on the same road merge into one leg; the action
that starts each leg comes from the change of heading, the driver starting
at the blue marker facing the top of the map (bearing 0).  The difference,
clockwise from the old heading to the new one, is "continue straight" under
40 or over 320 degrees, "turn right" under 140, "turn left" over 220, and
"make a U-turn and continue straight" otherwise.  Headings come from the
road geometry next to the junction (the first or last ``NEAR_M`` metres of
the edge), not from the straight line between graph nodes, which can point
anywhere on a curved street.

A road whose name changes inside a bend (a node with only the two roads, no
junction) is measured over the bend instead: where the heading ``CURVE_M``
metres before the node and ``CURVE_M`` metres after it differ by
``CURVE_TURN_DEG`` or more, the edges' headings at that node are taken that
far out, so the step there is the turn a driver makes through the bend, not
"continue straight" (issue 26, Portland srn-0009).  The road network that
connectivity scoring uses carries the same headings, so the truth and the
check agree.

``near_tie`` finds a route that a careful reader could give as well: one
whose roads differ from the shortest route's and whose length is within
``NEAR_TIE_SHARE`` of it (issue 26: Portland had a route 1.5 % longer with
the same pixel length on the map).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cartoqa.errors import RouteError
from cartoqa.geodesy import TURN_ACTIONS, distance_km, initial_bearing_deg, turn_action
from cartoqa.records import RoadEdge, RoadNetwork

__all__ = [
    "ACTIONS",
    "CURVE_M",
    "CURVE_TURN_DEG",
    "NEAR_M",
    "NEAR_TIE_SHARE",
    "Leg",
    "Route",
    "edge_coords",
    "edge_headings",
    "end_bearings",
    "near_tie",
    "road_network",
    "road_reach",
    "route_from_nodes",
    "shortest_route",
]

STRAIGHT = TURN_ACTIONS[0]
ACTIONS = TURN_ACTIONS
#: how far along the road (metres) a heading is measured from a junction
NEAR_M = 15.0
#: how far either side of a name change the bend it lies in is measured (metres)
CURVE_M = 40.0
#: a bend of at least this many degrees around a name change makes the step there a turn
CURVE_TURN_DEG = 60.0
#: ``road_reach`` follows a road through a junction with another named road only when it
#: turns less than this there
REACH_TURN_DEG = 45.0
#: ``road_reach`` stops at a corner of a way's line: a vertex turning this much at once
CORNER_DEG = 60.0
#: another route with other roads this close to the shortest (a share of its length) is a
#: near-tie: the question is rejected
NEAR_TIE_SHARE = 0.03
#: the most alternative routes examined for a near-tie (more within the share: a tie too)
NEAR_TIE_PATHS = 60


def edge_coords(graph: Any, u: int, v: int, k: int) -> list[tuple[float, float]]:
    """The edge's shape as (lat, lon) points from u to v."""
    d = graph.edges[u, v, k]
    start = (graph.nodes[u]["y"], graph.nodes[u]["x"])
    end = (graph.nodes[v]["y"], graph.nodes[v]["x"])
    geom = d.get("geometry")
    if geom is None:
        return [start, end]
    pts = [(lat, lon) for lon, lat in geom.coords]
    # osmnx orients simplified geometry from u to v; make sure of it (a reversed two-way copy)
    if _sq(pts[0], start) > _sq(pts[-1], start):
        pts.reverse()
    return pts


def _sq(a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - b[0]) ** 2 + ((a[1] - b[1]) * math.cos(math.radians(a[0]))) ** 2


def _point_along(pts: Sequence[tuple[float, float]], dist_m: float) -> tuple[float, float]:
    """The point ``dist_m`` metres along a polyline (its end if it is shorter)."""
    walked = 0.0
    for a, b in itertools.pairwise(pts):
        seg = float(distance_km(a[0], a[1], b[0], b[1])) * 1000
        if seg > 0 and walked + seg >= dist_m:
            t = (dist_m - walked) / seg
            return (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
        walked += seg
    return pts[-1]


def end_bearings(pts: Sequence[tuple[float, float]], near_m: float = NEAR_M) -> tuple[float, float]:
    """(heading leaving the first point, heading arriving at the last point), each measured
    over the first or last ``near_m`` metres (or half the line when it is shorter)."""
    length = sum(
        float(distance_km(a[0], a[1], b[0], b[1])) * 1000 for a, b in itertools.pairwise(pts)
    )
    d = min(near_m, length / 2) if length > 0 else 0.0
    head = _point_along(pts, d) if d > 0 else pts[-1]
    tail = _point_along(list(reversed(pts)), d) if d > 0 else pts[0]
    start = float(initial_bearing_deg(pts[0][0], pts[0][1], head[0], head[1]))
    end = float(initial_bearing_deg(tail[0], tail[1], pts[-1][0], pts[-1][1]))
    return start, end


def _length_m(pts: Sequence[tuple[float, float]]) -> float:
    return sum(
        float(distance_km(a[0], a[1], b[0], b[1])) * 1000 for a, b in itertools.pairwise(pts)
    )


def _far_bearing(pts: Sequence[tuple[float, float]], far_m: float) -> float:
    """The heading leaving ``pts[0]`` measured ``far_m`` metres out: over the stretch from
    ``far_m - NEAR_M`` to ``far_m`` along the line (its last ``NEAR_M`` where it is shorter)."""
    length = _length_m(pts)
    end = min(far_m, length)
    start = max(0.0, end - NEAR_M)
    a, b = _point_along(pts, start), _point_along(pts, end)
    if a == b:
        return end_bearings(pts)[0]
    return float(initial_bearing_deg(a[0], a[1], b[0], b[1]))


def _bend_at(graph: Any, node: int) -> dict[int, tuple[float, float]] | None:
    """At a node where one road's name changes into another's inside a bend of
    ``CURVE_TURN_DEG`` or more, and nothing else meets: for each of its two neighbours, the
    heading (arriving from it, leaving towards it) measured ``CURVE_M`` out; else None."""
    arms = (set(graph.successors(node)) | set(graph.predecessors(node))) - {node}
    if len(arms) != 2:
        return None
    names = {d.get("road") for *_, d in graph.out_edges(node, data=True)}
    names |= {d.get("road") for *_, d in graph.in_edges(node, data=True)}
    if len(names) != 2 or None in names:
        return None
    away: dict[int, float] = {}  # arm -> heading leaving the node towards it, far out
    for arm in arms:
        if graph.has_edge(node, arm):
            k = _best_edge(graph, node, arm)
            pts = edge_coords(graph, node, arm, k)
        else:
            k = _best_edge(graph, arm, node)
            pts = list(reversed(edge_coords(graph, arm, node, k)))
        away[arm] = _far_bearing(pts, CURVE_M)
    a, b = sorted(arms)
    # arriving from a means heading opposite to "away towards a"
    bend = (away[b] - (away[a] + 180.0)) % 360.0
    if min(bend, 360.0 - bend) < CURVE_TURN_DEG:
        return None
    return {arm: ((away[arm] + 180.0) % 360.0, away[arm]) for arm in arms}


def edge_headings(graph: Any, u: int, v: int, k: int) -> tuple[float, float]:
    """(heading leaving ``u``, heading arriving at ``v``) along edge (u, v, k): next to the
    nodes (``end_bearings``), or measured over the bend at a node where a name changes
    inside one (see the module's docstring)."""
    start, end = end_bearings(edge_coords(graph, u, v, k))
    bend_u, bend_v = _bend_at(graph, u), _bend_at(graph, v)
    if bend_u is not None:
        start = bend_u[v][1]
    if bend_v is not None:
        end = bend_v[u][0]
    return start, end


@dataclass(frozen=True)
class Leg:
    """Consecutive edges on one road."""

    road: str | None
    edges: tuple[tuple[int, int, int], ...]
    length_m: float
    heading_in: float
    """Heading leaving the leg's first node, along the road."""
    heading_out: float
    """Heading arriving at the leg's last node."""

    @property
    def start(self) -> int:
        return self.edges[0][0]

    @property
    def end(self) -> int:
        return self.edges[-1][1]


@dataclass(frozen=True)
class Route:
    """A route on the road graph with its legs and steps."""

    nodes: tuple[int, ...]
    edges: tuple[tuple[int, int, int], ...]
    legs: tuple[Leg, ...]
    length_m: float
    steps: tuple[str, ...]
    """["blue", action, road, ..., "red"]."""

    @property
    def turns(self) -> int:
        """Actions other than "continue straight" after the first one."""
        actions = self.steps[1:-1:2]
        return sum(1 for a in actions[1:] if a != STRAIGHT)

    def coords(self, graph: Any) -> list[tuple[float, float]]:
        """The route's shape, (lat, lon), along the road geometry."""
        pts: list[tuple[float, float]] = []
        for u, v, k in self.edges:
            c = edge_coords(graph, u, v, k)
            pts.extend(c if not pts else c[1:])
        return pts


def _best_edge(graph: Any, u: int, v: int) -> int:
    data = graph.get_edge_data(u, v)
    if not data:
        raise RouteError("not_a_path", f"no road from node {u} to node {v}")
    return min(data, key=lambda k: data[k].get("length", math.inf))


def route_from_nodes(graph: Any, nodes: Sequence[int], *, require_names: bool = True) -> Route:
    """The route through ``nodes`` (consecutive ones joined by a road, the shortest parallel one),
    with its legs and steps.  An unnamed road on it raises ``RouteError("unnamed_road")``
    unless ``require_names`` is False (its steps then say "unnamed road")."""
    if len(nodes) < 2:
        raise RouteError("same_node", "a route needs two different nodes")
    edges = tuple((u, v, _best_edge(graph, u, v)) for u, v in itertools.pairwise(nodes))
    legs: list[Leg] = []
    group: list[tuple[int, int, int]] = []
    road: str | None = None
    for e in edges:
        name = graph.edges[e].get("road")
        if group and name == road and name is not None:
            group.append(e)
            continue
        if group:
            legs.append(_leg(graph, road, group))
        group, road = [e], name
    legs.append(_leg(graph, road, group))
    if require_names:
        unnamed = [leg for leg in legs if leg.road is None]
        if unnamed:
            raise RouteError(
                "unnamed_road",
                f"the route uses {len(unnamed)} unnamed road stretch(es) "
                f"(first from node {unnamed[0].start}); its steps could not name them",
            )
    steps: list[str] = ["blue"]
    heading = 0.0  # the driver at the blue marker faces the top of the map
    for leg in legs:
        steps += [turn_action(heading, leg.heading_in), leg.road or "unnamed road"]
        heading = leg.heading_out
    steps.append("red")
    return Route(
        nodes=tuple(nodes),
        edges=edges,
        legs=tuple(legs),
        length_m=sum(leg.length_m for leg in legs),
        steps=tuple(_drop_straight_between_same(steps)),
    )


def _leg(graph: Any, road: str | None, edges: list[tuple[int, int, int]]) -> Leg:
    heading_in, _ = edge_headings(graph, *edges[0])
    _, heading_out = edge_headings(graph, *edges[-1])
    length = sum(float(graph.edges[e].get("length", 0.0)) for e in edges)
    return Leg(road, tuple(edges), length, heading_in, heading_out)


def _drop_straight_between_same(steps: list[str]) -> list[str]:
    """[..., X, "continue straight", X, ...] -> [..., X, ...], as the spec says."""
    out = steps[:2]
    i = 2
    while i < len(steps):
        if (
            i + 1 < len(steps)
            and steps[i] == STRAIGHT
            and steps[i + 1] == out[-1]
            and out[-1] not in ("blue", "red")
        ):
            i += 2
            continue
        out.append(steps[i])
        i += 1
    return out


def shortest_route(graph: Any, origin: int, destination: int, **kw: Any) -> Route:
    """The shortest drivable route by length from ``origin`` to ``destination`` (graph nodes).

    Raises ``RouteError`` with reason "unreachable" when one-way streets or a
    break in the network leave no route, "same_node" when they are one node.
    """
    import networkx as nx

    if origin == destination:
        raise RouteError("same_node", f"origin and destination are the same node {origin}")
    try:
        nodes = nx.shortest_path(graph, origin, destination, weight="length")
    except nx.NetworkXNoPath:
        raise RouteError(
            "unreachable",
            f"no drivable route from node {origin} to node {destination} "
            "(one-way streets, or the network is broken between them)",
        ) from None
    except nx.NodeNotFound as exc:
        raise RouteError("unreachable", str(exc)) from None
    return route_from_nodes(graph, nodes, **kw)


def near_tie(
    graph: Any, route: Route, *, share: float = NEAR_TIE_SHARE, paths: int = NEAR_TIE_PATHS
) -> Route | None:
    """Another drivable route from the route's first node to its last whose sequence of road
    names differs from ``route``'s and whose length is within ``share`` of it (the first such,
    by length); None when there is none.  Where more than ``paths`` routes lie within the
    share with the same roads, the last one examined is returned: too many to be sure.

    Only nodes that a route within the share can reach are searched (the sum of their straight
    distances to both ends is at most that length), as k-shortest simple paths (Yen's
    algorithm, ``networkx.shortest_simple_paths``) on the shortest of parallel edges."""
    import networkx as nx
    import numpy as np

    limit = route.length_m * (1.0 + share)
    origin, dest = route.nodes[0], route.nodes[-1]
    ids = list(graph.nodes)
    lat = np.array([graph.nodes[n]["y"] for n in ids], dtype=float)
    lon = np.array([graph.nodes[n]["x"] for n in ids], dtype=float)
    (la, oa), (lb, ob) = ((graph.nodes[n]["y"], graph.nodes[n]["x"]) for n in (origin, dest))
    reach_m = (distance_km(la, oa, lat, lon) + distance_km(lb, ob, lat, lon)) * 1000
    near = [ids[i] for i in np.flatnonzero(reach_m <= limit + 1.0)]
    simple = nx.DiGraph()
    simple.add_nodes_from(near)
    for u, v, d in graph.subgraph(near).edges(data=True):
        w = float(d.get("length", 0.0))
        if u != v and (not simple.has_edge(u, v) or w < simple[u][v]["length"]):
            simple.add_edge(u, v, length=w)
    roads = [leg.road for leg in route.legs]
    alt: Route | None = None
    try:
        for i, nodes in enumerate(nx.shortest_simple_paths(simple, origin, dest, weight="length")):
            alt = route_from_nodes(graph, nodes, require_names=False)
            if alt.length_m > limit:
                return None
            if [leg.road for leg in alt.legs] != roads or i >= paths:
                return alt
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None
    return None


def road_network(
    graph: Any,
    origin: int,
    destination: int,
    bounds: tuple[float, float, float, float],
) -> RoadNetwork:
    """The named roads with an edge end inside ``bounds`` (south, west, north, east), with
    their directed edges and the nodes where two of them meet: what a connectivity check of
    an answered route needs (any route the map shows, not only the shortest)."""
    s, w, n, e = bounds

    def inside(node: int) -> bool:
        d = graph.nodes[node]
        return bool(s <= d["y"] <= n and w <= d["x"] <= e)

    roads: dict[str, list[RoadEdge]] = {}
    at: dict[int, set[str]] = {}
    used: set[int] = {origin, destination}
    for u, v, k, d in graph.edges(keys=True, data=True):
        name = d.get("road")
        if name is None or not (inside(u) or inside(v)):
            continue
        start, end = edge_headings(graph, u, v, k)
        edge = RoadEdge(
            u=u,
            v=v,
            length_m=round(float(d.get("length", 0.0)), 2),
            heading_start=round(start, 2),
            heading_end=round(end, 2),
        )
        roads.setdefault(name, []).append(edge)
        for node in (u, v):
            at.setdefault(node, set()).add(name)
            used.add(node)
    junctions: dict[str, list[int]] = {}
    for node, names in at.items():
        ordered = sorted(names)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                junctions.setdefault(f"{a}|{b}", []).append(node)
    nodes = {
        str(node): (
            round(float(graph.nodes[node]["y"]), 7),
            round(float(graph.nodes[node]["x"]), 7),
        )
        for node in sorted(used)
    }
    for edges in roads.values():
        edges.sort(key=lambda r: (r.u, r.v))
    return RoadNetwork(
        origin=origin,
        destination=destination,
        nodes=nodes,
        roads=dict(sorted(roads.items())),
        junctions={k: sorted(v) for k, v in sorted(junctions.items())},
    )


def road_reach(
    graph: Any, node: int, road: str, *, max_m: float = 2000.0, turn_deg: float = REACH_TURN_DEG
) -> list[list[tuple[float, float]]]:
    """The stretches of ``road`` a reader can follow from ``node`` by eye, as (lat, lon) lines:
    along the road's own edges (either direction, one-way or not), through bends where no
    other road meets it, and through a junction with another named road only where it goes
    on within ``turn_deg`` of straight; at most ``max_m`` metres from ``node``.

    A label of the road on these stretches names it at ``node``; one beyond a corner where
    another road joins does not (the blind audit of issue 26, Sydney mml-0015: the marker sat
    where an unlabelled arm of "High Street" met Kent Street, its label round the corner past
    the lane that joined at it).  A stretch also ends at a sharp corner of its line
    (``CORNER_DEG``), where lanes that are not in the graph may join."""
    out: list[list[tuple[float, float]]] = []

    def arms(at: int) -> list[tuple[int, list[tuple[float, float]], str | None, float]]:
        found = []
        seen: set[tuple[int, int]] = set()
        for u, v, k, d in graph.out_edges(at, keys=True, data=True):
            found.append((v, edge_coords(graph, u, v, k), d.get("road"), float(d["length"])))
            seen.add((v, k))
        for u, v, k, d in graph.in_edges(at, keys=True, data=True):
            if graph.has_edge(v, u):
                continue  # a two-way street: its other direction is above
            pts = edge_coords(graph, u, v, k)[::-1]
            found.append((u, pts, d.get("road"), float(d["length"])))
        return found

    todo: list[tuple[int, float | None, float]] = [(node, None, 0.0)]
    done: set[int] = set()
    while todo:
        at, heading, dist = todo.pop()
        if at in done or dist > max_m:
            continue
        done.add(at)
        here = arms(at)
        crossed = any(r is not None and r != road for _, _, r, _ in here)
        for v, pts, r, length in here:
            if r != road or v in done:
                continue
            start, end = end_bearings(pts)
            if heading is not None and crossed:
                turn = (start - heading) % 360.0
                if min(turn, 360.0 - turn) >= turn_deg:
                    continue
            kept = _until_corner(pts, CORNER_DEG)
            out.append(kept)
            if len(kept) == len(pts):
                todo.append((v, end, dist + length))
    return out


def _until_corner(pts: list[tuple[float, float]], corner_deg: float) -> list[tuple[float, float]]:
    """``pts`` up to its first corner: a vertex where the line's direction changes by
    ``corner_deg`` or more at once (a smooth bend of many small steps is no corner).  The road
    graph holds drivable roads only, so a lane or path that joins at such a corner is not a
    node of it: the corner is where a reader may lose the road."""
    for i in range(1, len(pts) - 1):
        a, b, c = pts[i - 1], pts[i], pts[i + 1]
        turn = float(initial_bearing_deg(b[0], b[1], c[0], c[1])) - float(
            initial_bearing_deg(a[0], a[1], b[0], b[1])
        )
        turn = turn % 360.0
        if min(turn, 360.0 - turn) >= corner_deg:
            return pts[: i + 1]
    return pts
