"""The navigation tasks of CartoMapQA: SRN, RLE and MML, sampled from an extract's roads.

Each ``attempt_*`` function makes one candidate (a view and its questions) with
the map tasks' ``ViewSampler`` (``cartoqa.tasks.views``) or raises ``Reject``
with a reason the build counts.  Nothing here renders: the build renders the
accepted views in one batch.

- **SRN** (zoom 17-19): blue origin and red destination on road-graph nodes;
  ground truth the shortest drivable route as steps (``maps.routes``), with
  the map's road network for connectivity scoring.  Every road of the
  route must be named and its name drawn whole in the view.
- **RLE** (zoom 15-19, those at which a view fits in the extract): two
  blue markers joined by a blue path along the shortest route between two
  nodes; ground truth its length along the geometry, asked in metres and in
  feet (two questions, one image).
  *simple*: at most 1 turn and at most 500 px of path; *complex*: at least 3
  turns and at least 400 px.  Turns are the vertices of the path simplified
  (Ramer-Douglas-Peucker, 8 px at the map's zoom) where the heading changes
  by 40 degrees or more.
- **MML** (zoom 17-19): a blue or red marker (alternating) on a node where
  exactly two named roads meet, with no unnamed road and at least three
  arms; both names drawn whole in the view, clear of the marker.

An extract whose drivable roads carry no names cannot make SRN or MML
questions: every candidate is rejected as ``no_named_roads`` (and the build
says no question of the task could be made); RLE needs no names.

Every candidate also passes these checks (issue 12: ground truth a careful
person agrees with):

- *Every step visible* (SRN): each leg of the route is at least
  ``MIN_LEG_PX`` pixels long on the image and not wholly under a marker's
  icon, else ``leg_too_short`` / ``leg_under_marker``.  Legs are never
  merged: the truth keeps the road graph's legs, which connectivity scoring
  uses.
- *Names drawn by the road itself*: a road's name counts only when a whole
  label carried by one of its OSM ways on the route (MML: at the junction)
  is in the view and clear of the markers; a sidewalk, square or stop of
  the same name does not count (``road_name_not_drawn``).
- *No turn on the fence* (SRN): an action whose change of heading lies
  within ``AMBIGUOUS_TURN_DEG`` of a threshold between two actions (40, 140,
  220, 320 degrees) could be read either way (``ambiguous_turn``).
- *One question per place*: one MML question per junction (the same pair of
  names within ``SAME_JUNCTION_M`` of an earlier question is the same
  junction) and one SRN or RLE question per origin-destination pair in a
  dataset, unless ``repeat_places`` is set (``duplicate``).
- *Views inside the data* (``cartoqa.tasks.views``, as for every map task):
  a view with more than ``MAX_BLANK_SHARE`` of its area outside the extract's
  data (its header box where the file has one, else the data's own coverage;
  and in any case past the convex hull of its nodes, ``RoadGraph.data_share``)
  is rejected (``view_not_covered``); markers and paths keep ``MARGIN_PX``
  from the image's edges; a dead end the extract's cut made
  (``RoadGraph.clip_end``) is never a marker.

And those of issue 26 (an outside audit's debatable truths):

- *No near-tie* (SRN): another route on other roads within 3 % of the
  shortest's length (``maps.routes.near_tie``) makes ``near_tie``.
- *A name that changes in a bend* is a turn (``maps.routes``' headings).
- *A name that changes next to the junction* (MML): a road that goes on
  under another name within ``RENAME_M`` metres, that name's label nearer the
  marker than the road's own: ``name_changes_near_junction``.
- *What the drawing shows* (SRN, ``maps.drawn_roads``): a way drawn under
  another's band for ``HIDDEN_PX`` (``way_hidden``), or one-way arrows against
  the route on a shared band for ``ARROWS_PX`` (``arrows_oppose_route``), or a
  one-way way too short to carry an arrow that, driven against its direction,
  gives a route within the near-tie share (``oneway_not_drawn``).
- *Spread*: a pair of markers asked either way round is one pair; each
  task's first marker comes from a ``SPREAD_CELL_M`` cell weighted against
  the cells already used.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from cartoqa.geodesy import (
    distance_km,
    initial_bearing_deg,
    path_length_m,
    simplify_rdp,
    turn_action,
)
from cartoqa.records import (
    LabelBox,
    NumberTruth,
    RoadPairTruth,
    RouteLeg,
    RouteTruth,
    Sample,
    number_text,
)
from maps import Marker, View
from maps.drawn_roads import ARROWS_PX, HIDDEN_PX
from maps.labels import MARKER_BOX
from maps.projection import metres_per_pixel
from maps.routes import (
    NEAR_TIE_SHARE,
    RouteError,
    edge_coords,
    end_bearings,
    near_tie,
    road_network,
    road_reach,
    shortest_route,
)

from .views import Plan, Question, Reject, ViewSampler, view_bounds, view_pixels

__all__ = [
    "AMBIGUOUS_TURN_DEG",
    "MIN_LEG_PX",
    "NAVIGATION_TASKS",
    "ambiguous_turn",
    "attempt_mml",
    "attempt_rle",
    "attempt_srn",
    "visible_legs",
]

NAVIGATION_TASKS = ("srn", "rle", "mml")
FEET_PER_M = 1 / 0.3048
#: the shortest leg an SRN route may have on the image: a little more than a marker icon is
#: wide (35 px) and about five letters of a road label; the audit's unreadable legs were
#: 3-28 px (2.8 m at zoom 17 to 6.4 m at zoom 19)
MIN_LEG_PX = 40.0
#: two MML junctions with the same pair of names closer than this are one place
SAME_JUNCTION_M = 60.0
#: an MML road that takes another name this close to its junction (metres along it), where
#: that name's label is nearer the marker than the road's own, makes no fair question
RENAME_M = 20.0
#: a road's label names it at an MML junction when the label's centre lies this close (px) to
#: the stretch a reader follows from the marker (``maps.routes.road_reach``)
LABEL_ON_ROAD_PX = 12.0
#: an SRN turn whose change of heading lies this close to one of the action thresholds
#: (40, 140, 220, 320 degrees) could be read either way by a careful person: rejected
AMBIGUOUS_TURN_DEG = 10.0
_TURN_THRESHOLDS_DEG = (40.0, 140.0, 220.0, 320.0)
#: the tolerance, in pixels at the map's zoom, of the simplification that counts RLE turns
RDP_PX = 8

# the questions' wording: cartoqa/tasks/prompts/map.toml (map.srn, map.rle, map.mml)


@dataclass
class _Junctions:
    """What MML keeps in its sampler's ``state``: the nodes where exactly two named roads
    meet, with no unnamed road and at least three arms, and the places asked so far."""

    nodes: list[int]
    asked: list[tuple[tuple[str, ...], float, float]] = field(default_factory=list)
    """(pair of names, lat, lon) of each question asked."""


def _junctions(sampler: ViewSampler) -> _Junctions:
    """The sampler's MML junctions (found on first use)."""
    st = sampler.state.get("mml")
    if st is None:
        st = sampler.state["mml"] = _Junctions(
            [n for n in sampler.nodes if _two_road_junction(sampler, n)]
        )
    return st


