"""The release's SRN road tables <-> cartoqa's ``RoadNetwork``.

The release keeps, per route, ``road_dict/<n>.json`` (road name -> link id -> list of
``[node_id, lat, lon]``) and ``road_conjunction/<n>.json`` (road B -> road A -> list of
``[node_id, lat, lon]``, the junctions).  ``network_from_tables`` makes the network: each link
as edges between its consecutive nodes, both ways (the release says nothing of one-way
streets), each ``conjunction[B][A]`` as the junction of A and B.
``evaluators.navigation.published_tables`` of that network gives back tables the published
scorer reads the same way (the node ids of each road; the first junction node of each pair; the
roads that are keys of the junction table); ``release_tables_lost`` says what differs where it
does not: a junction listed differently for A->B than for B->A (the list under the later name,
B->A with B after A in sorted order, is kept for both), a junction naming a road that is no road
of ``road_dict`` (left out), a junction listed one way only (given both ways).  Never kept: the
links, their order and ids, and ``road_dict``'s coordinates where a node has two.  A road that is
a key of the junction table with no junction is kept as a junction of the road with itself
holding no node, so it stays a key (the published code never looks that pair up).

``road_links`` writes a network's road dictionary with one link per directed edge (the roads'
shape kept, the node ids of each road those of ``published_tables``), and ``route_steps`` reads
``route_directions`` into steps, a road name holding a comma kept whole.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError
from cartoqa.geodesy import distance_km, initial_bearing_deg
from cartoqa.records import RoadEdge, RoadNetwork
from evaluators.navigation import published_tables

__all__ = ["network_from_tables", "release_tables_lost", "road_links", "route_steps"]


def _node_id(value: Any, where: Path) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: node {value!r} is not a node id (a whole number)") from None


def _point(value: Any, where: Path) -> tuple[int, float, float]:
    if not isinstance(value, list | tuple) or len(value) < 3:
        raise DatasetError(f"{where}: a node is [node_id, lat, lon], found {value!r:.80}")
    try:
        lat, lon = float(value[1]), float(value[2])
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: node {value!r:.80} has no numeric lat, lon") from None
    return _node_id(value[0], where), lat, lon


def _link_point(value: Any, where: Path, known: Mapping[str, Any]) -> tuple[int, float, float]:
    """A node of a road_dict link: [node, lat, lon], or [node] alone (the published scorer reads
    the id only; ``published_tables`` writes that), placed where another table places it, else
    nowhere (NaN: its edges have no length or heading)."""
    if isinstance(value, list | tuple) and len(value) in (1, 2):
        node = _node_id(value[0], where)
        return node, *known.get(str(node), (math.nan, math.nan))
    return _point(value, where)


def _edge(u: int, v: int, a: tuple[float, float], b: tuple[float, float]) -> RoadEdge:
    if u == v or a == b or not all(math.isfinite(x) for x in (*a, *b)):
        return RoadEdge(u=u, v=v, length_m=0.0, heading_start=0.0, heading_end=0.0)
    heading = round(float(initial_bearing_deg(a[0], a[1], b[0], b[1])), 2)
    back = round(float(initial_bearing_deg(b[0], b[1], a[0], a[1])), 2)
    return RoadEdge(
        u=u,
        v=v,
        length_m=round(float(distance_km(a[0], a[1], b[0], b[1])) * 1000, 2),
        heading_start=heading,
        heading_end=(back + 180.0) % 360.0,
    )


def network_from_tables(
    origin: Any, destination: Any, road_dict: Any, conjunction: Any, where: Path
) -> RoadNetwork:
    """The ``RoadNetwork`` of a release's route: nodes from every table (the origin's and
    destination's coordinates first, then the junctions', then the roads'), each link of
    ``road_dict`` as edges between consecutive nodes both ways, each ``conjunction[B][A]`` as
    the junction of A and B (module docstring: what ``published_tables`` gives back)."""
    if not isinstance(road_dict, dict) or not isinstance(conjunction, dict):
        raise DatasetError(f"{where}: road_dict and road_conjunction are JSON objects")
    o, d = _point(origin, where), _point(destination, where)
    nodes: dict[str, tuple[float, float]] = {}

    def add(p: tuple[int, float, float]) -> None:
        nodes.setdefault(str(p[0]), (p[1], p[2]))

    add(o)
    add(d)
    junctions: dict[str, list[int]] = {}
    met: set[str] = set()
    for b, row in conjunction.items():
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: road_conjunction[{b!r}] is no object of roads")
        for a, points in row.items():
            if not isinstance(points, list):
                raise DatasetError(f"{where}: road_conjunction[{b!r}][{a!r}] is no list of nodes")
            pts = [_point(p, where) for p in points]
            for p in pts:
                add(p)
            if a not in road_dict or b not in road_dict:
                continue  # published_tables writes junctions of the map's roads only
            pair = "|".join(sorted((a, b)))
            met |= {a, b}
            if pair not in junctions or b > a:  # conj[B][A] with B the later name kept
                junctions[pair] = [p[0] for p in pts]
    for b in conjunction:
        if b in road_dict and b not in met:
            junctions[f"{b}|{b}"] = []  # a key of the table with no junction stays a key
    links_of: dict[str, list[list[tuple[int, float, float]]]] = {}
    for name, links in road_dict.items():
        if not isinstance(links, dict):
            raise DatasetError(f"{where}: road_dict[{name!r}] is no object of links")
        for link, points in links.items():
            if not isinstance(points, list):
                raise DatasetError(f"{where}: road_dict[{name!r}][{link!r}] is no list of nodes")
            pts = [p for p in points if not (isinstance(p, list | tuple) and len(p) < 3)]
            for p in pts:
                add(_point(p, where))
        links_of[name] = []
    for name, links in road_dict.items():
        for points in links.values():
            links_of[name].append([_link_point(p, where, nodes) for p in points])
    roads: dict[str, list[RoadEdge]] = {}
    for name, links in links_of.items():
        edges: list[RoadEdge] = []
        seen: set[tuple[int, int]] = set()
        for pts in links:
            if len(pts) == 1:
                pairs = [(pts[0], pts[0])]
            else:
                pairs = [x for p, q in itertools.pairwise(pts) for x in ((p, q), (q, p))]
            for (u, *pa), (v, *pb) in pairs:
                if (u, v) not in seen:
                    seen.add((u, v))
                    edges.append(_edge(u, v, (pa[0], pa[1]), (pb[0], pb[1])))
        roads[name] = edges
    return RoadNetwork(origin=o[0], destination=d[0], nodes=nodes, roads=roads, junctions=junctions)


def release_tables_lost(road_dict: Any, conjunction: Any, network: RoadNetwork) -> list[str]:
    """What ``published_tables(network)`` does not give back of a release's two tables, in
    terms of what the published scorer reads (the node ids of each road, the roads that are
    keys of the junction table, the first node of each junction list): [] when it scores the
    same."""
    _, _, conj, roads = published_tables(network)
    lost = []
    for name, links in road_dict.items():
        want = {str(p[0]) for pts in links.values() for p in pts}
        got = {str(p[0]) for pts in roads.get(name, {}).values() for p in pts}
        if want != got:
            lost.append(f"road {name!r}: nodes {sorted(want)} become {sorted(got)}")
    for extra in set(roads) - set(road_dict):
        lost.append(f"road {extra!r} (only in road_conjunction) becomes a road of road_dict")
    for b, row in conjunction.items():
        if b not in conj:
            lost.append(f"road_conjunction key {b!r} is lost")
            continue
        for a, pts in row.items():
            kept = conj[b].get(a)
            if kept is None or [str(p[0]) for p in kept[:1]] != [str(p[0]) for p in pts[:1]]:
                lost.append(
                    f"junction {a!r} -> {b!r}: first node {pts[:1]} becomes {kept and kept[:1]}"
                )
    for b, row in conj.items():
        for a in row:
            if a != b and a not in conjunction.get(b, {}):
                lost.append(
                    f"junction {a!r} -> {b!r} is added (the release lists only {b!r} -> {a!r})"
                )
    return lost


def road_links(net: RoadNetwork) -> dict[str, dict[str, list[list[Any]]]]:
    """The release's road dictionary of a network: road -> one link per directed edge ->
    its two nodes as [node, lat, lon].  The published scorer reads the node ids of each road
    only, the same as those of ``published_tables``' dictionary; this one keeps the roads'
    shape too, which ``network_from_tables`` reads back."""

    def point(n: int) -> list[Any]:
        lat, lon = net.nodes.get(str(n), (math.nan, math.nan))
        return [n, lat, lon]

    return {
        name: {str(i): [point(e.u), point(e.v)] for i, e in enumerate(edges)}
        for name, edges in net.roads.items()
    }


def route_steps(text: str, roads: Mapping[str, Any], where: Path) -> list[str]:
    """``route_directions`` as steps: the published split at every comma, except that pieces
    joined back with their commas into a road of the map's road dictionary stay one step."""
    if not isinstance(text, str):
        raise DatasetError(f"{where}: route_directions is {text!r:.80}, not '[blue, ..., red]'")
    pieces = text.replace("[", "").replace("]", "").split(",")
    steps: list[str] = []
    i = 0
    while i < len(pieces):
        j = next(
            (j for j in range(len(pieces), i + 1, -1) if ",".join(pieces[i:j]).strip() in roads),
            i + 1,
        )
        steps.append(",".join(pieces[i:j]).strip())
        i = j
    if len(steps) < 2 or steps[0] != "blue" or steps[-1] != "red":
        raise DatasetError(f"{where}: route_directions {text!r:.120} does not run from blue to red")
    return steps
