"""Small hand-made road graphs in osmnx's layout, for route and connectivity tests.

Positions are on a 100 m grid: ``(x, y)`` is x hundred metres east and y
hundred metres north of 43.7 N, 7.4 E.  Edges may carry a bent geometry.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
from shapely.geometry import LineString

from cartoqa.geodesy import distance_km

LAT0, LON0 = 43.7, 7.4
DLAT = 0.1 / 111.195  # 100 m of latitude, in degrees
DLON = DLAT / math.cos(math.radians(LAT0))


def ll(x: float, y: float) -> tuple[float, float]:
    """(lat, lon) of grid point (x, y)."""
    return LAT0 + y * DLAT, LON0 + x * DLON


def graph(nodes: dict[int, tuple[float, float]]) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph(crs="epsg:4326")
    for n, (x, y) in nodes.items():
        lat, lon = ll(x, y)
        g.add_node(n, x=lon, y=lat)
    return g


def road(g, name, path, *, oneway=False, via=None, junction=None):
    """Add a road along node ``path``; ``via`` maps (u, v) to extra grid points of its shape."""
    via = via or {}
    for u, v in itertools.pairwise(path):
        for a, b in ((u, v), (v, u)) if not oneway else ((u, v),):
            pts = [(g.nodes[a]["y"], g.nodes[a]["x"])]
            extra = via.get((a, b)) or [p for p in reversed(via.get((b, a), []))]
            pts += [ll(*p) for p in extra]
            pts.append((g.nodes[b]["y"], g.nodes[b]["x"]))
            length = sum(
                float(distance_km(p[0], p[1], q[0], q[1])) * 1000
                for p, q in itertools.pairwise(pts)
            )
            data = {
                "road": name,
                "name": name,
                "unnamed": name is None,
                "length": length,
                "oneway": oneway,
            }
            if junction:
                data["junction"] = junction
            if extra:
                data["geometry"] = LineString([(lon, lat) for lat, lon in pts])
            g.add_edge(a, b, **data)


def write_osm_grid(path, nx: int, ny: int, *, step: float = 2.0, names: bool = True) -> None:
    """An OSM XML extract: a grid of nx x ny junctions ``step`` hundred metres apart, joined by
    residential streets (one way per row and per column), named "Row j" / "Column i" or, with
    ``names=False``, unnamed."""
    ids = {(i, j): 1 + i + j * nx for j in range(ny) for i in range(nx)}
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="cartoqa">']
    for (i, j), n in ids.items():
        lat, lon = ll(i * step, j * step)
        lines.append(f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    ways = [[ids[(i, j)] for i in range(nx)] for j in range(ny)]
    ways += [[ids[(i, j)] for j in range(ny)] for i in range(nx)]
    labels = [f"Row {j}" for j in range(ny)] + [f"Column {i}" for i in range(nx)]
    for k, (refs, label) in enumerate(zip(ways, labels, strict=True)):
        lines.append(f'  <way id="{1000 + k}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines.append('    <tag k="highway" v="residential"/>')
        if names:
            lines.append(f'    <tag k="name" v="{label}"/>')
        lines.append("  </way>")
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n")


#: way ids of ``write_osm_same_name_sidewalk``'s features
GRAND_AVENUE_ROAD = 2001
GRAND_AVENUE_SIDEWALK = 2002
GRAND_AVENUE_SQUARE = 2003
GRAND_AVENUE_PLAZA = 2004  # a multipolygon relation: osm2pgsql stores it as -2004


def write_osm_same_name_sidewalk(path, *, lane_ids: tuple[int, int] = (2011, 2012)) -> None:
    """An OSM XML extract of the audit's Portland case: a residential road "Grand Avenue" from
    (0, 0) to (12, 0), a footway (a sidewalk) of the same name 25 m north of it along its
    whole length, a pedestrian square "Grand Avenue" (a closed way, area=yes) south of it at
    x 5.6-6.4, y -0.45 to -0.25, and a pedestrian multipolygon relation "Grand Avenue Plaza"
    (x 2-3, y -0.45 to -0.15).  Two residential lanes "North Lane" (y 0.6) and "South Lane"
    (y -0.6), from x 2 to 10, take the ids ``lane_ids``; cross streets "West Street" (x 1) and
    "East Street" (x 11) join everything into one road graph."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="cartoqa">']
    nodes: list[tuple[float, float]] = []

    def node(x: float, y: float) -> int:
        nodes.append((x, y))
        return len(nodes)

    def way(wid: int, refs: list[int], tags: dict[str, str]) -> None:
        lines.append(f'  <way id="{wid}" version="1">')
        lines.extend(f'    <nd ref="{r}"/>' for r in refs)
        lines.extend(f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items())
        lines.append("  </way>")

    xs = [1, *range(2, 11), 11]
    road = [node(0, 0), *(node(x, 0) for x in xs), node(12, 0)]
    north = [node(x, 0.6) for x in xs]
    south = [node(x, -0.6) for x in xs]
    sidewalk = [node(x / 2, 0.25) for x in range(0, 25)]
    square = [node(5.6, -0.45), node(6.4, -0.45), node(6.4, -0.25), node(5.6, -0.25)]
    plaza = [node(2, -0.45), node(3, -0.45), node(3, -0.15), node(2, -0.15)]
    for n, (x, y) in enumerate(nodes, start=1):
        lat, lon = ll(x, y)
        lines.append(f'  <node id="{n}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    residential = {"highway": "residential"}
    way(GRAND_AVENUE_ROAD, road, {**residential, "name": "Grand Avenue"})
    way(
        GRAND_AVENUE_SIDEWALK,
        sidewalk,
        {"highway": "footway", "footway": "sidewalk", "name": "Grand Avenue"},
    )
    way(
        GRAND_AVENUE_SQUARE,
        [*square, square[0]],
        {"highway": "pedestrian", "area": "yes", "name": "Grand Avenue"},
    )
    way(2005, [*plaza, plaza[0]], {})  # the plaza's outer ring, untagged
    way(lane_ids[0], north, {**residential, "name": "North Lane"})
    way(lane_ids[1], south, {**residential, "name": "South Lane"})
    for k, i in ((2021, 0), (2022, len(xs) - 1)):
        name = "West Street" if i == 0 else "East Street"
        way(k, [north[i], road[1 + i], south[i]], {**residential, "name": name})
    lines.append(f'  <relation id="{GRAND_AVENUE_PLAZA}" version="1">')
    lines.append('    <member type="way" ref="2005" role="outer"/>')
    for key, value in (
        ("type", "multipolygon"),
        ("highway", "pedestrian"),
        ("name", "Grand Avenue Plaza"),
    ):
        lines.append(f'    <tag k="{key}" v="{value}"/>')
    lines.append("  </relation>")
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n")
