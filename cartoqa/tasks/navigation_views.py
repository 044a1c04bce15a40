"""SRN's and MML's truths for another drawing of their place (``TaskSpec.view_truth``): the
``zoom`` variant (the same centre and markers at a second zoom) and ``lang:XX`` (labels from
``name:XX``, ``maps.MapEngine.in_language``).

The place is the same, so what the road graph says is kept: SRN's node path (the shortest
route does not depend on the drawing) and MML's junction.  What depends on the drawing is
checked again by the generator's own rules (``cartoqa.tasks.road_checks``), on the new view
and with the labels the new engine draws:

- every leg visible (``visible_legs``: long enough on the image, not under a marker);
- every road's name drawn whole by one of its own ways, clear of the markers
  (``views.labels_drawn``); MML: no other name nearer the marker within ``RENAME_M``, a label
  before the first corner (``check_renamed_nearby``, ``check_label_reaches``);
- SRN at another zoom: what the drawing shows of the route (a way hidden under another's
  band, one-way arrows against it, an arrowless one-way shortcut; ``maps.drawn_roads``).

The names are those the engine writes.  On a language engine each road-graph edge near the
view is named from its OSM ways' ``name:XX`` (``maps.languages.way_names``), else its
``name``, and the steps are made again from those names (``maps.routes.route_from_nodes``),
as are the connectivity network's roads and MML's pair.  Two questions cannot be kept in a
language and are left out of it with a reason: a road of the route (MML: at the junction)
whose ways are named differently in the language ("name_differs_along_road": the map then
changes a name where the base map does not), and two of the route's roads (MML: the
junction's two) that take one name in it ("names_merge_in_language": the steps would differ
in number).  A network road whose ways differ takes its first way's name (connectivity only).

What a base drawing rejected is never recounted (the near-tie and fence-turn rules, which do
not depend on the drawing).  With the engine and view a question was planned on, its truth is
given back byte for byte (``tests/maps/test_navigation_view_truth.py``).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from cartoqa.errors import CartoqaError
from cartoqa.records import GroundTruth, RoadPairTruth, RouteTruth
from maps.drawn_roads import ARROWS_PX, HIDDEN_PX, DrawnRoads
from maps.labels import RoadLabels, way_ids
from maps.languages import way_names
from maps.roads import normalise_road
from maps.routes import NEAR_TIE_SHARE, RouteError, road_network, route_from_nodes

from .road_checks import check_label_reaches, check_renamed_nearby, visible_legs
from .views import Plan, Question, Reject, edge_ways, labels_drawn, view_bounds

if TYPE_CHECKING:
    from maps import MapEngine, View
    from maps.roads import RoadGraph

__all__ = ["mml_view_truth", "named_graph", "srn_view_truth"]

_LABELS: weakref.WeakKeyDictionary[Any, RoadLabels] = weakref.WeakKeyDictionary()
_DRAWN: weakref.WeakKeyDictionary[Any, DrawnRoads] = weakref.WeakKeyDictionary()


def _road_labels(engine: MapEngine) -> RoadLabels:
    """The engine's road-label reader (one per engine: its coded style is loaded once)."""
    if engine not in _LABELS:
        _LABELS[engine] = RoadLabels(engine)
    return _LABELS[engine]


def _drawn(roads: RoadGraph) -> DrawnRoads:
    """The road graph as the map draws it (one per graph: its index is built once)."""
    g = roads.graph
    if g not in _DRAWN:
        _DRAWN[g] = DrawnRoads(g)
    return _DRAWN[g]


def named_graph(roads: RoadGraph, engine: Any, view: View) -> tuple[Any, set[tuple]]:
    """The road graph with its roads named as ``engine`` writes them, and the edges whose OSM
    ways the engine names differently.  A base engine (no ``language``): the graph itself and
    no such edge.  A language engine: a copy of the edges with an end within one view's size
    of ``view`` (enough for its route, junction and network), each named from its ways'
    ``name:XX`` where they have it, else its own name."""
    lang = getattr(engine, "language", None)
    g = roads.graph
    if lang is None:
        return g, set()
    s, w, n, e = view_bounds(view.center, view.zoom)
    dy, dx = n - s, e - w
    s, w, n, e = s - dy, w - dx, n + dy, e + dx
    nodes = g.nodes

    def near(node: int) -> bool:
        d = nodes[node]
        return bool(s <= d["y"] <= n and w <= d["x"] <= e)

    sub = g.edge_subgraph(
        [(u, v, k) for u, v, k in g.edges(keys=True) if near(u) or near(v)]
    ).copy()
    ways = {(u, v, k): way_ids(d.get("osmid")) for u, v, k, d in sub.edges(keys=True, data=True)}
    names = way_names(engine, {i for ids in ways.values() for i in ids}, lang)
    mixed: set[tuple] = set()
    for edge, ids in ways.items():
        d = sub.edges[edge]
        got = [normalise_road(names.get(i)) or d["road"] for i in ids] or [d["road"]]
        if len(set(got)) > 1:
            mixed.add(edge)
        d["road"] = got[0]
    return sub, mixed


