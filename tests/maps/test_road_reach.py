"""How far a reader follows a road from an MML junction to find its label (``road_reach``): the
blind audit of issue 26 found Sydney mml-0015, where the marker sat on an unlabelled arm of
"High Street" and its only label lay round a sharp corner, past a lane that joined there (a
lane not in the drivable graph, so the corner is no node of it)."""

from __future__ import annotations

from maps.routes import road_reach

from .road_fixtures import graph, ll, road


def _reached(lines) -> list[tuple[float, float]]:
    return [p for line in lines for p in line]


def _near(points, xy, tol=1e-6) -> bool:
    lat, lon = ll(*xy)
    return any(abs(a - lat) < tol and abs(b - lon) < tol for a, b in points)


def test_a_sharp_corner_of_one_way_line_ends_the_stretch():
    # "High Street": west from the junction (node 1 at (0, 0)) to a corner at (-1, 0), then north
    # to node 2 at (-1, 3): one edge of the graph, its corner a vertex of its line
    g = graph({1: (0, 0), 2: (-1, 3), 3: (0, -2), 4: (0, 2)})
    road(g, "High Street", [1, 2], via={(1, 2): [(-1, 0)]})
    road(g, "Kent Street", [3, 1, 4])
    pts = _reached(road_reach(g, 1, "High Street"))
    assert _near(pts, (-1, 0))  # up to the corner
    assert not _near(pts, (-1, 3))  # not round it
    assert not any(lat > ll(0, 0.5)[0] for lat, _ in pts)


def test_a_smooth_bend_is_followed():
    # the same road bending through many small steps (15 degrees each): no corner
    bend = [(-0.5, 0.02), (-0.9, 0.1), (-1.2, 0.3), (-1.4, 0.6), (-1.5, 1.0)]
    g = graph({1: (0, 0), 2: (-1.5, 3), 3: (0, -2), 4: (0, 2)})
    road(g, "High Street", [1, 2], via={(1, 2): bend})
    road(g, "Kent Street", [3, 1, 4])
    assert _near(_reached(road_reach(g, 1, "High Street")), (-1.5, 3))


def test_a_road_followed_straight_through_a_junction_but_not_round_a_turn_at_one():
    # "Elm Street" east from node 1 through node 2 (where "Oak Street" crosses) on to node 3,
    # then it turns north at node 3 where "Ash Street" goes on east
    g = graph({1: (0, 0), 2: (2, 0), 3: (4, 0), 4: (4, 2), 5: (2, -1), 6: (2, 1), 7: (6, 0)})
    road(g, "Elm Street", [1, 2, 3, 4])
    road(g, "Oak Street", [5, 2, 6])
    road(g, "Ash Street", [3, 7])
    pts = _reached(road_reach(g, 1, "Elm Street"))
    assert _near(pts, (4, 0))  # straight on through Oak Street's crossing
    assert not _near(pts, (4, 2))  # not round the turn where Ash Street goes on


def test_only_the_roads_own_stretches_and_none_of_another_name():
    g = graph({1: (0, 0), 2: (2, 0), 3: (0, 2)})
    road(g, "Elm Street", [1, 2])
    road(g, "Oak Street", [1, 3])
    assert not _near(_reached(road_reach(g, 1, "Elm Street")), (0, 2))
    assert road_reach(g, 1, "Pine Street") == []
