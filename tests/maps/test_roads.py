"""Road graphs of the shared extracts, and shortest routes on them scored against themselves."""

import json
import random

import pytest

from cartoqa.errors import RouteError
from cartoqa.records import RouteTruth
from evaluators.navigation import score_route
from maps.roads import load_road_graph, normalise_road
from maps.routes import road_network, shortest_route
from tests.maps.conftest import extract_path

EXTRACTS = [
    "monaco.osm.pbf",
    "london-moorgate.osm.pbf",
    "sydney-cbd.osm.pbf",
    "helsinki-centre.osm.pbf",
]


@pytest.mark.parametrize("name", EXTRACTS)
def test_real_extracts_give_a_directed_named_graph(name, cache):
    rg = load_road_graph(extract_path(name), cache=cache)
    g = rg.graph
    assert len(g) > 50 and g.is_directed()
    roads = [d["road"] for *_, d in g.edges(data=True)]
    assert all(r is None or (r == r.strip() and "  " not in r) for r in roads)
    assert sum(r is not None for r in roads) > len(roads) / 2
    assert all(d["unnamed"] == (d["road"] is None) for *_, d in g.edges(data=True))
    # one-way streets have no edge back
    oneway = [(u, v) for u, v, d in g.edges(data=True) if d.get("oneway") is True]
    assert oneway and any(not g.has_edge(v, u) for u, v in oneway)
    # the cached graph comes back the same
    again = load_road_graph(extract_path(name), cache=cache)
    assert again.graph.number_of_edges() == g.number_of_edges()


@pytest.mark.parametrize("name", EXTRACTS)
def test_shortest_routes_on_real_roads_are_exact_and_connected(name, cache):
    rg = load_road_graph(extract_path(name), cache=cache)
    g = rg.graph
    rng = random.Random(3)
    nodes = sorted(g.nodes)
    bounds = (
        min(d["y"] for _, d in g.nodes(data=True)),
        min(d["x"] for _, d in g.nodes(data=True)),
        max(d["y"] for _, d in g.nodes(data=True)),
        max(d["x"] for _, d in g.nodes(data=True)),
    )
    checked = reasons = 0
    for _ in range(400):
        a, b = rng.sample(nodes, 2)
        try:
            route = shortest_route(g, a, b)
        except RouteError as exc:
            assert exc.reason in ("unreachable", "unnamed_road")
            reasons += 1
            continue
        truth = RouteTruth(steps=list(route.steps), network=road_network(g, a, b, bounds))
        answer = "Here is the route:\n" + json.dumps(list(route.steps), ensure_ascii=False)
        score = score_route(truth, answer)
        assert score.exact and score.step_accuracy == 1
        assert score.connected, (route.steps, score.why)
        checked += 1
        if checked == 12:
            break
    assert checked == 12, f"only {checked} usable routes ({reasons} rejected)"


def test_name_normalisation():
    assert normalise_road("  Rue\u00a0 Grimaldi ") == "Rue Grimaldi"
    assert normalise_road("Cafe\u0301 Street") == "Café Street"  # NFC
    assert normalise_road(["A Road", "A  Road"]) == "A Road"
    assert normalise_road(["A Road", "B Road"]) is None
    assert normalise_road(None) is None and normalise_road("   ") is None
