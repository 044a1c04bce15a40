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
    NumberTruth,
    RoadPairTruth,
    RouteTruth,
    Sample,
    number_text,
)
from maps import Marker
from maps.drawn_roads import ARROWS_PX, HIDDEN_PX
from maps.projection import metres_per_pixel
from maps.routes import (
    NEAR_TIE_SHARE,
    RouteError,
    near_tie,
    road_network,
    shortest_route,
)

from .road_checks import (
    MIN_LEG_PX,
    RENAME_M,
    check_label_reaches,
    check_renamed_nearby,
    visible_legs,
)
from .views import Plan, Question, Reject, ViewSampler, view_bounds

__all__ = [
    "AMBIGUOUS_TURN_DEG",
    "MIN_LEG_PX",
    "NAVIGATION_TASKS",
    "RENAME_M",
    "ambiguous_turn",
    "attempt_mml",
    "attempt_rle",
    "attempt_srn",
    "visible_legs",
]

NAVIGATION_TASKS = ("srn", "rle", "mml")
FEET_PER_M = 1 / 0.3048
#: two MML junctions with the same pair of names closer than this are one place
SAME_JUNCTION_M = 60.0
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
    check_renamed_nearby(sampler.g, sampler.shown, node, names, view, labels)
    check_label_reaches(sampler.g, sampler.shown, node, names, view)
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


def _asked_here(sampler: ViewSampler, names: tuple[str, ...], at: tuple[float, float]) -> bool:
    """Whether an MML question was already asked of this pair of roads at (about) this
    place: the same node, or the other carriageway of the same crossing."""
    return any(
        n == names and float(distance_km(lat, lon, *at)) * 1000 < SAME_JUNCTION_M
        for n, lat, lon in _junctions(sampler).asked
    )


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

    from .navigation_views import mml_view_truth, srn_view_truth
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
            view_truth=srn_view_truth,
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
            view_truth=mml_view_truth,
        )
    )


_register()