def srn_view_truth(
    plan: Plan, question: Question, engine: MapEngine, view: View, roads: RoadGraph
) -> GroundTruth | str:
    """SRN (``TaskSpec.view_truth``): the route's truth as ``view`` drawn by ``engine`` shows
    it, or the reason it cannot be asked there (module docstring)."""
    truth = question.truth
    if not isinstance(truth, RouteTruth) or len(truth.nodes) < 2:
        raise CartoqaError(
            f"view {plan.view.id!r}: SRN's truth is recomputed from its route's node path, and "
            "this one has none (data from before it was recorded): build the dataset again"
        )
    g, mixed = named_graph(roads, engine, view)
    try:
        base = route_from_nodes(roads.graph, truth.nodes)
        route = route_from_nodes(g, truth.nodes) if g is not roads.graph else base
    except RouteError as exc:
        raise CartoqaError(
            f"view {plan.view.id!r}: its route's nodes are not a road of this extract's graph "
            f"({exc}): was the dataset built from another extract?"
        ) from None
    if any(e in mixed for e in base.edges) or any(
        len({g.edges[e]["road"] for e in leg.edges}) > 1 for leg in base.legs
    ):
        return "name_differs_along_road"
    if len(route.legs) != len(base.legs) or len(route.steps) != len(base.steps):
        return "names_merge_in_language"
    if view.zoom != plan.view.zoom:
        drawn = _drawn(roads)
        if drawn.hidden_px(base.edges, view.zoom) >= HIDDEN_PX:
            return "way_hidden"
        if drawn.opposed_px(base.edges, view.zoom) >= ARROWS_PX:
            return "arrows_oppose_route"
        origin, dest = truth.nodes[0], truth.nodes[-1]
        if (
            drawn.unmarked_shortcut(origin, dest, base.length_m, view.zoom, share=NEAR_TIE_SHARE)
            is not None
        ):
            return "oneway_not_drawn"
    try:
        legs = visible_legs(g, route, view)
        ways: dict[str, set[int]] = defaultdict(set)
        for leg in route.legs:
            if leg.road:
                ways[leg.road] |= edge_ways(g, leg.edges)
        near: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for seen in legs:
            near[seen.road] += seen.points_px
        labels, _ = labels_drawn(_road_labels(engine), view, ways, near)
    except Reject as exc:
        return exc.reason
    legs = [seen.model_copy(update={"label": labels.get(seen.road)}) for seen in legs]
    bounds = view_bounds(view.center, view.zoom)
    network = road_network(g, route.nodes[0], route.nodes[-1], bounds)
    return RouteTruth(steps=list(route.steps), network=network, nodes=list(route.nodes), legs=legs)


def mml_view_truth(
    plan: Plan, question: Question, engine: MapEngine, view: View, roads: RoadGraph
) -> GroundTruth | str:
    """MML (``TaskSpec.view_truth``): the junction's two roads as ``view`` drawn by ``engine``
    names them, or the reason the question cannot be asked there (module docstring)."""
    truth = question.truth
    if not isinstance(truth, RoadPairTruth) or truth.junction is None:
        raise CartoqaError(
            f"view {plan.view.id!r}: MML's truth is recomputed from its junction's node, and "
            "this one has none (data from before it was recorded): build the dataset again"
        )
    node = truth.junction
    g, mixed = named_graph(roads, engine, view)
    if node not in g:
        raise CartoqaError(
            f"view {plan.view.id!r}: junction node {node} is not in this extract's road graph: "
            "was the dataset built from another extract?"
        )
    edges = [
        *g.out_edges(node, keys=True, data=True),
        *g.in_edges(node, keys=True, data=True),
    ]
    # each of the junction's two roads (by the graph's names) as the engine names it
    called: dict[str, set[str]] = defaultdict(set)
    for u, v, k, d in edges:
        called[roads.graph.edges[u, v, k]["road"]].add(d["road"])
    if any((u, v, k) in mixed for u, v, k, _ in edges) or any(len(c) > 1 for c in called.values()):
        return "name_differs_along_road"
    names = sorted({d["road"] for *_, d in edges if d["road"]})
    if len(names) != 2:
        return "names_merge_in_language"
    ways: dict[str, set[int]] = defaultdict(set)
    for u, v, k, d in edges:
        ways[d["road"]] |= edge_ways(g, [(u, v, k)])
    try:
        labels, shown = labels_drawn(_road_labels(engine), view, ways, {})
        check_renamed_nearby(g, shown, node, names, view, labels)
        check_label_reaches(g, shown, node, names, view)
    except Reject as exc:
        return exc.reason
    return RoadPairTruth(
        road_1=names[0],
        road_2=names[1],
        junction=node,
        labels=[labels[n] for n in names if n in labels],
    )
