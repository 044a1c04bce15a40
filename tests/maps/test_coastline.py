"""The sea that maps.coastline rebuilds from an extract's coastline: land stays land.

Regression for the Helsinki extract drawn as sea over Hakaniemi and Siltasaari: its
coastline way 24629633 leaves the box and comes back, and the cleaned copy kept only its
longest run of nodes (the Kaisaniemi shore), so everything north of that shore became
water.  And for a shore cut a metre from the box whose end segment runs nearly parallel to
the edge: prolonged along that segment it cut the whole box in two (Monaco's open sea in
the south-east corner was drawn as land).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from shapely.geometry import Point
from shapely.ops import unary_union

from maps.coastline import coastline_lines, sea_polygons, sea_polygons_wkb
from maps.extracts import load_extract

from .conftest import extract_path


def _sea(extract):
    return unary_union(sea_polygons(extract))


def _at(lat: float, lon: float) -> Point:
    return Point(lon, lat)


@pytest.fixture(scope="module")
def helsinki(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("coast-cache")
    return load_extract(extract_path("helsinki-centre.osm.pbf"), cache=cache)


def test_a_clipped_coastline_way_keeps_every_run_of_nodes_inside_the_box(helsinki) -> None:
    lines = coastline_lines(helsinki)
    starts = {(round(c[0][0], 7), round(c[0][1], 7)) for c in lines}
    # way 24629633: the Kaisaniemi shore (the longest run) and the Siltasaari shore
    assert (24.9533744, 60.1767134) in starts
    assert (24.9447703, 60.1785888) in starts


@pytest.mark.parametrize(
    ("what", "lat", "lon"),
    [
        ("Hakaniemi square", 60.1790, 24.9510),
        ("mml-0002's view centre, north of Hakaniemenranta", 60.1785333, 24.9504513),
        ("a Siltasaari courtyard", 60.1788, 24.9470),
        ("Kaisaniemi park", 60.1750, 24.9470),
        ("the railway station", 60.1710, 24.9414),
    ],
)
def test_helsinki_land_is_not_sea(helsinki, what: str, lat: float, lon: float) -> None:
    assert not _sea(helsinki).contains(_at(lat, lon)), f"{what} ({lat}, {lon}) drawn as sea"


@pytest.mark.parametrize(
    ("what", "lat", "lon"),
    [
        ("Kaisaniemenlahti", 60.1766363, 24.9454277),
        ("Siltavuorensalmi at the east edge", 60.1774, 24.9530),
    ],
)
def test_helsinki_bay_is_sea(helsinki, what: str, lat: float, lon: float) -> None:
    assert _sea(helsinki).contains(_at(lat, lon)), f"{what} ({lat}, {lon}) not drawn as sea"


def test_helsinki_sea_is_a_small_share_of_the_box(helsinki) -> None:
    # the bay between the two shores: about 6 % of the box (it was 12 % with the land north
    # of it drawn as sea)
    s, w, n, e = helsinki.bounds
    share = _sea(helsinki).area / ((n - s) * (e - w))
    assert 0.03 < share < 0.09, share


def test_monaco_open_sea_and_land(tmp_path: Path) -> None:
    monaco = load_extract(extract_path("monaco.osm.pbf"), cache=tmp_path)
    sea = _sea(monaco)
    assert sea.contains(_at(43.7240, 7.4470)), "the open sea in the south-east corner"
    assert sea.contains(_at(43.7400, 7.4450)), "the open sea off Monte Carlo"
    assert not sea.contains(_at(43.7393, 7.4286)), "Monte Carlo's casino"
    assert not sea.contains(_at(43.7300, 7.4150)), "Fontvieille's hillside, inland"


def _write_osm(path: Path, nodes: list[tuple[int, float, float]], ways: list[list[int]]) -> Path:
    lines = [
        "<?xml version='1.0' encoding='UTF-8'?>",
        "<osm version='0.6' generator='cartoqa tests'>",
        '  <bounds minlat="0.0" minlon="0.0" maxlat="0.01" maxlon="0.01"/>',
    ]
    for i, lat, lon in nodes:
        lines.append(f'  <node id="{i}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    for k, refs in enumerate(ways):
        lines.append(f'  <way id="{100 + k}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines += ['    <tag k="natural" v="coastline"/>', "  </way>"]
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_loose_end_near_the_edge_does_not_cut_the_box_in_two(tmp_path: Path) -> None:
    # a shore from near the bottom edge, first heading west at a shallow slope, then north to
    # the top edge: land on its left (west), sea on its right (east).  Prolonged backwards
    # along its first segment, its loose start would run east-north-east right across the
    # box and leave the south-east corner as land.
    src = _write_osm(
        tmp_path / "shore.osm",
        [(1, 0.0002, 0.0020), (2, 0.0001, 0.0010), (3, 0.0050, 0.0010), (4, 0.0100, 0.0010)],
        [[1, 2, 3, 4]],
    )
    ex = load_extract(src, cache=tmp_path / "cache")
    sea = _sea(ex)
    assert sea.contains(_at(0.0005, 0.0090)), "the south-east corner is sea"
    assert sea.contains(_at(0.0050, 0.0050)), "east of the shore is sea"
    assert not sea.contains(_at(0.0050, 0.0005)), "west of the shore is land"
    assert 0.85 < sea.area / 0.0001 < 0.92  # east of lon 0.001, less a sliver at the start


def test_a_shore_that_leaves_the_box_and_comes_back_keeps_the_land_between(
    tmp_path: Path,
) -> None:
    # a bay whose head lies north of the box: the shore comes in from the east edge, runs
    # west, leaves through the top edge (nodes outside the box are missing from the file, as
    # in a clipped extract) and comes back down to run east again.  The water is the band
    # between the two runs; the land north of the returning run and south of the first stays
    # land.
    nodes = [
        (1, 0.0050, 0.0100),
        (2, 0.0050, 0.0030),
        (3, 0.0095, 0.0020),
        (6, 0.0095, 0.0040),
        (7, 0.0070, 0.0060),
        (8, 0.0070, 0.0100),
    ]
    # nodes 4 and 5 (outside the box, north of it) are referenced but absent
    src = _write_osm(tmp_path / "bay.osm", nodes, [[1, 2, 3, 4, 5, 6, 7, 8]])
    ex = load_extract(src, cache=tmp_path / "cache")
    assert len(coastline_lines(ex)) == 2
    sea = _sea(ex)
    assert sea.contains(_at(0.0060, 0.0080)), "the bay between the shores"
    assert not sea.contains(_at(0.0085, 0.0080)), "the land north of the returning shore"
    assert not sea.contains(_at(0.0020, 0.0050)), "the land south of the first shore"
    assert len(sea_polygons_wkb(ex)) >= 1
