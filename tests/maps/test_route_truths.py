"""SRN truths a careful reader would dispute (issue 26, findings 6 and 7): hand-made graphs.

- A near-tie: Portland had a second route 1.5 % longer than the shortest, on other roads, of
  the same length in pixels; no one can tell them apart on the map.
- A name that changes inside a bend: Portland srn-0009 said "continue straight" where the road
  bent 90 degrees and took another name in the middle of the bend.
"""

import math

import pytest

from cartoqa.geodesy import path_length_m
from evaluators.navigation import route_connected
from maps.routes import CURVE_TURN_DEG, NEAR_TIE_SHARE, near_tie, road_network, shortest_route

from .road_fixtures import graph, ll, road


def rectangle(longer_by: float):
    """Origin 1 at (0, 0), destination 4 at (3, 2) (hundreds of metres).  East then north:
    "Ash Street" to (3, 0), "Birch Avenue" up to 4, 500 m.  North then east: "Cedar Street" to
    (0, 2), then "Dale Road" bowed north so that this way is ``longer_by`` (a share) longer."""
    g = graph({1: (0, 0), 2: (3, 0), 3: (0, 2), 4: (3, 2)})
    road(g, "Ash Street", [1, 2])
    road(g, "Birch Avenue", [2, 4])
    road(g, "Cedar Street", [1, 3])
    # Dale Road: 300 m straight, made 500 * longer_by longer by a bow at its middle
    half = (300 + 500 * longer_by) / 2 / 100
    bow = math.sqrt(half**2 - 1.5**2)
    road(g, "Dale Road", [3, 4], via={(3, 4): [(1.5, 2 + bow)]})
    return g


def test_a_route_1_5_percent_longer_on_other_roads_is_a_near_tie():
    g = rectangle(0.015)
    route = shortest_route(g, 1, 4)
    assert [leg.road for leg in route.legs] == ["Ash Street", "Birch Avenue"]
    assert route.length_m == pytest.approx(500, abs=1)
    alt = near_tie(g, route)
    assert alt is not None
    assert [leg.road for leg in alt.legs] == ["Cedar Street", "Dale Road"]
    assert alt.length_m == pytest.approx(507.5, abs=1)  # 1.5 % longer


def test_a_route_5_percent_longer_is_no_tie():
    g = rectangle(0.05)
    route = shortest_route(g, 1, 4)
    assert NEAR_TIE_SHARE < 0.05
    assert near_tie(g, route) is None


def test_a_route_on_the_same_roads_is_no_tie():
    """Two parallel stretches of Ash Street (a split carriageway) 1 % apart in length give the
    same answer: not a tie."""
    g = graph({1: (0, 0), 2: (1, 0), 3: (2, 0), 4: (3, 0)})
    road(g, "Ash Street", [1, 2, 4])
    road(g, "Ash Street", [2, 3, 4], via={(2, 3): [(1.5, 0.1)]})
    route = shortest_route(g, 1, 4)
    assert near_tie(g, route) is None


def bend(total_deg: float):
    """ "Oak Street" north from 1 at (0, -3) to (0, 0), then a bend of ``total_deg`` degrees to
    the right with radius 30 m; at the bend's middle (node 2) the road becomes "Pine Street",
    which goes on 300 m in the new direction to node 3.  Nothing else meets at node 2."""
    r = 0.3
    centre = (r, 0.0)
    steps = 12
    arc = []
    for i in range(steps + 1):
        a = math.radians(180 - total_deg * i / steps)  # from the west point, clockwise
        arc.append((centre[0] + r * math.cos(a), centre[1] + r * math.sin(a)))
    mid = arc[steps // 2]
    end = arc[-1]
    heading = math.radians(total_deg)  # the road's heading after the bend (0 = north)
    far = (end[0] + 3 * math.sin(heading), end[1] + 3 * math.cos(heading))
    g = graph({1: (0, -3), 2: mid, 3: far})
    road(g, "Oak Street", [1, 2], via={(1, 2): [(0, 0), *arc[1 : steps // 2]]})
    road(g, "Pine Street", [2, 3], via={(2, 3): [*arc[steps // 2 + 1 :]]})
    return g


def test_a_name_change_inside_a_90_degree_bend_is_a_turn():
    g = bend(90)
    route = shortest_route(g, 1, 3)
    assert route.steps == (
        "blue",
        "continue straight",
        "Oak Street",
        "turn right",
        "Pine Street",
        "red",
    )
    # the map's network gives the same action, so connectivity scoring agrees with the truth
    net = road_network(g, 1, 3, (*ll(-5, -5), *ll(10, 10)))
    assert route_connected(list(route.steps), net) == (True, None)
    assert (
        route_connected(
            ["blue", "continue straight", "Oak Street", "continue straight", "Pine Street", "red"],
            net,
        )[0]
        is False
    )


def test_a_name_change_in_a_gentle_bend_stays_straight():
    g = bend(30)
    assert CURVE_TURN_DEG > 30
    route = shortest_route(g, 1, 3)
    assert route.steps[3] == "continue straight"


def test_the_bend_fixture_is_what_it_says():
    g = bend(90)
    d = g.edges[1, 2, 0]["geometry"].coords
    lats, lons = zip(*[(lat, lon) for lon, lat in d], strict=True)
    # 300 m straight plus an eighth of a 30 m circle
    assert path_length_m(lats, lons) == pytest.approx(300 + 2 * math.pi * 30 / 8, abs=1)


def test_the_srn_prompt_states_the_turn_thresholds_the_truth_uses():
    """A 154 degree turn was anyone's guess (issue 26, finding 10): the prompt says where each
    action starts, and what it says is what the truth's ``turn_action`` does."""
    import re

    from cartoqa.geodesy import turn_action
    from cartoqa.tasks.templates import default_prompts

    text = " ".join(default_prompts().text("map.srn").split())
    said = {
        action: (float(lo), float(hi))
        for lo, hi, action in re.findall(r"(\d+) to (\d+) is \"([A-Za-z -]+)\"", text)
    }
    assert set(said) == {"turn right", "turn left", "make a U-turn and continue straight"}
    assert re.search(r"under 40 degrees or over 320 is \"continue straight\"", text)
    for action, (lo, hi) in said.items():
        for turn in (lo + 0.5, (lo + hi) / 2, hi - 0.5):
            assert turn_action(0.0, turn) == action
    assert turn_action(0.0, 154.0) == "make a U-turn and continue straight"
