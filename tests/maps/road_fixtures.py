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
