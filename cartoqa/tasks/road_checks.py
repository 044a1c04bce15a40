"""What a drawing shows of a route or a junction: the checks SRN and MML make of each view
(``cartoqa.tasks.navigation``) and make again of another drawing of it
(``cartoqa.tasks.navigation_views``: another zoom, labels in another language).

- ``visible_legs``: each leg of a route long enough on the image and not under a marker;
- ``check_renamed_nearby``: at an MML junction, no road that takes another name within
  ``RENAME_M`` metres with that name's label nearer the marker than its own;
- ``check_label_reaches``: at an MML junction, a label of each road before the first corner a
  reader meets following it from the marker.

Each raises ``views.Reject`` with the reason a build counts.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any

from cartoqa.records import LabelBox, RouteLeg
from maps import View
from maps.labels import MARKER_BOX, VisibleWays
from maps.routes import edge_coords, end_bearings, road_reach

from .views import Reject, view_pixels

__all__ = [
    "LABEL_ON_ROAD_PX",
    "MIN_LEG_PX",
    "RENAME_M",
    "check_label_reaches",
    "check_renamed_nearby",
    "visible_legs",
]

#: the shortest leg an SRN route may have on the image: a little more than a marker icon is
#: wide (35 px) and about five letters of a road label; the audit's unreadable legs were
#: 3-28 px (2.8 m at zoom 17 to 6.4 m at zoom 19)
MIN_LEG_PX = 40.0

#: an MML road that takes another name this close to its junction (metres along it), where
#: that name's label is nearer the marker than the road's own, makes no fair question
RENAME_M = 20.0
#: a road's label names it at an MML junction when the label's centre lies this close (px) to
#: the stretch a reader follows from the marker (``maps.routes.road_reach``)
LABEL_ON_ROAD_PX = 12.0


def _renamed_nearby(g: Any, node: int, names: list[str]) -> dict[str, set[str]]:
    """For each road at the junction, the other names it takes within ``RENAME_M`` metres of
    the junction along itself (its stretch goes on, within 45 degrees, under another name
    that is not one of ``names``)."""
    found: dict[str, set[str]] = defaultdict(set)
    # (node reached, road followed, metres from the junction, heading arriving there)
    todo = [(v, road, length, end) for v, road, length, _, end in _stretches(g, node)]
    seen: set[tuple[int, str | None]] = {(node, n) for n in names}
    while todo:
        at, road, dist, heading = todo.pop()
        if road is None or dist > RENAME_M or (at, road) in seen:
            continue
        seen.add((at, road))
        for v, other, length, start, end in _stretches(g, at):
            turn = (start - heading) % 360.0
            if v == node or min(turn, 360.0 - turn) > 45.0:
                continue
            if other == road:
                todo.append((v, road, dist + length, end))
            elif other is not None and other not in names:
                found[road].add(other)
    return found


def _stretches(g: Any, node: int) -> list[tuple[int, str | None, float, float, float]]:
    """The road stretches from ``node``, driven or not: (next node, road, metres, heading
    leaving ``node``, heading arriving at the next node), one-way streets both ways."""
    out = []
    for u, v, k, d in g.out_edges(node, keys=True, data=True):
        start, end = end_bearings(edge_coords(g, u, v, k))
        out.append((v, d["road"], float(d.get("length", 0.0)), start, end))
    for u, v, k, d in g.in_edges(node, keys=True, data=True):
        if g.has_edge(v, u):
            continue  # a two-way street: its other direction is above
        start, end = end_bearings(edge_coords(g, u, v, k)[::-1])
        out.append((u, d["road"], float(d.get("length", 0.0)), start, end))
    return out


def check_renamed_nearby(
    g: Any,
    shown: VisibleWays,
    node: int,
    names: list[str],
    view: View,
    labels: dict[str, LabelBox],
) -> None:
    """Reject the junction where a road at it takes another name within ``RENAME_M``
    metres and that other name's label is nearer the marker than the road's own
    (issue 26, Reno mml-0001: a reader names the nearer label)."""
    renamed = _renamed_nearby(g, node, names)
    if not renamed:
        return
    at = (g.nodes[node]["y"], g.nodes[node]["x"])
    (mx, my), *_ = view_pixels(view.center, view.zoom, [at])

    def distance(box: tuple[float, ...]) -> float:
        return math.hypot((box[0] + box[2]) / 2 - mx, (box[1] + box[3]) / 2 - my)

    for road, others in renamed.items():
        own = distance(labels[road].box) if road in labels else math.inf
        for w, boxes in shown.visible.items():
            if shown.name_of.get(w) in others and any(distance(b) < own for b in boxes):
                raise Reject("name_changes_near_junction")


def check_label_reaches(
    g: Any, shown: VisibleWays, node: int, names: list[str], view: View
) -> None:
    """Reject the junction where a road's whole labels in the view all lie beyond a corner
    at which another road joins it (``maps.routes.road_reach``): a reader following the
    road from the marker meets the other road before any label of this one
    (``label_beyond_corner``; the blind audit of issue 26, Sydney mml-0015)."""
    for road in names:
        lines = road_reach(g, node, road)
        if not lines:
            raise Reject("label_beyond_corner")
        pts = [p for line in lines for p in line]
        px = view_pixels(view.center, view.zoom, pts)
        segments: list[tuple[tuple[float, float], tuple[float, float]]] = []
        i = 0
        for line in lines:
            segments += list(itertools.pairwise(px[i : i + len(line)]))
            i += len(line)
        boxes = [b for w, bs in shown.visible.items() if shown.name_of.get(w) == road for b in bs]
        if not any(
            _segment_distance(((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), a, c) <= LABEL_ON_ROAD_PX
            for b in boxes
            for a, c in segments
        ):
            raise Reject("label_beyond_corner")


def _segment_distance(
    p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]
) -> float:
    """The distance (px) from point ``p`` to the segment from ``a`` to ``b``."""
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    n = dx * dx + dy * dy
    t = 0.0 if n == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / n))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def visible_legs(graph: Any, route: Any, view: View) -> list[RouteLeg]:
    """The route's legs as ``view`` shows them (node path, metres, pixels, shape).

    Raises ``Reject("leg_too_short")`` when a leg is under ``MIN_LEG_PX`` on the
    image, ``Reject("leg_under_marker")`` when one lies wholly under a marker's
    icon: a person could not see that step.  Legs are never merged, so the truth
    stays the road graph's, which connectivity scoring uses."""
    actions = route.steps[1:-1:2]
    if len(actions) != len(route.legs):  # a "continue straight" was dropped: not 1:1
        raise Reject("leg_too_short")
    markers_px = view_pixels(view.center, view.zoom, [(m.lat, m.lon) for m in view.markers])
    out = []
    for action, leg in zip(actions, route.legs, strict=True):
        coords: list[tuple[float, float]] = []
        for e in leg.edges:
            c = edge_coords(graph, *e)
            coords.extend(c if not coords else c[1:])
        pts = view_pixels(view.center, view.zoom, coords)
        length_px = float(sum(math.dist(p, q) for p, q in itertools.pairwise(pts)))
        if length_px < MIN_LEG_PX:
            raise Reject("leg_too_short")
        if any(all(_under_icon(p, m) for p in pts) for m in markers_px):
            raise Reject("leg_under_marker")
        out.append(
            RouteLeg(
                action=action,
                road=leg.road or "unnamed road",
                nodes=[leg.edges[0][0], *(e[1] for e in leg.edges)],
                length_m=round(leg.length_m, 2),
                length_px=round(length_px, 1),
                points_px=[(round(x, 1), round(y, 1)) for x, y in pts],
            )
        )
    return out


def _under_icon(p: tuple[float, float], marker: tuple[float, float]) -> bool:
    """Whether image point ``p`` lies under the icon of the marker standing at ``marker``."""
    x0, y0, x1, y1 = MARKER_BOX
    return marker[0] + x0 <= p[0] <= marker[0] + x1 and marker[1] + y0 <= p[1] <= marker[1] + y1
