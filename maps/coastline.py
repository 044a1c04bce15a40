"""Sea polygons from an extract's own coastline, so that harbours and bays render as water.

openstreetmap-carto draws the sea from a separate table of water polygons
(made planet-wide from all coastlines).  An extract holds only pieces of the
coastline, usually open where the extract was cut.  This module rebuilds the
sea inside the extract's box: coastline ways are read from the file as given
(a clipped way keeps every run of nodes the file has: a shore that leaves the
box and comes back is two pieces, both kept), joined end to end (OSM draws
them with the land on the left and the water on the right), clipped to the
box, their loose ends extended to the box's edge, the box split along them,
and the faces on the water side kept: each coastline segment votes, by its
length, for the face on its right.  Closed coastlines are islands: land
inside, water around.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, MultiLineString, Point, Polygon, box
from shapely.ops import polygonize, unary_union

from .extracts import Extract

__all__ = ["coastline_lines", "sea_polygons", "sea_polygons_wkb"]

log = logging.getLogger(__name__)

Coords = list[tuple[float, float]]


def coastline_lines(extract: Extract) -> list[Coords]:
    """The extract's coastline ways joined end to end, as (lon, lat) lists in drawing order.

    Read from the file as given (``extract.source``), not from its cleaned copy: cleaning keeps
    only the longest run of present nodes of a clipped way, but a coastline way often leaves
    the box and comes back (around a bay whose head lies outside), and every run inside is a
    shore.  Each run of two or more present nodes is a piece; a way split by missing nodes
    gives several.  Where an id appears twice, its highest version counts.
    """
    import osmium

    ways: dict[int, tuple[int, list[int]]] = {}
    obj: Any
    fp = osmium.FileProcessor(str(extract.source), osmium.osm.WAY).with_filter(
        osmium.filter.KeyFilter("natural")
    )
    for obj in fp:
        if (
            obj.is_way()
            and obj.tags.get("natural") == "coastline"
            and (obj.id not in ways or obj.version >= ways[obj.id][0])
        ):
            ways[obj.id] = (obj.version, [n.ref for n in obj.nodes])
    if not ways:
        return []
    wanted = {ref for _, refs in ways.values() for ref in refs}
    where: dict[int, tuple[int, tuple[float, float]]] = {}
    fp = osmium.FileProcessor(str(extract.source), osmium.osm.NODE).with_filter(
        osmium.filter.IdFilter(wanted)
    )
    for obj in fp:
        if (
            obj.is_node()
            and obj.location.valid()
            and (obj.id not in where or obj.version >= where[obj.id][0])
        ):
            where[obj.id] = (obj.version, (obj.location.lon, obj.location.lat))
    pieces: list[tuple[int, int, Coords]] = []
    for way_id in sorted(ways):
        run: list[int] = []
        for ref in [*ways[way_id][1], None]:
            if ref is not None and ref in where:
                run.append(ref)
                continue
            if len(run) >= 2:
                pieces.append((run[0], run[-1], [where[r][1] for r in run]))
            run = []
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


def _extend_to_edge(
    line: LineString, frame: Polygon, others: MultiLineString | None = None
) -> LineString:
    """Prolong both loose ends until they meet the frame.

    An end goes on straight along its end segment (where the missing next node most likely
    lay) when that reaches the frame soon, within twice the way to the nearest edge, and
    crosses no coastline (``others``: every clipped piece, this one too); else it goes
    straight to the nearest point of the frame.  A ray along an end segment that runs
    nearly parallel to the edge (a shore cut a metre from the box) would otherwise cut the
    whole box in two.
    """
    coords = list(line.coords)
    edge = frame.exterior
    span = max(frame.bounds[2] - frame.bounds[0], frame.bounds[3] - frame.bounds[1]) * 4

    def nearest(p: Point) -> tuple[float, float]:
        hit = edge.interpolate(edge.project(p))
        return (hit.x, hit.y)

    def reach(p: tuple[float, float], q: tuple[float, float]) -> tuple[float, float] | None:
        # from p, away from q
        start = Point(p)
        d_near = edge.distance(start)
        if d_near < 1e-12:
            return None
        dx, dy = p[0] - q[0], p[1] - q[1]
        norm = (dx * dx + dy * dy) ** 0.5
        if norm == 0:
            return nearest(start)
        ux, uy = dx / norm, dy / norm
        ray = LineString([p, (p[0] + ux * span, p[1] + uy * span)])
        hits = ray.intersection(edge)
        pts = [hits] if isinstance(hits, Point) else list(getattr(hits, "geoms", []))
        pts = [h for h in pts if isinstance(h, Point)]
        if not pts:
            return nearest(start)
        best = min(pts, key=start.distance)
        if start.distance(best) > 2 * d_near:
            return nearest(start)
        if others is not None:
            tiny = min(d_near * 1e-3, 1e-9)
            probe = LineString([(p[0] + ux * tiny, p[1] + uy * tiny), (best.x, best.y)])
            if probe.intersects(others):
                return nearest(start)
        return (best.x, best.y)

    head = reach(coords[0], coords[1])
    tail = reach(coords[-1], coords[-2])
    return LineString(([head] if head else []) + coords + ([tail] if tail else []))


def _water_side(face: Polygon, lines: Sequence[LineString]) -> bool:
    """True when the face lies on the water side (the right) of the coastline that bounds it.

    Every coastline segment votes, by its length, for the face just to its right (water) and
    against the face just to its left (land): the test points sit a hair from the segment's
    middle, so they fall in the faces the segment separates.  A face that no segment touches
    (none should) falls back to the side of its nearest segment.
    """
    xs_r: list[float] = []
    ys_r: list[float] = []
    xs_l: list[float] = []
    ys_l: list[float] = []
    weights: list[float] = []
    for line in lines:
        for (x1, y1), (x2, y2) in itertools.pairwise(line.coords):
            dx, dy = x2 - x1, y2 - y1
            length = (dx * dx + dy * dy) ** 0.5
            if length == 0:
                continue
            eps = min(length * 1e-3, 1e-7)  # about a centimetre at most
            mx, my = (x1 + x2) / 2, (y1 + y2) / 2
            nx, ny = dy / length * eps, -dx / length * eps  # unit normal to the right
            xs_r.append(mx + nx)
            ys_r.append(my + ny)
            xs_l.append(mx - nx)
            ys_l.append(my - ny)
            weights.append(length)
    if weights:
        w = np.asarray(weights)
        right = shapely.contains_xy(face, np.asarray(xs_r), np.asarray(ys_r))
        left = shapely.contains_xy(face, np.asarray(xs_l), np.asarray(ys_l))
        score = float(w[right].sum() - w[left].sum())
        if score != 0:
            return score > 0
    return _nearest_side_is_water(face, lines)


def _nearest_side_is_water(face: Polygon, lines: Sequence[LineString]) -> bool:
    """True when the face's representative point lies to the right of the nearest segment."""
    p = face.representative_point()
    best_d, best_sign = float("inf"), 0.0
    for line in lines:
        for (x1, y1), (x2, y2) in itertools.pairwise(line.coords):
            d = LineString([(x1, y1), (x2, y2)]).distance(p)
            if d < best_d:
                cross = (x2 - x1) * (p.y - y1) - (y2 - y1) * (p.x - x1)
                best_d, best_sign = d, cross
    return best_sign < 0  # negative cross product: the point is on the right


def sea_polygons(extract: Extract) -> list[Polygon]:
    """Water polygons (lon/lat) covering the sea inside the extract's box."""
    s, w, n, e = extract.bounds
    frame = box(w, s, e, n)
    rings: list[Polygon] = []
    clipped_parts: list[LineString] = []
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
                clipped_parts.append(part)
    if clipped_parts:
        every = MultiLineString(clipped_parts)
        open_lines = [_extend_to_edge(part, frame, every) for part in clipped_parts]
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