def _two_road_junction(sampler: ViewSampler, node: int) -> bool:
    g = sampler.g
    edges = list(g.out_edges(node, data=True)) + list(g.in_edges(node, data=True))
    if any(d["road"] is None for *_, d in edges):
        return False
    arms = set(g.successors(node)) | set(g.predecessors(node))
    return len(arms) >= 3 and len({d["road"] for *_, d in edges}) == 2


# ------------------------------------------------------------ SRN


def attempt_srn(sampler: ViewSampler) -> Plan:
    """One SRN candidate: a route between a blue and a red marker (module docstring)."""
    if not sampler.named:  # every step of an SRN answer names a road
        raise Reject("no_named_roads")
    zoom = sampler.pick_zoom((17, 18, 19))
    origin = sampler.choose("srn", sampler.named_starts)
    dest = sampler.partner(origin, zoom, 250, 700)
    if sampler.pair("srn", origin, dest) in sampler.used and not sampler.repeat_places:
        raise Reject("duplicate")
    try:
        route = shortest_route(sampler.g, origin, dest)
    except RouteError as exc:
        raise Reject(exc.reason) from None
    if len(route.legs) > 8:
        raise Reject("route_too_long")
    if ambiguous_turn(route):
        raise Reject("ambiguous_turn")
    if near_tie(sampler.g, route) is not None:
        raise Reject("near_tie")
    drawn = sampler.drawn_roads()
    if drawn.hidden_px(route.edges, zoom) >= HIDDEN_PX:
        raise Reject("way_hidden")
    if drawn.opposed_px(route.edges, zoom) >= ARROWS_PX:
        raise Reject("arrows_oppose_route")
    if (
        drawn.unmarked_shortcut(origin, dest, route.length_m, zoom, share=NEAR_TIE_SHARE)
        is not None
    ):
        raise Reject("oneway_not_drawn")
    a, b = sampler.latlon(origin), sampler.latlon(dest)
    view = sampler.place_view(
        "srn", route.coords(sampler.g), zoom, [Marker(*a, "blue"), Marker(*b, "red")]
    )
    legs = visible_legs(sampler.g, route, view)
    ways: dict[str, set[int]] = defaultdict(set)
    for leg in route.legs:
        if leg.road:
            ways[leg.road] |= sampler.edge_ways(leg.edges)
    near: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for seen in legs:
        near[seen.road] += seen.points_px
    labels = sampler.labels_drawn(view, ways, near)
    legs = [seen.model_copy(update={"label": labels.get(seen.road)}) for seen in legs]
    sampler.labels.keep_tiles(view)  # accepted: its tiles come from the label check's renders
    sampler.used.add(sampler.pair("srn", origin, dest))
    sampler.placed("srn", origin)
    network = road_network(sampler.g, origin, dest, view_bounds(view.center, zoom))
    truth = RouteTruth(steps=list(route.steps), network=network, nodes=list(route.nodes), legs=legs)
    meta = {
        "zoom": zoom,
        "steps": len(route.legs),
        "length_m": round(route.length_m, 1),
        "difficulty": "short" if len(route.legs) <= 2 else "long",
        **sampler.view_meta(view),
    }
    return Plan("srn", view, [Question("", sampler.prompts.text("map.srn"), truth, meta)])


