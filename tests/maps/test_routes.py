"""Route steps and connectivity on hand-made road graphs, and on real extracts."""

import pytest

from cartoqa.errors import RouteError
from cartoqa.records import Prompt, Provenance, RouteTruth, Sample
from cartoqa.tasks.spec import get_task
from evaluators.navigation import parse_route, route_connected, score_route
from evaluators.published import srn as published_srn
from maps.routes import road_network, route_from_nodes, shortest_route
from tests.maps.road_fixtures import graph, road

BLUE, RED = "blue", "red"
S, L, R, U = "continue straight", "turn left", "turn right", "make a U-turn and continue straight"
EVERYWHERE = (40.0, 0.0, 50.0, 10.0)


def cross(*, east_one_way_inbound=False):
    """North Street runs south-north through B; East Road goes east from B; West Road west.
    A south lane (A-F) and Side Street (F-D) make a longer way round to D."""
    g = graph({1: (0, 0), 2: (0, 1), 3: (0, 2), 4: (1, 1), 5: (-1, 1), 6: (1, 0)})
    road(g, "North Street", [1, 2, 3])
    if east_one_way_inbound:
        road(g, "East Road", [4, 2], oneway=True)
    else:
        road(g, "East Road", [2, 4])
    road(g, "West Road", [5, 2])
    road(g, "South Lane", [1, 6])
    road(g, "Side Street", [6, 4])
    return g


def truth_for(g, route):
    net = road_network(g, route.nodes[0], route.nodes[-1], EVERYWHERE)
    return RouteTruth(steps=list(route.steps), network=net)


def test_a_right_turn_onto_a_crossing_road():
    r = shortest_route(cross(), 1, 4)
    assert r.steps == (BLUE, S, "North Street", R, "East Road", RED)
    assert r.length_m == pytest.approx(200, rel=0.01)


def test_a_route_that_starts_facing_the_wrong_way_begins_with_a_u_turn():
    r = shortest_route(cross(), 3, 1)  # from the north end, driving south
    assert r.steps == (BLUE, U, "North Street", RED)
    r = shortest_route(cross(), 3, 5)
    assert r.steps == (BLUE, U, "North Street", R, "West Road", RED)


def test_one_way_streets_are_respected():
    g = cross(east_one_way_inbound=True)
    r = shortest_route(g, 1, 4)  # East Road cannot be driven towards D: the long way round
    assert r.steps == (BLUE, R, "South Lane", L, "Side Street", RED)
    assert r.length_m == pytest.approx(200, rel=0.01)
    truth = truth_for(g, r)
    wrong_way = f"[blue, {S}, North Street, {R}, East Road, red]"
    ok, why = route_connected(parse_route(wrong_way), truth.network)
    assert not ok and "East Road" in why


def test_a_road_whose_name_changes_mid_route_is_two_steps():
    g = graph({1: (0, 0), 2: (0, 1), 3: (0, 2)})
    road(g, "Rue Alpha", [1, 2])
    road(g, "Rue Beta", [2, 3])
    assert shortest_route(g, 1, 3).steps == (BLUE, S, "Rue Alpha", S, "Rue Beta", RED)


def test_consecutive_edges_of_one_road_merge_even_where_it_bends():
    g = graph({1: (0, 0), 2: (0, 1), 3: (1, 1), 4: (1, 2)})
    road(g, "Bent Street", [1, 2, 3, 4])
    assert shortest_route(g, 1, 4).steps == (BLUE, S, "Bent Street", RED)


def test_turns_come_from_the_geometry_at_the_junction_not_the_chord():
    # from B the road first runs north, then swings east to D: the chord B-D points east (a
    # right turn), the road itself leaves straight ahead
    g = graph({1: (0, 0), 2: (0, 1), 4: (1, 2)})
    road(g, "North Street", [1, 2])
    road(g, "Curve Road", [2, 4], via={(2, 4): [(0, 1.5), (0.2, 1.9)]})
    assert shortest_route(g, 1, 4).steps == (BLUE, S, "North Street", S, "Curve Road", RED)


def test_a_roundabout_is_entered_and_left_by_turns():
    # a one-way ring, anticlockwise seen from above (right-hand traffic), with curved sides
    g = graph({1: (0, -2), 10: (0, -1), 11: (1, 0), 12: (0, 1), 13: (-1, 0), 2: (2, 0)})
    road(g, "South Avenue", [1, 10])
    ring = {
        (10, 11): [(0.7, -0.7)],
        (11, 12): [(0.7, 0.7)],
        (12, 13): [(-0.7, 0.7)],
        (13, 10): [(-0.7, -0.7)],
    }
    road(g, "Place Ronde", [10, 11, 12, 13, 10], oneway=True, via=ring, junction="roundabout")
    road(g, "East Exit", [11, 2])
    r = shortest_route(g, 1, 2)
    assert r.steps == (BLUE, S, "South Avenue", R, "Place Ronde", R, "East Exit", RED)
    # the way back has to go three quarters round
    back = shortest_route(g, 2, 1)
    assert back.steps[:3] == (BLUE, L, "East Exit")  # facing north, west is a left
    assert back.nodes == (2, 11, 12, 13, 10, 1)


