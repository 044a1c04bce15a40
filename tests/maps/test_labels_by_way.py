"""Labels attributed to the OSM feature that carries them (issue 12, item 2).

The audit's Portland case: a sidewalk's "Northeast Grand Avenue" label made the road's name
count as drawn while the road's own labels were hidden by the marker.  Here the same thing
happens on a small extract written in the test (``write_osm_same_name_sidewalk``): the per-name
rule (``names``) still says the name is drawn, the per-feature one (``ways``) shows that only
the sidewalk's label is, so a check by the road's way ids rejects the view.
"""

from __future__ import annotations

import itertools

import pytest

from maps import MapEngine, View
from maps.labels import SALTS, RoadLabels, _code, way_ids
from maps.roads import _drivable, load_road_graph

from .road_fixtures import (
    GRAND_AVENUE_PLAZA,
    GRAND_AVENUE_ROAD,
    GRAND_AVENUE_SIDEWALK,
    GRAND_AVENUE_SQUARE,
    ll,
    write_osm_same_name_sidewalk,
)

WIDTH, HEIGHT = 1366, 768


def colliding_ids(salt: str, start: int = 3000) -> tuple[int, int]:
    """The first two way ids from ``start`` that get one colour under ``salt``."""
    seen: dict[int, int] = {}
    for i in itertools.count(start):
        c = _code(i, salt)
        if c in seen:
            return seen[c], i
        seen[c] = i
    raise AssertionError  # pragma: no cover


LANES = colliding_ids(SALTS[0])


@pytest.fixture(scope="module")
def grand(cluster, cache, carto_files, tmp_path_factory):
    path = tmp_path_factory.mktemp("grand") / "grand-avenue.osm"
    write_osm_same_name_sidewalk(path, lane_ids=LANES)
    engine = MapEngine(path, carto_files=carto_files, cache=cache, cluster=cluster)
    return engine, RoadLabels(engine), load_road_graph(engine.extract, cache=cache)


def graph_way_ids(graph, road: str | None = None) -> set[int]:
    return {
        i
        for *_, d in graph.edges(data=True)
        if road is None or d["road"] == road
        for i in way_ids(d["osmid"])
    }


def in_image(box) -> bool:
    return 0 <= box[0] < box[2] <= WIDTH and 0 <= box[1] < box[3] <= HEIGHT


def test_a_same_name_sidewalk_does_not_draw_the_roads_name(grand):
    _, labels, roads = grand
    view = View.make(ll(6, 0), 19, id="grand-z19")
    road_ids = graph_way_ids(roads.graph, "Grand Avenue")
    assert road_ids == {GRAND_AVENUE_ROAD}  # the sidewalk and the square are not in the graph
    free = labels.ways(view)
    assert free.name_of[GRAND_AVENUE_ROAD] == free.name_of[GRAND_AVENUE_SIDEWALK] == "Grand Avenue"
    road_boxes = free.visible[GRAND_AVENUE_ROAD]
    walk_boxes = free.visible[GRAND_AVENUE_SIDEWALK]
    assert road_boxes and walk_boxes and all(map(in_image, road_boxes + walk_boxes))
    # each label where its own line is drawn: the sidewalk (25 m north) above the road
    assert max(b[3] for b in walk_boxes) < min(b[1] for b in road_boxes)
    assert free.label_of(road_ids) == (GRAND_AVENUE_ROAD, road_boxes[0])

    # a marker on each of the road's labels (its icon reaches 42 px above its anchor)
    markers = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2 + 20) for b in road_boxes]
    hidden = labels.ways(view, markers)
    assert "Grand Avenue" in labels.names(view, markers).visible  # the old, per-name rule
    assert GRAND_AVENUE_ROAD not in hidden.visible and GRAND_AVENUE_ROAD in hidden.partial
    assert hidden.visible[GRAND_AVENUE_SIDEWALK] == walk_boxes
    assert hidden.label_of(road_ids) is None  # the check by the road's ways fails
    assert hidden.label_of([*road_ids, GRAND_AVENUE_SIDEWALK]) == (
        GRAND_AVENUE_SIDEWALK,
        walk_boxes[0],
    )


def test_squares_and_relations_carry_their_own_ids(grand):
    _, labels, roads = grand
    square = labels.ways(View.make(ll(6, 0), 19, id="grand-square"))
    assert square.name_of[GRAND_AVENUE_SQUARE] == "Grand Avenue"
    (box,) = square.visible[GRAND_AVENUE_SQUARE]  # a point label: one box
    assert in_image(box) and box[1] > max(b[3] for b in square.visible[GRAND_AVENUE_ROAD])
    # osm2pgsql stores a multipolygon relation under its negated id
    view = View.make(ll(4, 0), 17, id="grand-plaza")
    plaza = labels.ways(view)
    assert plaza.name_of[-GRAND_AVENUE_PLAZA] == "Grand Avenue Plaza"
    assert -GRAND_AVENUE_PLAZA in plaza.visible
    # the per-name rule never counted an area's label (one box, fewer than its letters)
    assert "Grand Avenue Plaza" in labels.names(view).partial
    assert not graph_way_ids(roads.graph) & {GRAND_AVENUE_SQUARE, -GRAND_AVENUE_PLAZA}


def test_features_sharing_a_colour_are_coded_again_under_another_salt(grand):
    _, labels, _ = grand
    north, south = LANES
    assert _code(north, SALTS[0]) == _code(south, SALTS[0])
    before = labels.resalted
    found = labels.ways(View.make(ll(6, 0), 18, id="grand-lanes"))
    assert labels.resalted > before
    assert (found.name_of[north], found.name_of[south]) == ("North Lane", "South Lane")
    # under one shared colour both lanes' glyphs would go to one id; each has its own here
    assert max(b[3] for b in found.visible[north]) < min(b[1] for b in found.visible[south])


def test_on_a_shared_extract_visible_ways_are_graph_edges_or_not_roads(engine_for, cache):
    """osm2pgsql's osm_id and osmnx's osmid come from the same cleaned file: a labelled way is
    an edge of the road graph exactly when it is a drivable road, and its label is its name."""
    import osmium

    engine = engine_for("monaco.osm.pbf")
    labels = RoadLabels(engine)
    graph = load_road_graph(engine.extract, cache=cache).graph
    edge_road = {i: d["road"] for *_, d in graph.edges(data=True) for i in way_ids(d["osmid"])}
    lat, lon = engine.extract.center
    seen: dict[int, str] = {}
    for z, dy, dx in ((17, 0, 0), (18, 0, 0), (19, 0, 0), (18, 0.002, -0.003)):
        found = labels.ways(View.make((lat + dy, lon + dx), z, id=f"monaco-{z}"))
        assert all(in_image(b) for boxes in found.visible.values() for b in boxes)
        seen |= {i: found.name_of[i] for i in found.visible}
    roads = {i for i in seen if i in edge_road}
    assert len(roads) >= 10
    assert all(seen[i] == edge_road[i] for i in roads)
    others = {i for i in seen if i not in edge_road and i > 0}
    tags = {
        w.id: dict(w.tags)
        for w in osmium.FileProcessor(str(engine.extract.path), osmium.osm.WAY)
        if w.id in others
    }
    assert set(tags) == others  # every positive id is a way of the file
    assert not [i for i in others if _drivable(tags[i])], "a drivable way missing from the graph"