# ------------------------------------------------------------ RLE


def attempt_rle(sampler: ViewSampler, difficulty: str) -> Plan:
    """One RLE candidate of ``difficulty`` ("simple" or "complex"), asked in metres and feet."""
    zoom = sampler.pick_zoom((15, 16, 17, 18, 19))
    lo, hi = (100, 350) if difficulty == "simple" else (350, 900)
    origin = sampler.choose("rle", sampler.starts)
    dest = sampler.partner(origin, zoom, lo, hi)
    try:
        route = shortest_route(sampler.g, origin, dest, require_names=False)
    except RouteError as exc:
        raise Reject(exc.reason) from None
    coords = route.coords(sampler.g)
    turns, px = path_turns(coords, zoom)
    if difficulty == "simple" and (turns > 1 or px > 500):
        raise Reject("not_simple")
    if difficulty == "complex" and (turns < 3 or px < 400):
        raise Reject("not_complex")
    if sampler.pair("rle", origin, dest) in sampler.used and not sampler.repeat_places:
        raise Reject("duplicate")
    a, b = coords[0], coords[-1]
    view = sampler.place_view(
        "rle", coords, zoom, [Marker(*a, "blue"), Marker(*b, "blue")], paths=[coords]
    )
    sampler.used.add(sampler.pair("rle", origin, dest))
    sampler.placed("rle", origin)
    lats, lons = zip(*coords, strict=True)
    metres = path_length_m(lats, lons)
    feet = metres * FEET_PER_M
    meta = {"zoom": zoom, "difficulty": difficulty, "turns": turns, **sampler.view_meta(view)}
    return Plan(
        "rle",
        view,
        [
            Question(
                "-m",
                sampler.prompts.text("map.rle", unit="metres", abbr="m"),
                NumberTruth(value=round(metres, 2), unit="m", equivalents={"ft": round(feet, 2)}),
                {**meta, "unit": "m"},
            ),
            Question(
                "-ft",
                sampler.prompts.text("map.rle", unit="feet", abbr="ft"),
                NumberTruth(value=round(feet, 2), unit="ft", equivalents={"m": round(metres, 2)}),
                {**meta, "unit": "ft"},
            ),
        ],
    )


# ------------------------------------------------------------ MML


def attempt_mml(sampler: ViewSampler, colour: str) -> Plan:
    """One MML candidate: a ``colour`` marker on a junction of two named roads."""
    junctions = _junctions(sampler)
    if not junctions.nodes:
        raise Reject("no_two_road_junction" if sampler.named else "no_named_roads")
    zoom = sampler.pick_zoom((17, 18, 19))
    node = sampler.choose("mml", junctions.nodes)
    names = sorted(sampler.roads.roads_at(node))
    at = sampler.latlon(node)
    if not sampler.repeat_places and _asked_here(sampler, tuple(names), at):
        raise Reject("duplicate")
    view = sampler.place_view("mml", [at], zoom, [Marker(*at, colour)])  # type: ignore[arg-type]
    ways: dict[str, set[int]] = defaultdict(set)
    for u, v, k, d in [
        *sampler.g.out_edges(node, keys=True, data=True),
        *sampler.g.in_edges(node, keys=True, data=True),
    ]:
        ways[d["road"]] |= sampler.edge_ways([(u, v, k)])
    labels = sampler.labels_drawn(view, ways, {})  # nearest the marker, on the junction
    _check_renamed_nearby(sampler, node, names, view, labels)
    _check_label_reaches(sampler, node, names, view)
    sampler.labels.keep_tiles(view)  # accepted: its tiles come from the label check's renders
    junctions.asked.append((tuple(names), *at))
    sampler.placed("mml", node)
    truth = RoadPairTruth(
        road_1=names[0],
        road_2=names[1],
        junction=node,
        labels=[labels[n] for n in names if n in labels],
    )
    meta = {"zoom": zoom, "colour": colour, **sampler.view_meta(view)}
    return Plan(
        "mml", view, [Question("", sampler.prompts.text("map.mml", colour=colour), truth, meta)]
    )


