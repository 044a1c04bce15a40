"""Legs the drawing contradicts (issue 26, finding 8): hand-made graphs, the style's widths.

- srn-0010: a ramp drawn merged with the motorway for 90 px: its name and its arrows are not
  where a reader looks for them.
- Skøyen srn-0005: two one-way carriageways in opposite directions, a few metres apart, drawn
  as one band with arrows both ways; the route's way was drawn with arrows against it.
- Sydney srn-0009 (the blind audit): a one-way piece too short to carry an arrow, whose
  reverse gives the route a reader would take.
"""

from __future__ import annotations

import math

from maps.drawn_roads import ARROWS_PX, HIDDEN_PX, ONEWAY_SPACING_PX, DrawnRoads, drawn_width_px
from maps.projection import metres_per_pixel
from maps.routes import NEAR_TIE_SHARE, shortest_route

from .road_fixtures import LAT0, graph, road


def px_m(zoom: int) -> float:
    """Metres on the ground per pixel at ``zoom`` here."""
    return metres_per_pixel(zoom) * math.cos(math.radians(LAT0))


def classed(g, names: dict[str, str]) -> None:
    """Give each edge its road's class and one OSM way id per road."""
    ids = {name: 100 + i for i, name in enumerate(sorted(names))}
    for *_, d in g.edges(data=True):
        d["highway"] = names[d["road"]]
        d["osmid"] = ids[d["road"]]


def ramp(gap_m: float, along_m: float):
    """Motorway "Coast Highway" east from (0, 0) to (10, 0) through node 2 at (2, 0); the ramp
    "Exit 5" leaves node 2 and runs ``gap_m`` south of the motorway for ``along_m`` metres
    before it turns south-east to node 4 at (6, -2)."""
    gap, along = gap_m / 100, along_m / 100
    g = graph({1: (0, 0), 2: (2, 0), 3: (10, 0), 4: (6, -2)})
    road(g, "Coast Highway", [1, 2, 3], oneway=True)
    road(g, "Exit 5", [2, 4], oneway=True, via={(2, 4): [(2.05, -gap), (2 + along, -gap)]})
    classed(g, {"Coast Highway": "motorway", "Exit 5": "motorway_link"})
    return g


def test_a_ramp_merged_with_the_motorway_for_90_px_is_hidden():
    z = 17
    g = ramp(gap_m=3.0, along_m=90 * px_m(z))  # 3 m: inside the motorway's 18 px band
    assert 3.0 / px_m(z) < drawn_width_px("motorway", z) / 2
    route = shortest_route(g, 1, 4)
    assert [leg.road for leg in route.legs] == ["Coast Highway", "Exit 5"]
    hidden = DrawnRoads(g).hidden_px(route.edges, z)
    assert hidden >= HIDDEN_PX and hidden >= 80


def test_a_ramp_that_leaves_the_motorway_at_once_is_seen():
    z = 17
    g = ramp(gap_m=30.0, along_m=40.0)  # 35 px off the motorway's centre: its own band
    route = shortest_route(g, 1, 4)
    assert DrawnRoads(g).hidden_px(route.edges, z) < HIDDEN_PX


def carriageways(gap_m: float):
    """ "Elm Street" as two one-way carriageways ``gap_m`` apart: eastbound on y = 0 from node 1
    (0, 0) to node 2 (6, 0), westbound just north from node 3 (6, gap) to node 4 (0, gap);
    they join at each end (nodes 5 at (-1, gap / 2) and 6 at (7, gap / 2))."""
    gap = gap_m / 100
    g = graph({1: (0, 0), 2: (6, 0), 3: (6, gap), 4: (0, gap), 5: (-1, gap / 2), 6: (7, gap / 2)})
    road(g, "Elm Street", [5, 1, 2, 6], oneway=True)
    road(g, "Elm Street North", [6, 3, 4, 5], oneway=True)
    classed(g, {"Elm Street": "residential", "Elm Street North": "residential"})
    return g


def test_opposite_carriageways_drawn_as_one_band_oppose_the_route():
    g = carriageways(8.0)  # 8 m apart: 9 px at zoom 17, inside one 12 px band
    route = shortest_route(g, 1, 2)
    assert 8.0 / px_m(17) < drawn_width_px("residential", 17)
    assert DrawnRoads(g).opposed_px(route.edges, 17) >= ARROWS_PX
    # at zoom 19 the same 8 m are 37 px: two bands, each with its own arrows
    assert DrawnRoads(g).opposed_px(route.edges, 19) < ARROWS_PX


def test_carriageways_far_apart_are_two_bands():
    g = carriageways(40.0)
    route = shortest_route(g, 1, 2)
    assert DrawnRoads(g).opposed_px(route.edges, 17) < ARROWS_PX


def short_one_way(lane_m: float):
    """Origin node 1 at (0, 0) at the top of "Loftus Street", a one-way lane that runs north
    to node 1 from node 2, ``lane_m`` metres south of it; "Bridge Street" (two-way) goes east
    from node 2 to the destination, node 3, 300 m away; the legal way round is "Loop Road"
    (two-way): north from node 1, east, and south to node 3 (Sydney srn-0009 of issue 26's
    blind audit: a 39 m and a 32 m one-way piece drawn with no arrow)."""
    d = lane_m / 100
    g = graph({1: (0, 0), 2: (0, -d), 3: (3, -d), 4: (0, 3), 5: (3, 3)})
    road(g, "Loftus Street", [2, 1], oneway=True)
    road(g, "Bridge Street", [2, 3])
    road(g, "Loop Road", [1, 4, 5, 3])
    classed(g, {"Loftus Street": "residential", "Bridge Street": "residential",
                "Loop Road": "residential"})  # fmt: skip
    return g


def test_a_one_way_too_short_for_an_arrow_is_no_secret_shortcut():
    z = 18
    g = short_one_way(70.0)  # 70 m: under 180 px at zoom 18, so perhaps no arrow drawn
    assert 70.0 / px_m(z) < ONEWAY_SPACING_PX
    route = shortest_route(g, 1, 3)
    assert [leg.road for leg in route.legs] == ["Loop Road"]  # the legal way round
    drawn = DrawnRoads(g)
    assert {g.edges[e]["road"] for e in drawn.arrowless_oneway(z)} == {"Loftus Street"}
    found = drawn.unmarked_shortcut(1, 3, route.length_m, z, share=NEAR_TIE_SHARE)
    assert found is not None and g.edges[found]["road"] == "Loftus Street"


def test_a_one_way_long_enough_for_its_arrows_is_read_as_one_way():
    z = 18
    g = short_one_way(250.0)  # 250 m: over 300 px at zoom 18, arrows every 180 px
    route = shortest_route(g, 1, 3)
    assert [leg.road for leg in route.legs] == ["Loop Road"]
    drawn = DrawnRoads(g)
    assert drawn.arrowless_oneway(z) == []
    assert drawn.unmarked_shortcut(1, 3, route.length_m, z, share=NEAR_TIE_SHARE) is None
