"""A map view of roads, markers and a drawn path written out as plain text: the ``text`` and
``image+text`` twins of the navigation tasks (``TaskSpec.describe``).

The text holds the map's facts that the questions need, never their answers.  Positions are
image pixels of the 1366 x 768 map (x to the right, y down, north up; the view's own
``view_pixels``), written with at most one decimal.

**Roads** (``describe_roads``: the shortest-route and marker questions)::

    Scale: 0.4312 m per pixel at the map's centre (zoom 18).
    Junctions (id x,y): j1 412.3,88; j2 520,130.5; ...
    Roads (segments: "a<>b" two-way, "a>b" one-way from a to b only; length in metres;
    "via" the points where the road bends between the two junctions, in order from a to b):
    "Rue Grimaldi": j1<>j2 52.3m; j2>j5 40.1m via 530,140 540,160
    (unnamed): j3<>j4 20m
    Markers: blue 412.3,88 on j1; red 900,500.2 on j12

- *Junctions* are the road graph's nodes (``maps.roads``): where roads meet, where a road
  ends or changes its name; ids ``j1``, ``j2``, ... number them by position (top to bottom,
  then left to right).  A junction outside the image (the far end of a road that leaves it)
  has a position outside 0-1366 x 0-768.
- *Roads*: every drivable road with at least part of a segment in the image, one line per
  name (names in double quotes, JSON-escaped), "(unnamed)" for roads without one.  A segment
  joins two junctions with no other junction between them; ``<>`` may be driven both ways,
  ``>`` only from the first junction to the second (a one-way street; a roundabout is
  one-way).  Its length is measured along the road on the ground.  ``via`` lists its shape's
  points in order from the first junction (bends smaller than half a pixel left out), so a
  road's direction at each end, and so the turn from one road into another, can be measured.
  Two segments between the same junctions are two roads (both listed).
- *Markers*: colour, position (the point its pin marks), and the junction it stands on
  (within ``ON_JUNCTION_PX``; "on none" where it stands on no junction).
- *Scale*: ground metres per image pixel at the map's centre (haversine, as the truth's
  lengths are measured).

**Drawn path** (``describe_path``: the route-length question)::

    Scale: 0.4312 m per pixel at the map's centre (zoom 18); the scale bar at the bottom
    left shows 50 m as 116 px and 200 ft as 141 px.
    Path (blue line, 12 points from one marker to the other): 412.3,88 430,95 ...
    Markers: blue 412.3,88; blue 900,500.2
    The length is asked in feet (1 ft = 0.3048 m).

The scale bar is Leaflet's (``maps.page.scale_bar_box``): each of its lines is a round length
(1, 2, 3 or 5 times a power of ten; feet, or miles past a mile) drawn at most 100 px long.
Every point of the path is written as drawn (its shape along the roads).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from cartoqa.geodesy import distance_km
from maps import HEIGHT_PX, PATH_COLOUR, WIDTH_PX, View
from maps.page import _round_num
from maps.projection import pixel_box, pixel_to_lat_lon
from maps.roads import RoadGraph
from maps.routes import edge_coords

from .views import Plan, Question, view_bounds, view_pixels

__all__ = [
    "BEND_PX",
    "FEET_PER_M",
    "ON_JUNCTION_PX",
    "describe_path",
    "describe_roads",
    "drawn_segments",
    "ground_m_per_px",
    "path_text",
    "roads_text",
    "scale_bar_lengths",
]

#: a road's shape keeps the points where it bends by more than this many pixels (the shape
#: simplified by Douglas-Peucker at this tolerance)
BEND_PX = 0.5
#: a marker this close (pixels) to a junction stands on it
ON_JUNCTION_PX = 0.5
FEET_PER_M = 1 / 0.3048
_UNITS = {"m": "metres", "ft": "feet"}


def describe_roads(plan: Plan, question: Question, roads: RoadGraph) -> str:
    """``TaskSpec.describe`` of the questions about roads and markers: ``roads_text``."""
    return roads_text(roads.graph, plan.view)


def describe_path(plan: Plan, question: Question, roads: RoadGraph) -> str:
    """``TaskSpec.describe`` of the questions about the drawn path's length: ``path_text`` in
    the unit the question asks (its metadata's ``unit``, else its truth's)."""
    unit = question.metadata.get("unit") or getattr(question.truth, "unit", None) or "m"
    return path_text(plan.view, unit)


def _num(v: float) -> str:
    """A pixel or length with at most one decimal, without a trailing ".0"."""
    text = f"{v:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def _pt(p: tuple[float, float]) -> str:
    return f"{_num(p[0])},{_num(p[1])}"


def ground_m_per_px(view: View) -> float:
    """Ground metres per image pixel at the view's centre: the haversine distance across
    100 px of its middle row, divided by 100 (the unit of the truth's lengths)."""
    x0, y0, _, _ = pixel_box(view.center, view.zoom, WIDTH_PX, HEIGHT_PX)
    cx, cy = x0 + WIDTH_PX / 2, y0 + HEIGHT_PX / 2
    a = pixel_to_lat_lon(cx - 50, cy, view.zoom)
    b = pixel_to_lat_lon(cx + 50, cy, view.zoom)
    return float(distance_km(a[0], a[1], b[0], b[1])) * 1000 / 100


def scale_bar_lengths(view: View) -> list[tuple[str, float]]:
    """What the scale bar shows: (round length with its unit, its length in pixels) for its
    metric and its imperial line, as Leaflet draws them (``maps.page.scale_bar_box``)."""
    x0, y0, _, _ = pixel_box(view.center, view.zoom, view.width, view.height)
    x0, y = round(x0), round(y0) + view.height / 2
    lat1, lon1 = pixel_to_lat_lon(x0, y, view.zoom)
    lat2, lon2 = pixel_to_lat_lon(x0 + 100, y, view.zoom)
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    metres = 6371000.0 * 2 * math.atan2(math.sqrt(h), math.sqrt(1 - h))  # L.CRS.Earth.R
    feet = metres * 3.2808399
    out = []
    for value, unit in ((metres, "m"), (feet / 5280, "mi") if feet > 5280 else (feet, "ft")):
        shown = _round_num(value)
        out.append((f"{_num(shown)} {unit}", float(round(100 * shown / value))))
    return out


def _inside(pts: Sequence[tuple[float, float]]) -> bool:
    """Whether a pixel polyline has some part inside the image."""
    from shapely.geometry import LineString, Point, box

    frame = box(0, 0, WIDTH_PX, HEIGHT_PX)
    shape = Point(pts[0]) if len(set(pts)) < 2 else LineString(pts)
    return bool(shape.intersects(frame))


def _bends(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The shape's inner points kept by Douglas-Peucker at ``BEND_PX``."""
    if len(pts) <= 2:
        return []
    from shapely.geometry import LineString

    kept = list(LineString(pts).simplify(BEND_PX, preserve_topology=False).coords)
    return [(float(x), float(y)) for x, y in kept[1:-1]]


def drawn_segments(graph: Any, view: View) -> list[dict[str, Any]]:
    """The road graph's segments with some part in ``view``'s image, a two-way street once:
    dicts of ``u``, ``v`` (graph nodes), ``road`` (name or None), ``length_m``, ``two_way``
    and ``points`` (the shape in image pixels from u to v)."""
    found: list[tuple[int, int, int, dict, list[tuple[float, float]]]] = []
    south, west, north, east = view_bounds(view.center, view.zoom)
    nodes = graph.nodes
    for u, v, k, d in graph.edges(keys=True, data=True):
        geom = d.get("geometry")
        if geom is not None:
            x0, y0, x1, y1 = geom.bounds
        else:
            (y0, y1), (x0, x1) = (
                sorted((nodes[u]["y"], nodes[v]["y"])),
                sorted((nodes[u]["x"], nodes[v]["x"])),
            )
        if x1 < west or x0 > east or y1 < south or y0 > north:
            continue  # wholly outside the view (a quick test before the pixels)
        pts = view_pixels(view.center, view.zoom, edge_coords(graph, u, v, k))
        if _inside(pts):
            found.append((u, v, k, d, pts))
    paired: set[tuple[int, int, int]] = set()
    out = []
    for u, v, k, d, pts in found:
        if (u, v, k) in paired:
            continue
        twin = None
        if u != v:
            for kk, dd in (graph.get_edge_data(v, u) or {}).items():
                if (
                    (v, u, kk) not in paired
                    and dd.get("road") == d.get("road")
                    and abs(float(dd.get("length", 0)) - float(d.get("length", 0))) < 0.01
                ):
                    twin = (v, u, kk)
                    break
        paired.add((u, v, k))
        if twin is not None:
            paired.add(twin)
        out.append(
            {
                "u": u,
                "v": v,
                "road": d.get("road"),
                "length_m": float(d.get("length", 0.0)),
                "two_way": twin is not None,
                "points": pts,
            }
        )
    return out


def roads_text(graph: Any, view: View) -> str:
    """The roads drawn in ``view``, their junctions and the view's markers (module
    docstring)."""
    segments = drawn_segments(graph, view)
    nodes = {n for s in segments for n in (s["u"], s["v"])}
    where = {
        n: view_pixels(view.center, view.zoom, [(graph.nodes[n]["y"], graph.nodes[n]["x"])])[0]
        for n in nodes
    }
    order = sorted(nodes, key=lambda n: (round(where[n][1], 1), round(where[n][0], 1), n))
    rank = {n: i for i, n in enumerate(order, 1)}
    ids = {n: f"j{i}" for n, i in rank.items()}
    lines = [
        f"Scale: {ground_m_per_px(view):.4g} m per pixel at the map's centre (zoom {view.zoom}).",
        "Junctions (id x,y): " + "; ".join(f"{ids[n]} {_pt(where[n])}" for n in order) + ".",
        'Roads (segments: "a<>b" two-way, "a>b" one-way from a to b only; length in metres; '
        '"via" the points where the road bends between the two junctions, in order from a '
        "to b):",
    ]
    by_road: dict[str | None, list[tuple[tuple[int, int], str]]] = {}
    for s in segments:
        u, v, pts = s["u"], s["v"], s["points"]
        if s["two_way"] and rank[v] < rank[u]:  # the lower id first
            u, v, pts = v, u, pts[::-1]
        text = f"{ids[u]}{'<>' if s['two_way'] else '>'}{ids[v]} {_num(s['length_m'])}m"
        bends = _bends(pts)
        if bends:
            text += " via " + " ".join(_pt(p) for p in bends)
        by_road.setdefault(s["road"], []).append(((rank[u], rank[v]), text))
    names = sorted((r for r in by_road if r is not None), key=lambda r: r.casefold())
    for road in [*names, *([None] if None in by_road else [])]:
        label = "(unnamed)" if road is None else json.dumps(road, ensure_ascii=False)
        parts = [t for _, t in sorted(by_road[road])]
        lines.append(f"{label}: " + "; ".join(parts))
    if not segments:
        lines.append("(no roads in the view)")
    lines.append("Markers: " + _markers(graph, view, ids, where) + ".")
    return "\n".join(lines)


def _markers(
    graph: Any, view: View, ids: dict[int, str], where: dict[int, tuple[float, float]]
) -> str:
    if not view.markers:
        return "none"
    out = []
    for m in view.markers:
        p = view_pixels(view.center, view.zoom, [(m.lat, m.lon)])[0]
        near = sorted((math.dist(p, q), ids[n]) for n, q in where.items())
        on = near[0][1] if near and near[0][0] <= ON_JUNCTION_PX else "none"
        out.append(f"{m.colour} {_pt(p)} on {on}")
    return "; ".join(out)


def _colour_word() -> str:
    """The path's colour as a word ("blue") where ``PATH_COLOUR`` is one, else as given."""
    return {"#0000ff": "blue", "#0000FF": "blue"}.get(PATH_COLOUR, PATH_COLOUR)


def path_text(view: View, unit: str) -> str:
    """The view's drawn path(s) and markers, the scale and the unit asked (module
    docstring)."""
    bar = " and ".join(f"{length} as {_num(px)} px" for length, px in scale_bar_lengths(view))
    lines = [
        f"Scale: {ground_m_per_px(view):.4g} m per pixel at the map's centre (zoom {view.zoom}); "
        f"the scale bar at the bottom left shows {bar}."
    ]
    for i, path in enumerate(view.paths, 1):
        pts = view_pixels(view.center, view.zoom, list(path.points))
        name = "Path" if len(view.paths) == 1 else f"Path {i}"
        lines.append(
            f"{name} ({_colour_word()} line, {len(pts)} points in order): "
            + " ".join(_pt(p) for p in pts)
        )
    if not view.paths:
        lines.append("Path: none drawn.")
    marks = [
        f"{m.colour} {_pt(view_pixels(view.center, view.zoom, [(m.lat, m.lon)])[0])}"
        for m in view.markers
    ]
    lines.append("Markers: " + ("; ".join(marks) if marks else "none") + ".")
    words = _UNITS.get(unit, unit)
    lines.append(f"The length is asked in {words} (1 ft = 0.3048 m).")
    return "\n".join(lines)