def _renamed_nearby(sampler: ViewSampler, node: int, names: list[str]) -> dict[str, set[str]]:
    """For each road at the junction, the other names it takes within ``RENAME_M`` metres of
    the junction along itself (its stretch goes on, within 45 degrees, under another name
    that is not one of ``names``)."""
    found: dict[str, set[str]] = defaultdict(set)
    # (node reached, road followed, metres from the junction, heading arriving there)
    todo = [(v, road, length, end) for v, road, length, _, end in _stretches(sampler, node)]
    seen: set[tuple[int, str | None]] = {(node, n) for n in names}
    while todo:
        at, road, dist, heading = todo.pop()
        if road is None or dist > RENAME_M or (at, road) in seen:
            continue
        seen.add((at, road))
        for v, other, length, start, end in _stretches(sampler, at):
            turn = (start - heading) % 360.0
            if v == node or min(turn, 360.0 - turn) > 45.0:
                continue
            if other == road:
                todo.append((v, road, dist + length, end))
            elif other is not None and other not in names:
                found[road].add(other)
    return found


def _stretches(
    sampler: ViewSampler, node: int
) -> list[tuple[int, str | None, float, float, float]]:
    """The road stretches from ``node``, driven or not: (next node, road, metres, heading
    leaving ``node``, heading arriving at the next node), one-way streets both ways."""
    g = sampler.g
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


def _check_renamed_nearby(
    sampler: ViewSampler, node: int, names: list[str], view: View, labels: dict[str, LabelBox]
) -> None:
    """Reject the junction where a road at it takes another name within ``RENAME_M``
    metres and that other name's label is nearer the marker than the road's own
    (issue 26, Reno mml-0001: a reader names the nearer label)."""
    renamed = _renamed_nearby(sampler, node, names)
    if not renamed:
        return
    (mx, my), *_ = view_pixels(view.center, view.zoom, [sampler.latlon(node)])

    def distance(box: tuple[float, ...]) -> float:
        return math.hypot((box[0] + box[2]) / 2 - mx, (box[1] + box[3]) / 2 - my)

    shown = sampler.shown
    for road, others in renamed.items():
        own = distance(labels[road].box) if road in labels else math.inf
        for w, boxes in shown.visible.items():
            if shown.name_of.get(w) in others and any(distance(b) < own for b in boxes):
                raise Reject("name_changes_near_junction")


def _check_label_reaches(sampler: ViewSampler, node: int, names: list[str], view: View) -> None:
    """Reject the junction where a road's whole labels in the view all lie beyond a corner
    at which another road joins it (``maps.routes.road_reach``): a reader following the
    road from the marker meets the other road before any label of this one
    (``label_beyond_corner``; the blind audit of issue 26, Sydney mml-0015)."""
    shown = sampler.shown
    for road in names:
        lines = road_reach(sampler.g, node, road)
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


def _asked_here(sampler: ViewSampler, names: tuple[str, ...], at: tuple[float, float]) -> bool:
    """Whether an MML question was already asked of this pair of roads at (about) this
    place: the same node, or the other carriageway of the same crossing."""
    return any(
        n == names and float(distance_km(lat, lon, *at)) * 1000 < SAME_JUNCTION_M
        for n, lat, lon in _junctions(sampler).asked
    )


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


def ambiguous_turn(route: Any) -> bool:
    """Whether an action of the route (the first one from heading 0, map up) changes the
    heading by an angle within ``AMBIGUOUS_TURN_DEG`` of a threshold between two actions."""
    heading = 0.0
    for leg in route.legs:
        diff = (leg.heading_in - heading) % 360.0
        if min(abs(diff - t) for t in _TURN_THRESHOLDS_DEG) < AMBIGUOUS_TURN_DEG:
            return True
        heading = leg.heading_out
    return False


