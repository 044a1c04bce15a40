"""Views past the data's edge (issue 26, finding 9): a tiny extract written by the test.

Heidelberg srn-0004 showed 48 % empty land past the extract's cut and reported 0 % blank,
because the file's header box went on where the data stopped.  The case here: a header box
3.2 km wide whose data (a grid of streets) fills only its western 1.6 km, and a road cut by
the clip (it names a node the file lacks) whose trimmed end is a dead end the clip made.
"""

from __future__ import annotations

from collections import Counter

import pytest
from shapely.geometry import Polygon
from shapely.geometry import box as rect

from cartoqa.tasks.navigation import attempt_rle
from cartoqa.tasks.views import MAX_BLANK_SHARE, Reject, ViewSampler, view_bounds
from maps.extracts import load_extract
from maps.roads import load_road_graph

from .osm_xml import osm_grid_xml, write_osm
from .road_fixtures import ll

#: the data: an 8 x 8 grid, 200 m apart, x and y from 0 to 1.4 km; "Clip Road" leaves its
#: east side at y = 0.6 km, reaches x = 1.6 km and goes on to a node the file lacks
CLIP_END = 9001
REAL_END = 9003  # a cul-de-sac inside the town: a real dead end
HEADER = (*ll(-2, -2), *ll(30, 16))  # south, west, north, east: the box goes on east to 3 km


@pytest.fixture(scope="module")
def town(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edge")
    nodes, ways = osm_grid_xml(8, 8, step=2.0)
    # the grid's nodes are 1..64; junction (7, 3) is node 1 + 7 + 3 * 8 = 32, at (14, 6)
    clip_lat, clip_lon = ll(16, 6)
    cul_a, cul_b = ll(6, 6), ll(7, 7)
    nodes += [
        f'  <node id="{CLIP_END}" version="1" lat="{clip_lat:.7f}" lon="{clip_lon:.7f}"/>',
        f'  <node id="9002" version="1" lat="{cul_a[0]:.7f}" lon="{cul_a[1]:.7f}"/>',
        f'  <node id="{REAL_END}" version="1" lat="{cul_b[0]:.7f}" lon="{cul_b[1]:.7f}"/>',
    ]
    ways += [
        '  <way id="5001" version="1"><nd ref="32"/><nd ref="9001"/><nd ref="9999"/>'
        '<tag k="highway" v="residential"/><tag k="name" v="Clip Road"/></way>',
        # the cul-de-sac leaves Row 3 at (6, 6) (node 1 + 3 + 3 * 8 = 28) by a node of its own
        '  <way id="5002" version="1"><nd ref="28"/><nd ref="9003"/>'
        '<tag k="highway" v="residential"/><tag k="name" v="Short Close"/></way>',
    ]
    path = folder / "half-town.osm"
    write_osm(path, nodes + ways, bounds=HEADER)
    cache = folder / "cache"
    extract = load_extract(path, cache=cache)
    roads = load_road_graph(extract, cache=cache)
    return extract, roads


def blank_past_the_data(bounds) -> float:
    """The share of a view east of the data (the hull of the grid and Clip Road), computed
    here from the fixture's own corners."""
    s, w, n, e = bounds
    corners = [ll(0, 0), ll(14, 0), ll(16, 6), ll(14, 14), ll(0, 14)]
    data = Polygon([(lon, lat) for lat, lon in corners])
    view = rect(w, s, e, n)
    return 1 - view.intersection(data).area / view.area


def test_the_header_box_alone_calls_a_view_past_the_data_covered(town):
    extract, roads = town
    assert extract.has_header_box
    east_view = view_bounds(ll(24, 8), 17)  # wholly east of the data, inside the header box
    assert extract.covered_share(east_view) == 1.0  # what the box says
    assert roads.data_share(east_view) == 0.0  # what the data says


def test_rle_views_past_the_data_are_rejected_and_blank_is_measured(town):
    extract, roads = town
    sampler = ViewSampler(roads, None, extract.bounds, seed=11, covered_share=extract.covered_share)
    plans, why = [], Counter()
    for _ in range(400):
        try:
            plans.append(attempt_rle(sampler, "simple"))
        except Reject as r:
            why[r.reason] += 1
    assert len(plans) >= 10, why
    assert why["view_not_covered"] > 0
    for p in plans:
        bounds = view_bounds(p.view.center, p.view.zoom)
        blank = blank_past_the_data(bounds)
        assert blank <= MAX_BLANK_SHARE + 0.01, (p.view.id, blank)
        assert p.questions[0].metadata["blank_share"] == pytest.approx(blank, abs=0.02)


def test_a_dead_end_the_clip_made_is_never_a_marker(town):
    extract, roads = town
    g = roads.graph
    assert CLIP_END in g and REAL_END in g
    sampler = ViewSampler(roads, None, extract.bounds, seed=5)
    at = roads.node_latlon(CLIP_END)
    marked = []
    for _ in range(400):
        try:
            plan = attempt_rle(sampler, "simple")
        except Reject:
            continue
        marked += [(m.lat, m.lon) for m in plan.view.markers]
    assert len(marked) >= 20
    assert all(abs(lat - at[0]) + abs(lon - at[1]) > 1e-6 for lat, lon in marked)
    assert roads.clip_end(CLIP_END)  # Clip Road was cut at the file's edge
    assert not roads.clip_end(REAL_END)  # Short Close really ends there
    assert CLIP_END not in sampler.named_starts and CLIP_END not in sampler.starts
