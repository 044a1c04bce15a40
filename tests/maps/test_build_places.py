"""Built navigation sets on a real extract: one question per place, every leg visible, views
inside the data, and truths that agree with the road graph (issue 12, items 1, 3 and 4)."""

import itertools

import pytest

from cartoqa.geodesy import distance_km
from cartoqa.stores import load_dataset
from cartoqa.tasks import build_dataset
from cartoqa.tasks.navigation import MIN_LEG_PX, SAME_JUNCTION_M
from cartoqa.tasks.views import MAX_BLANK_SHARE
from maps import View
from maps.roads import load_road_graph


@pytest.fixture(scope="module")
def moorgate(engine_for, tmp_path_factory):
    engine = engine_for("london-moorgate.osm.pbf")
    out = tmp_path_factory.mktemp("moorgate") / "ds"
    build_dataset(out, engine=engine, tasks=["srn", "mml"], per_task=6, seed=3, progress=False)
    return engine, load_dataset(out)


def test_one_mml_question_per_junction_and_one_srn_per_pair(moorgate):
    _, ds = moorgate
    mml = [s for s in ds if s.task == "mml"]
    assert len({s.ground_truth.junction for s in mml}) == len(mml)
    for a, b in itertools.combinations(mml, 2):
        same_names = {a.ground_truth.road_1, a.ground_truth.road_2} == {
            b.ground_truth.road_1,
            b.ground_truth.road_2,
        }
        pa = (a.metadata.model_extra or {})["markers"].split("@")[1].split(",")
        pb = (b.metadata.model_extra or {})["markers"].split("@")[1].split(",")
        metres = float(distance_km(*map(float, pa), *map(float, pb))) * 1000
        assert not (same_names and metres < SAME_JUNCTION_M), (a.id, b.id)
    pairs = [
        (s.ground_truth.network.origin, s.ground_truth.network.destination)
        for s in ds
        if s.task == "srn"
    ]
    assert len(set(pairs)) == len(pairs)


def test_every_srn_leg_is_long_enough_and_agrees_with_the_graph(moorgate):
    engine, ds = moorgate
    g = load_road_graph(engine.extract).graph
    srn = [s for s in ds if s.task == "srn"]
    assert srn
    for s in srn:
        t = s.ground_truth
        assert [x for leg in t.legs for x in (leg.action, leg.road)] == t.steps[1:-1]
        assert t.nodes[0] == t.network.origin and t.nodes[-1] == t.network.destination
        assert [n for leg in t.legs for n in leg.nodes[:-1]] + [t.nodes[-1]] == t.nodes
        for leg in t.legs:
            assert leg.length_px >= MIN_LEG_PX
            assert all(g.has_edge(u, v) for u, v in itertools.pairwise(leg.nodes))
            assert all(
                g.edges[u, v, 0].get("road") == leg.road
                for u, v in itertools.pairwise(leg.nodes)
                if g.has_edge(u, v, 0)
            )
            # the shape lies inside the image
            assert all(0 <= x <= 1366 and 0 <= y <= 768 for x, y in leg.points_px)


def test_views_are_inside_the_data_and_markers_where_metadata_says(moorgate):
    _, ds = moorgate
    for s in ds:
        md = s.metadata.model_extra or {}
        assert md["blank_share"] <= MAX_BLANK_SHARE
        view = View.make((md["center_lat"], md["center_lon"]), s.metadata.zoom)
        for part in md["markers"].split(";"):
            colour, at = part.split("@")
            x, y = view.pixel(*map(float, at.split(",")))
            assert 80 <= x <= 1366 - 80 and 80 <= y <= 768 - 80, (s.id, colour, x, y)


def test_views_over_land_without_data_are_rejected(cluster, cache, carto_files, tmp_path):
    """No header box, data in two towns 4 km apart: the bounding box is mostly empty land."""
    from maps import MapEngine

    from .osm_xml import osm_grid_xml, write_osm

    a_nodes, a_ways = osm_grid_xml(8, 8, step=1.0, prefix="North ")
    b_nodes, b_ways = osm_grid_xml(
        8, 8, step=1.0, at=(40.0, 25.0), first_node=101, first_way=2000, prefix="South "
    )
    src = tmp_path / "two-towns.osm"
    write_osm(src, [*a_nodes, *b_nodes, *a_ways, *b_ways])
    engine = MapEngine(src, carto_files=carto_files, cache=cache, cluster=cluster)
    assert not engine.extract.has_header_box
    report = build_dataset(
        tmp_path / "ds", engine=engine, tasks=["rle"], per_task=4, seed=2, progress=False
    )
    assert report.rejected["rle"]["view_not_covered"] > 0
    for s in load_dataset(tmp_path / "ds"):
        md = s.metadata.model_extra or {}
        view = View.make((md["center_lat"], md["center_lon"]), s.metadata.zoom)
        assert engine.extract.covered_share(view.bounds()) >= 1 - MAX_BLANK_SHARE
        assert md["blank_share"] <= MAX_BLANK_SHARE