def _under_icon(p: tuple[float, float], marker: tuple[float, float]) -> bool:
    """Whether image point ``p`` lies under the icon of the marker standing at ``marker``."""
    x0, y0, x1, y1 = MARKER_BOX
    return marker[0] + x0 <= p[0] <= marker[0] + x1 and marker[1] + y0 <= p[1] <= marker[1] + y1


def path_turns(coords: list[tuple[float, float]], zoom: int) -> tuple[int, float]:
    """(turns, length in pixels) of a path drawn at ``zoom``: turns are the vertices kept by
    RDP at ``RDP_PX`` where the heading changes by 40 degrees or more."""
    lats, lons = zip(*coords, strict=True)
    length_px = path_length_m(lats, lons) / (
        metres_per_pixel(zoom) * math.cos(math.radians(lats[0]))
    )
    eps_km = RDP_PX * metres_per_pixel(zoom) * math.cos(math.radians(lats[0])) / 1000
    kept = [coords[i] for i in simplify_rdp(lats, lons, eps_km)]
    turns = 0
    for p, q, r in zip(kept, kept[1:], kept[2:], strict=False):
        h1 = float(initial_bearing_deg(p[0], p[1], q[0], q[1]))
        h2 = float(initial_bearing_deg(q[0], q[1], r[0], r[1]))
        turns += turn_action(h1, h2) != "continue straight"
    return turns, length_px


# ------------------------------------------------------------------ the tasks' specs


def format_rle(sample: Sample) -> str:
    """RLE's answer as its prompt asks: the length and its unit on the first line."""
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    return (
        f"{number_text(truth.value)} {truth.unit}\nMeasured along the path against the scale bar."
    )


def _names_read(question: Any) -> bool:
    """SRN and MML: every answer names roads, read off the map's labels."""
    return True


def _register() -> None:
    from evaluators.sample_scores import (
        accuracy_metrics,
        mml_score,
        rle_metrics_rows,
        rle_score,
        rle_table,
        route_metrics,
        route_score,
    )

    from .release.routes import (
        MML_FORM,
        RLE_FORM,
        SRN_FORM,
        mml_original,
        mml_original_table,
        rle_original,
        rle_original_table,
        srn_original,
        srn_original_table,
    )
    from .road_text import describe_path, describe_roads
    from .spec import TaskSpec, register_task

    register_task(
        TaskSpec(
            name="srn",
            family="map",
            track="cartomapqa",
            description="shortest-route navigation: the turn-by-turn route from the blue "
            "marker to the red one",
            truth_kinds=frozenset({"route"}),
            score=route_score,
            generator=lambda sampler, i: attempt_srn(sampler),
            modes={"original": srn_original},
            mode_tables={"original": srn_original_table},
            release=SRN_FORM,
            reduce=route_metrics,
            metrics=("SR2", "aSA", "connectivity"),
            group_by=("zoom", "steps"),
            describe=describe_roads,
            needs_labels=_names_read,
        )
    )
    register_task(
        TaskSpec(
            name="rle",
            family="map",
            track="cartomapqa",
            description="route length estimation: the drawn path's length from the scale bar",
            truth_kinds=frozenset({"number"}),
            score=rle_score,
            # simple and complex paths in turn; each map asked in metres and in feet
            generator=lambda sampler, i: attempt_rle(
                sampler, "simple" if i % 2 == 0 else "complex"
            ),
            questions_per_map=2,
            answer_format=format_rle,
            reduce=rle_metrics_rows,
            table=rle_table,
            metrics=("rmse", "mae", "mape", "r2", "unanswered"),
            headline="mape",
            group_by=("difficulty", "unit"),
            answer_space={"low": 0, "high": 2000},
            modes={"original": rle_original},
            mode_tables={"original": rle_original_table},
            release=RLE_FORM,
            describe=describe_path,
        )
    )
    register_task(
        TaskSpec(
            name="mml",
            family="map",
            track="cartomapqa",
            description="marker localisation: the two roads at the junction under the marker",
            truth_kinds=frozenset({"road_pair"}),
            score=mml_score,
            generator=lambda sampler, i: attempt_mml(sampler, "blue" if i % 2 == 0 else "red"),
            reduce=accuracy_metrics,
            metrics=("accuracy",),
            group_by=("colour", "zoom"),
            modes={"original": mml_original},
            mode_tables={"original": mml_original_table},
            release=MML_FORM,
            describe=describe_roads,
            needs_labels=_names_read,
        )
    )


_register()
