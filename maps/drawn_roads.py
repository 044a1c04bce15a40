"""Where the map's drawing of roads contradicts the road graph: a way drawn under another, and
one-way arrows that point both ways on one drawn band (issue 26, finding 8).

openstreetmap-carto draws each road as a band of a width set by its class and zoom, in the
order of its ``z_order`` (motorway on top of trunk, ..., residential; links under all main
roads), bridges above and tunnels below.  So:

- a way whose centreline runs inside the drawn band of a way drawn above it (a ramp merging
  into a motorway, 90 px of it in the audit's srn-0010) is not seen there: its stretch under
  the other band (``hidden_px``) must stay under ``HIDDEN_PX``;
- two one-way carriageways in opposite directions closer than their bands' half widths
  together are drawn as one band carrying arrows both ways (Skøyen srn-0005): a route on one
  of them must not run along the other for ``ARROWS_PX`` or more (``opposed_px``);
- the style places one-way arrows along a way every ``ONEWAY_SPACING_PX`` pixels, so a short
  one-way way may be drawn with no arrow at all (Sydney srn-0009 of issue 26's blind audit:
  two one-way pieces of 39 m and 32 m, no arrow): a reader cannot know it is one-way, so no
  route against it may be within the near-tie share of the truth (``unmarked_shortcut``).

Widths are the style's casing widths (``roads.mss`` of openstreetmap-carto 5.7.0, the
``roads-casing`` layer) at zooms 17-19, those of SRN maps; other zooms take the nearest.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .projection import world_pixel

__all__ = [
    "ARROWS_PX",
    "HIDDEN_PX",
    "ONEWAY_SPACING_PX",
    "DrawnRoads",
    "draw_order",
    "drawn_width_px",
]

#: the longest stretch (pixels) of a route's way that may run under a band drawn above it
HIDDEN_PX = 40.0
#: the longest stretch (pixels) a one-way route may share its drawn band with a one-way way
#: going the other way
ARROWS_PX = 40.0
#: the spacing of one-way arrows along a way (the ``roads`` style's oneway markers: spacing 180);
#: a one-way way drawn shorter than this may carry no arrow
ONEWAY_SPACING_PX = 180.0

_MAJOR = ("motorway", "trunk", "primary", "secondary", "tertiary")
_LINKS = tuple(f"{c}_link" for c in _MAJOR)
#: casing width (px) at zoom 17, 18, 19
_WIDTH = {
    **{c: (18.0, 21.0, 27.0) for c in _MAJOR},
    **{c: (12.0, 13.0, 16.0) for c in _LINKS},
    **{c: (12.0, 13.0, 17.0) for c in ("residential", "unclassified", "living_street")},
    "road": (7.0, 8.5, 11.0),
}
#: openstreetmap-carto's z_order of each class (openstreetmap-carto.lua)
_Z = {
    "motorway": 380,
    "trunk": 370,
    "primary": 360,
    "secondary": 350,
    "tertiary": 340,
    "residential": 330,
    "unclassified": 330,
    "road": 330,
    "living_street": 320,
    "motorway_link": 240,
    "trunk_link": 230,
    "primary_link": 220,
    "secondary_link": 210,
    "tertiary_link": 200,
}


def _classes(value: Any) -> list[str]:
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return [str(value)] if value is not None else []


def drawn_width_px(highway: Any, zoom: int) -> float:
    """The width (px) the style draws a road of class ``highway`` at ``zoom`` (the widest, for
    an edge osmnx joined from several classes)."""
    i = min(max(zoom, 17), 19) - 17
    return max((_WIDTH.get(c, _WIDTH["road"])[i] for c in _classes(highway)), default=0.0)


def _flag(value: Any) -> bool:
    vals = value if isinstance(value, (list, tuple, set)) else [value]
    return any(v not in (None, False, "no", "False") for v in vals)


def draw_order(data: dict[str, Any]) -> tuple[int, int]:
    """The order an edge is drawn in: (tunnel 0 / ground 1 / bridge 2, z_order); higher is on
    top."""
    level = 2 if _flag(data.get("bridge")) else 0 if _flag(data.get("tunnel")) else 1
    z = max((_Z.get(c, 0) for c in _classes(data.get("highway"))), default=0)
    return level, z


class DrawnRoads:
    """A road graph's edges as the map draws them, with a spatial index for the checks."""

    def __init__(self, graph: Any) -> None:
        from shapely.geometry import LineString
        from shapely.strtree import STRtree

        from .routes import edge_coords

        self.graph = graph
        self.keys: list[tuple[int, int, int]] = list(graph.edges(keys=True))
        self.lines = [
            LineString([(lon, lat) for lat, lon in edge_coords(graph, *e)]) for e in self.keys
        ]
        self.tree = STRtree(self.lines)
        self.index = {e: i for i, e in enumerate(self.keys)}
        self._pixels: dict[tuple[int, int], Any] = {}  # (edge, zoom) -> its line in pixels

    def _px(self, i: int, zoom: int) -> Any:
        from shapely.geometry import LineString

        if (i, zoom) not in self._pixels:
            coords = self.lines[i].coords
            self._pixels[i, zoom] = LineString([world_pixel(lat, lon, zoom) for lon, lat in coords])
        return self._pixels[i, zoom]

    def _near(self, i: int, zoom: int, reach_px: float) -> list[int]:
        line = self.lines[i]
        lat = line.coords[0][1]
        # degrees per pixel at this zoom (a generous bound: longitude degrees are the larger)
        deg = 360.0 / (256 * 2**zoom) / max(0.2, math.cos(math.radians(lat)))
        found = self.tree.query(line.buffer(reach_px * deg))
        return [int(j) for j in found if int(j) != i]

    def _same_way(self, a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
        if {a[0], a[1]} == {b[0], b[1]}:
            return True
        ia, ib = self.graph.edges[a].get("osmid"), self.graph.edges[b].get("osmid")
        sa = set(ia) if isinstance(ia, list) else {ia}
        sb = set(ib) if isinstance(ib, list) else {ib}
        return bool(sa & sb - {None})

    def hidden_px(self, edges: Iterable[tuple[int, int, int]], zoom: int) -> float:
        """The longest stretch (px at ``zoom``) of one of ``edges`` whose centreline lies inside
        the band of a way drawn above it."""
        worst = 0.0
        for e in edges:
            i = self.index[e]
            mine = draw_order(self.graph.edges[e])
            line = self._px(i, zoom)
            reach = max(_WIDTH["motorway"]) / 2
            for j in self._near(i, zoom, reach):
                other = self.graph.edges[self.keys[j]]
                if draw_order(other) <= mine or self._same_way(e, self.keys[j]):
                    continue
                band = self._px(j, zoom).buffer(drawn_width_px(other.get("highway"), zoom) / 2)
                worst = max(worst, line.intersection(band).length)
        return worst

    def opposed_px(self, edges: Iterable[tuple[int, int, int]], zoom: int) -> float:
        """The longest stretch (px at ``zoom``) along which a one-way edge of ``edges`` shares
        its drawn band with a one-way edge going the other way (not one of ``edges``)."""
        from shapely.geometry import LineString

        route = list(edges)
        on_route = set(route)
        worst = 0.0
        for e in route:
            d = self.graph.edges[e]
            if not _flag(d.get("oneway")):
                continue
            i = self.index[e]
            line = self._px(i, zoom)
            width = drawn_width_px(d.get("highway"), zoom)
            for j in self._near(i, zoom, max(_WIDTH["motorway"])):
                k = self.keys[j]
                other = self.graph.edges[k]
                if k in on_route or not _flag(other.get("oneway")) or self._same_way(e, k):
                    continue
                reach = (width + drawn_width_px(other.get("highway"), zoom)) / 2
                theirs = self._px(j, zoom)
                shared = line.intersection(theirs.buffer(reach))
                parts = getattr(shared, "geoms", [shared])
                for part in parts:
                    if not isinstance(part, LineString) or part.length == 0:
                        continue
                    a, b = part.coords[0], part.coords[-1]
                    # the other edge's direction where it runs beside this part
                    ta, tb = theirs.project(_pt(a)), theirs.project(_pt(b))
                    if tb < ta:  # it runs against this part: arrows both ways on one band
                        worst = max(worst, part.length)
        return worst

    def arrowless_oneway(self, zoom: int) -> list[tuple[int, int, int]]:
        """The one-way edges whose OSM way is drawn shorter than ``ONEWAY_SPACING_PX`` at
        ``zoom`` (its one-way edges' pixel lengths added up): drawn, perhaps, with no arrow.
        An edge merged from several ways counts its whole length for each (so it is never
        taken for shorter than it is drawn)."""
        per_way: dict[Any, float] = {}
        ways: dict[tuple[int, int, int], set[Any]] = {}
        for i, e in enumerate(self.keys):
            d = self.graph.edges[e]
            if not _flag(d.get("oneway")):
                continue
            ids = d.get("osmid")
            mine = set(ids) if isinstance(ids, list) else {ids if ids is not None else e}
            ways[e] = mine
            length = self._px(i, zoom).length
            for w in mine:
                per_way[w] = per_way.get(w, 0.0) + length
        return [e for e, mine in ways.items() if max(per_way[w] for w in mine) < ONEWAY_SPACING_PX]

    def unmarked_shortcut(
        self, origin: int, destination: int, length_m: float, zoom: int, *, share: float
    ) -> tuple[int, int, int] | None:
        """An arrowless one-way edge (``arrowless_oneway``) that, driven against its direction,
        gives a route from ``origin`` to ``destination`` within ``share`` of ``length_m`` (the
        truth's length) or shorter: a reader who sees no arrow may take that route; None when
        there is none.  Each edge is tried alone, reversed, on the graph as it is."""
        import networkx as nx

        limit = length_m * (1.0 + share)
        candidates = [e for e in self.arrowless_oneway(zoom) if not self.graph.has_edge(e[1], e[0])]
        if not candidates:
            return None
        g = self.graph
        from_origin = nx.single_source_dijkstra_path_length(
            g, origin, cutoff=limit, weight="length"
        )
        to_dest = nx.single_source_dijkstra_path_length(
            nx.reverse_view(g), destination, cutoff=limit, weight="length"
        )
        for u, v, k in candidates:  # driven v -> u
            via = from_origin.get(v, math.inf) + float(g.edges[u, v, k].get("length", 0.0))
            if via + to_dest.get(u, math.inf) <= limit:
                return (u, v, k)
        return None


def _pt(xy: tuple[float, float]) -> Any:
    from shapely.geometry import Point

    return Point(xy)
