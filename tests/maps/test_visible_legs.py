"""SRN legs a person can see (issue 12, item 1): hand-made graphs, real projection.

The audit's cases: a 3 m name change at a junction (Heidelberg srn-0005) and
a loop under the blue marker's icon (srn-0006). Each leg's length on the image
is recomputed here from the grid positions, not taken from the code.
"""

import math

import pytest

from cartoqa.tasks.navigation import (
    AMBIGUOUS_TURN_DEG,
    MIN_LEG_PX,
    ambiguous_turn,
    visible_legs,
)
from cartoqa.tasks.views import Reject
from maps import Marker, View
from maps.projection import metres_per_pixel
from maps.routes import shortest_route

from .road_fixtures import LAT0, graph, road

Z = 17
M_PER_PX = metres_per_pixel(Z) * math.cos(math.radians(LAT0))  # about 0.86 m at zoom 17


def view_for(g, origin, dest):
    a = (g.nodes[origin]["y"], g.nodes[origin]["x"])
    b = (g.nodes[dest]["y"], g.nodes[dest]["x"])
    centre = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    return View.make(centre, Z, markers=[Marker(*a, "blue"), Marker(*b, "red")])


def straight_with_a_piece(piece_m: float):
    """Kornmarkt (300 m) -> a piece of another name -> Zwingerstrasse (300 m), due east."""
    d = piece_m / 100  # grid units are 100 m
    g = graph({1: (0, 0), 2: (3, 0), 3: (3 + d, 0), 4: (6 + d, 0)})
    road(g, "Kornmarkt", [1, 2])
    road(g, "Ingrimstrasse", [2, 3])
    road(g, "Zwingerstrasse", [3, 4])
    return g


def test_a_3_m_name_change_at_a_junction_is_rejected():
    g = straight_with_a_piece(3.0)
    route = shortest_route(g, 1, 4)
    assert [leg.road for leg in route.legs] == ["Kornmarkt", "Ingrimstrasse", "Zwingerstrasse"]
    assert 3.0 / M_PER_PX < MIN_LEG_PX  # about 3.5 px on the image
    with pytest.raises(Reject) as why:
        visible_legs(g, route, view_for(g, 1, 4))
    assert why.value.reason == "leg_too_short"


def test_a_piece_long_enough_to_see_is_kept_with_its_pixels():
    g = straight_with_a_piece(60.0)  # 60 m: about 70 px at zoom 17
    route = shortest_route(g, 1, 4)
    legs = visible_legs(g, route, view_for(g, 1, 4))
    assert [leg.road for leg in legs] == ["Kornmarkt", "Ingrimstrasse", "Zwingerstrasse"]
    assert [leg.action for leg in legs] == list(route.steps[1:-1:2])
    for leg, metres in zip(legs, (300.0, 60.0, 300.0), strict=True):
        assert leg.length_m == pytest.approx(metres, rel=1e-3)
        # pixels from the metres and the zoom's scale, independently of the code
        assert leg.length_px == pytest.approx(metres / M_PER_PX, rel=0.01)
        (x0, y0), (x1, y1) = leg.points_px[0], leg.points_px[-1]
        assert y0 == pytest.approx(y1, abs=0.2) and x1 > x0  # due east on the image
    assert legs[1].nodes == [2, 3] and legs[0].nodes == [1, 2]
    assert legs[0].points_px[-1] == pytest.approx(legs[1].points_px[0])


def test_a_leg_wholly_under_the_blue_marker_is_rejected():
    """41 px north of the origin stays inside the pin (it reaches 42 px above its point)."""
    up = 41 * M_PER_PX / 100
    g = graph({1: (0, 0), 2: (0, up), 3: (4, up)})
    road(g, "Seitengasse", [1, 2])
    road(g, "Hauptstrasse", [2, 3])
    route = shortest_route(g, 1, 3)
    assert route.steps[2] == "Seitengasse"
    with pytest.raises(Reject) as why:
        visible_legs(g, route, view_for(g, 1, 3))
    assert why.value.reason == "leg_under_marker"
    # the same leg going east instead (out from under the pin) is fine
    g = graph({1: (0, 0), 2: (up * 1.5, 0), 3: (up * 1.5, 4)})
    road(g, "Seitengasse", [1, 2])
    road(g, "Hauptstrasse", [2, 3])
    route = shortest_route(g, 1, 3)
    assert [leg.road for leg in visible_legs(g, route, view_for(g, 1, 3))] == [
        "Seitengasse",
        "Hauptstrasse",
    ]


@pytest.mark.parametrize(
    ("east", "south", "ambiguous"),
    [
        (3.0, 3.2, True),  # about 137 degrees from map-up: right turn or U-turn?
        (3.0, 0.5, False),  # about 99 degrees: plainly a right turn
        (0.3, -3.0, False),  # about 6 degrees: straight on
        (2.0, -3.0, True),  # about 34 degrees: straight on or a right turn?
    ],
)
def test_a_first_turn_on_the_fence_between_two_actions_is_ambiguous(east, south, ambiguous):
    g = graph({1: (0, 0), 2: (east, -south), 3: (east + 3, -south)})
    road(g, "Diagonal Street", [1, 2])
    road(g, "Cross Street", [2, 3])
    route = shortest_route(g, 1, 3)
    heading = math.degrees(math.atan2(east, -south)) % 360  # clockwise from north, on the grid
    near = min(abs(heading - t) for t in (40, 140, 220, 320))
    assert (near < AMBIGUOUS_TURN_DEG) == ambiguous  # the case is what it says
    assert ambiguous_turn(route) == ambiguous