def test_an_unreachable_destination_is_rejected_with_a_reason():
    g = graph({1: (0, 0), 2: (0, 1), 3: (5, 5)})
    road(g, "Lonely Road", [1, 2])
    with pytest.raises(RouteError) as err:
        shortest_route(g, 1, 3)
    assert err.value.reason == "unreachable" and "no drivable route" in str(err.value)
    g2 = graph({1: (0, 0), 2: (0, 1)})
    road(g2, "One Way", [1, 2], oneway=True)
    with pytest.raises(RouteError, match="one-way"):
        shortest_route(g2, 2, 1)
    with pytest.raises(RouteError) as err:
        shortest_route(g, 1, 1)
    assert err.value.reason == "same_node"


def test_an_unnamed_road_on_the_route_is_rejected():
    g = graph({1: (0, 0), 2: (0, 1), 3: (0, 2)})
    road(g, "Named Road", [1, 2])
    road(g, None, [2, 3])
    with pytest.raises(RouteError) as err:
        shortest_route(g, 1, 3)
    assert err.value.reason == "unnamed_road"
    assert route_from_nodes(g, [1, 2, 3], require_names=False).steps[-2] == "unnamed road"


def test_a_valid_route_that_is_not_the_shortest_is_connected_but_not_exact():
    g = cross()
    best = shortest_route(g, 1, 4)
    truth = truth_for(g, best)
    detour = f'["blue", "{R}", "South Lane", "{L}", "Side Street", "red"]'
    score = score_route(truth, detour)
    assert score.connected and not score.exact and score.step_accuracy == 0
    assert score_route(truth, str(list(best.steps)).replace("'", '"')).exact


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (f"[blue, {L}, North Street, {R}, East Road, red]", "does not match"),  # wrong first turn
        (f"[blue, {S}, North Street, {L}, East Road, red]", "does not match"),  # wrong turn
        (f"[blue, {S}, North Street, {R}, Nowhere Street, red]", "no road named"),
        (f"[blue, {S}, North Street, red]", "does not lead to the red marker"),
        (f"[blue, {S}, West Road, red]", "cannot be driven"),  # origin not on it
        (f"[blue, {S}, North Street, {R}, Side Street, red]", "does not meet"),
        ("[blue, North Street, red]", "form"),
    ],
)
def test_connectivity_failures_say_why(answer, why):
    g = cross()
    truth = truth_for(g, shortest_route(g, 1, 4))
    ok, reason = route_connected(parse_route(answer), truth.network)
    assert not ok and why in reason


def test_road_names_with_commas_survive_parsing():
    steps = parse_route(f"Route: [blue, {L}, Boulevard Albert 1er, Monaco, {R}, Rue X, red]")
    assert steps == [BLUE, L, "Boulevard Albert 1er, Monaco", R, "Rue X", RED]
    # the published parser splits on commas
    assert len(published_srn.parse(f"[blue, {L}, Boulevard Albert 1er, Monaco, red]")) == 5


def test_original_mode_reproduces_the_zip_defect():
    truth = RouteTruth(steps=[BLUE, S, "A Street", R, "B Road", RED])
    sample = Sample(
        id="srn-zip",
        task="srn",
        prompt=Prompt(text="q"),
        ground_truth=truth,
        provenance=Provenance(generator="tests"),
    )
    original = get_task("srn").scorer("original")
    prefix = f"[blue, {S}, A Street]"
    assert not score_route(truth, prefix).exact
    assert original(sample, prefix).values["exact"] == 1.0  # the published scorer's defect
    longer = f"[blue, {S}, A Street, {R}, B Road, red, {L}, C Lane]"
    assert original(sample, longer).values["exact"] == 1.0
    assert not score_route(truth, longer).exact


def test_step_accuracy_is_the_matching_prefix_share():
    truth = RouteTruth(steps=[BLUE, S, "A Street", R, "B Road", RED])
    assert score_route(truth, f"[blue, {S}, A Street, {L}, B Road, red]").step_accuracy == 2 / 5
    assert score_route(truth, "no idea").step_accuracy == 0
