"""Sea polygons from an extract's own coastline, so that harbours and bays render as water.

openstreetmap-carto draws the sea from a separate table of water polygons
(made planet-wide from all coastlines).  An extract holds only pieces of the
coastline, usually open where the extract was cut.  This module rebuilds the
sea inside the extract's box: coastline ways are joined end to end (OSM draws
them with the land on the left and the water on the right), clipped to the
box, their loose ends extended straight to the box's edge, the box split
along them, and the faces on the water side kept.  Closed coastlines are
islands: land inside, water around.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

import shapely
from shapely.geometry import LineString, MultiLineString, Point, Polygon, box
from shapely.ops import polygonize, unary_union

from .extracts import Extract

__all__ = ["coastline_lines", "sea_polygons", "sea_polygons_wkb"]

log = logging.getLogger(__name__)

Coords = list[tuple[float, float]]


def coastline_lines(extract: Extract) -> list[Coords]:
    """The extract's coastline ways joined end to end, as (lon, lat) lists in drawing order."""
    import osmium

    pieces: list[tuple[int, int, Coords]] = []
    obj: Any
    fp = (
        osmium.FileProcessor(str(extract.path))
        .with_locations()
        .with_filter(osmium.filter.KeyFilter("natural"))
    )
    for obj in fp:
        if obj.is_way() and obj.tags.get("natural") == "coastline":
            coords = [(n.lon, n.lat) for n in obj.nodes if n.location.valid()]
            if len(coords) >= 2:
                pieces.append((obj.nodes[0].ref, obj.nodes[-1].ref, coords))
    return _join(pieces)


def _join(pieces: list[tuple[int, int, Coords]]) -> list[Coords]:
    by_start = {p[0]: p for p in pieces}
    used: set[int] = set()
    lines: list[Coords] = []
    starts = {p[0] for p in pieces}
    ends = {p[1] for p in pieces}
    # begin at pieces nothing leads into, then at whatever is left (rings)
    order = [p for p in pieces if p[0] not in ends] + pieces
    for first in order:
        if id(first) in used:
            continue
        used.add(id(first))
        coords = list(first[2])
        end = first[1]
        while end in by_start and id(by_start[end]) not in used and end != first[0]:
            nxt = by_start[end]
            used.add(id(nxt))
            coords.extend(nxt[2][1:])
            end = nxt[1]
        lines.append(coords)
    del starts
    return lines


def _extend_to_edge(line: LineString, frame: Polygon) -> LineString:
    """Prolong both ends straight along their end segments until they meet the frame."""
    coords = list(line.coords)
    edge = frame.exterior
    span = max(frame.bounds[2] - frame.bounds[0], frame.bounds[3] - frame.bounds[1]) * 4

    def reach(p: tuple[float, float], q: tuple[float, float]) -> tuple[float, float] | None:
        # from p, away from q
        if edge.distance(Point(p)) < 1e-12:
            return None
        dx, dy = p[0] - q[0], p[1] - q[1]
        norm = (dx * dx + dy * dy) ** 0.5
        if norm == 0:
            hit = edge.interpolate(edge.project(Point(p)))
            return (hit.x, hit.y)
        ray = LineString([p, (p[0] + dx / norm * span, p[1] + dy / norm * span)])
        hits = ray.intersection(edge)
        pts = [hits] if isinstance(hits, Point) else list(getattr(hits, "geoms", []))
        if not pts:
            hit = edge.interpolate(edge.project(Point(p)))
            return (hit.x, hit.y)
        best = min(pts, key=lambda h: Point(p).distance(h))
        return (best.x, best.y)

    head = reach(coords[0], coords[1])
    tail = reach(coords[-1], coords[-2])
    return LineString(([head] if head else []) + coords + ([tail] if tail else []))


def _water_side(face: Polygon, lines: Sequence[LineString]) -> bool:
    """True when the face lies to the right of the nearest coastline segment."""
    p = face.representative_point()
    best_d, best_sign = float("inf"), 0.0
    for line in lines:
        c = list(line.coords)
        for (x1, y1), (x2, y2) in itertools.pairwise(c):
            seg = LineString([(x1, y1), (x2, y2)])
            d = seg.distance(p)
            if d < best_d:
                cross = (x2 - x1) * (p.y - y1) - (y2 - y1) * (p.x - x1)
                best_d, best_sign = d, cross
    return best_sign < 0  # negative cross product: the point is on the right


def sea_polygons(extract: Extract) -> list[Polygon]:
    """Water polygons (lon/lat) covering the sea inside the extract's box."""
    s, w, n, e = extract.bounds
    frame = box(w, s, e, n)
    rings: list[Polygon] = []
    open_lines: list[LineString] = []
    for coords in coastline_lines(extract):
        if len(coords) >= 4 and coords[0] == coords[-1]:
            ring = Polygon(coords)
            if ring.is_valid and ring.intersects(frame):
                rings.append(ring)
            continue
        clipped = LineString(coords).intersection(frame)
        parts = (
            [clipped] if isinstance(clipped, LineString) else list(getattr(clipped, "geoms", []))
        )
        for part in parts:
            if isinstance(part, LineString) and len(part.coords) >= 2 and part.length > 0:
                open_lines.append(_extend_to_edge(part, frame))
    if not rings and not open_lines:
        return []
    if open_lines:
        noded = unary_union([frame.exterior, MultiLineString(open_lines)])
        faces = [
            f for f in polygonize(noded) if f.area > 0 and frame.contains(f.representative_point())
        ]
        water = [f for f in faces if _water_side(f, open_lines)]
    else:
        water = [frame]  # only islands: the sea surrounds them
    if rings:
        land = unary_union(rings)
        water = [f.difference(land) for f in water]
    out: list[Polygon] = []
    for geom in water:
        for g in getattr(geom, "geoms", [geom]):
            if isinstance(g, Polygon) and not g.is_empty and g.area > 0:
                out.append(g)
    log.info(
        "%s: %d coastline pieces -> %d sea polygons",
        extract.name,
        len(open_lines) + len(rings),
        len(out),
    )
    return out


def sea_polygons_wkb(extract: Extract) -> list[bytes]:
    return [shapely.to_wkb(p) for p in sea_polygons(extract)]
