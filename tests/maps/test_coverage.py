"""Where an extract's data is: the occupancy grid of extracts without a header box, the header
box of those with one, and the share of a view each covers."""

from __future__ import annotations

import numpy as np
import pytest

from cartoqa.errors import MapDataError
from maps import load_extract
from maps.coverage import CELL_M, CoverageGrid, coverage_of

from .conftest import extract_path
from .osm_xml import osm_grid_xml, write_osm
from .road_fixtures import ll


def box(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
    """(south, west, north, east) of the grid rectangle from (x0, y0) to (x1, y1)."""
    s, w = ll(x0, y0)
    n, e = ll(x1, y1)
    return s, w, n, e


def two_towns(path, *, bounds=None) -> None:
    """Two 400 m squares of streets (100 m apart), one at (0, 0), one 4 km east and 2.5 km
    north: the data's bounding box is mostly empty between them."""
    a_nodes, a_ways = osm_grid_xml(5, 5, step=1.0, prefix="A ")
    b_nodes, b_ways = osm_grid_xml(
        5, 5, step=1.0, at=(40.0, 25.0), first_node=101, first_way=2000, prefix="B "
    )
    write_osm(path, [*a_nodes, *b_nodes, *a_ways, *b_ways], bounds=bounds)


def test_data_covering_part_of_its_box_without_a_header(tmp_path):
    src = tmp_path / "two-towns.osm"
    two_towns(src)
    e = load_extract(src, cache=tmp_path / "cache")
    assert not e.has_header_box
    s, w, n, east = e.bounds  # the nodes' extent: both towns and the empty land between
    assert box(0, 0, 44, 29) == pytest.approx((s, w, n, east), abs=1e-6)
    middle = box(17, 10, 23, 14)  # a 600 x 400 m view half way between the towns
    assert e.covered_share(middle) < 0.01
    assert e.covered_share(box(0.5, 0.5, 3.5, 3.5)) > 0.99  # inside town A
    assert e.covered_share(box(40.2, 25.5, 43.8, 28)) > 0.99  # inside town B
    half = e.covered_share(box(2, 0.5, 6, 3.5))  # town A's east edge (x = 4) in the middle
    assert 0.4 < half < 0.65
    assert e.covered_share(e.bounds) < 0.05  # the towns are a sliver of their bounding box
    assert e.coverage_file is not None and e.coverage_file.is_file()  # cached on first use


def test_with_a_header_box_the_box_is_the_coverage(tmp_path):
    src = tmp_path / "two-towns-boxed.osm"
    header = box(-5, -5, 50, 35)
    two_towns(src, bounds=header)
    e = load_extract(src, cache=tmp_path / "cache")
    assert e.has_header_box and e.bounds == pytest.approx(header, abs=1e-7)
    assert e.covered_share(box(17, 10, 23, 14)) == 1.0  # inside the box, data or not
    # half of the view east of the box (Web Mercator x is linear in longitude; the box is
    # stored to 7 decimals)
    assert e.covered_share(box(46, 10, 54, 14)) == pytest.approx(0.5, abs=1e-5)
    # a quarter of it: past the box's north-east corner
    assert e.covered_share(box(46, 31, 54, 39)) == pytest.approx(0.25, abs=2e-3)
    assert e.covered_share(box(60, 10, 64, 14)) == 0.0
    # the data's own grid still knows where the streets are
    assert e.coverage().share(box(17, 10, 23, 14)) < 0.01


def test_a_street_covers_the_cells_between_its_nodes(tmp_path):
    """A straight 1.5 km street with a node at each end only: its middle is drawn, so it counts."""
    src = tmp_path / "long-street.osm"
    (a_lat, a_lon), (b_lat, b_lon) = ll(0, 0), ll(15, 0)
    write_osm(
        src,
        [
            f'  <node id="1" version="1" lat="{a_lat:.7f}" lon="{a_lon:.7f}"/>',
            f'  <node id="2" version="1" lat="{b_lat:.7f}" lon="{b_lon:.7f}"/>',
            '  <way id="1" version="1"><nd ref="1"/><nd ref="2"/>'
            '<tag k="highway" v="primary"/></way>',
        ],
    )
    grid = coverage_of(src)
    for k in range(1, 15):  # a 2 m box on the street every 100 m
        x = float(k)
        assert grid.share(box(x - 0.01, -0.01, x + 0.01, 0.01)) > 0.45, x  # 0.5 on a cell edge
    assert grid.share(box(5, 4, 10, 6)) == 0.0  # 400 m north of it: nothing


def test_blocks_between_streets_are_covered_and_wide_gaps_are_not(tmp_path):
    src = tmp_path / "blocks.osm"
    nodes, ways = osm_grid_xml(6, 6, step=2.0)  # 200 m blocks with no buildings in them
    write_osm(src, [*nodes, *ways])
    inner = box(1, 1, 9, 9)
    assert coverage_of(src).share(inner) > 0.99  # the closing fills the blocks
    assert coverage_of(src, closing_cells=0).share(inner) < 0.6  # the streets alone do not
    wide = tmp_path / "wide.osm"
    nodes, ways = osm_grid_xml(2, 2, step=10.0)  # a 1 km square of four streets
    write_osm(wide, [*nodes, *ways])
    assert coverage_of(wide).share(box(3, 3, 7, 7)) < 0.01  # its middle stays empty
    assert coverage_of(wide).cell == pytest.approx(CELL_M / np.cos(np.radians(43.7)), rel=1e-3)


def test_the_grid_is_read_from_the_cache(tmp_path):
    src = tmp_path / "two-towns.osm"
    two_towns(src)
    cache = tmp_path / "cache"
    e = load_extract(src, cache=cache)
    view = box(0.5, 0.5, 3.5, 3.5)
    assert e.covered_share(view) > 0.99
    grid, cached = e.coverage(), e.coverage_file
    assert cached is not None
    # replace the cached grid by an empty one of the same frame: a new load must read it
    CoverageGrid(np.zeros_like(grid.covered), x0=grid.x0, y0=grid.y0, cell=grid.cell).save(cached)
    assert load_extract(src, cache=cache).covered_share(view) == 0.0
    cached.write_bytes(b"not a grid")  # a damaged cache file is made again
    again = load_extract(src, cache=cache)
    assert again.covered_share(view) > 0.99
    assert np.array_equal(CoverageGrid.load(cached).covered, grid.covered)


def test_an_empty_view_is_refused(tmp_path):
    src = tmp_path / "two-towns.osm"
    two_towns(src)
    e = load_extract(src, cache=tmp_path / "cache")
    with pytest.raises(MapDataError, match=r"two-towns: box .* is empty or inverted"):
        e.covered_share(box(3, 3, 1, 1))


@pytest.mark.parametrize(
    ("name", "header"),
    [
        ("helsinki-centre.osm.pbf", True),
        ("london-moorgate.osm.pbf", True),
        ("monaco.osm.pbf", True),
        ("san-jose-downtown.osm", False),
        ("sydney-cbd.osm.pbf", True),
        ("vancouver.osm.pbf", True),
    ],
)
def test_shared_extracts_header_boxes(name, header, tmp_path):
    e = load_extract(extract_path(name), cache=tmp_path)
    assert e.has_header_box is header
    if not header:  # San Jose's data fills its nodes' extent, give or take its edges
        assert e.covered_share(e.bounds) > 0.95


def test_share_weights_cut_cells_by_the_part_inside():
    """The summed-area table's answer equals the covered area cell by cell, for random boxes
    that cut cells and reach past the grid."""
    from cartoqa.geodesy import from_web_mercator

    rng = np.random.default_rng(0)
    covered = rng.random((20, 30)) < 0.4
    grid = CoverageGrid(covered, x0=800_000.0, y0=5_400_000.0, cell=70.0)
    for _ in range(100):
        gx = np.sort(rng.uniform(-5, 35, 2))
        gy = np.sort(rng.uniform(-5, 25, 2))
        area = 0.0
        for j, i in zip(*np.nonzero(covered), strict=True):
            w = max(0.0, min(gx[1], i + 1) - max(gx[0], i))
            h = max(0.0, min(gy[1], j + 1) - max(gy[0], j))
            area += w * h
        exact = area / ((gx[1] - gx[0]) * (gy[1] - gy[0]))
        s, w_ = from_web_mercator(grid.x0 + gx[0] * grid.cell, grid.y0 + gy[0] * grid.cell)
        n, e = from_web_mercator(grid.x0 + gx[1] * grid.cell, grid.y0 + gy[1] * grid.cell)
        assert grid.share((float(s), float(w_), float(n), float(e))) == pytest.approx(
            exact, abs=1e-9
        )
