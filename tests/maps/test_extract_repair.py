"""Extracts that osm2pgsql refuses as they are: negative ids (a JOSM file), objects out of order,
duplicate objects.  Each is repaired into the cache, imports into the real database and gives a
road graph whose ids are the database's; the file's hash names the extract throughout."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from pathlib import Path
from typing import Any

import osmium
import psycopg
import pytest

from cartoqa.errors import DatabaseError, MapDataError
from maps import load_extract
from maps.database import ensure_database
from maps.roads import load_road_graph

from .osm_xml import osm_grid_xml, osm_relation_xml, write_osm
from .road_fixtures import ll

GRID_NAMES = {"Row 0", "Row 1", "Row 2", "Column 0", "Column 1", "Column 2", "Column 3"}


JOSM_BOUNDS = (*ll(-1, -1), *ll(8, 6))


def josm_file(path: Path) -> None:
    """A 4 x 3 grid as JOSM saves new objects: every id negative, no versions; a bus route
    relation over two of its streets; a stub street whose last node is not in the file; and
    the <bounds> of the area JOSM downloaded."""
    nodes, ways = osm_grid_xml(4, 3, id_sign=-1, version=None)
    lat, lon = ll(6.0, 5.0)
    nodes.append(f'  <node id="-50" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    stub = (
        '  <way id="-60"><nd ref="-12"/><nd ref="-50"/><nd ref="-999"/>'
        '<tag k="highway" v="service"/></way>'
    )
    write_osm(path, [*nodes, *ways, stub, osm_relation_xml(-1, [-1000, -1003])], bounds=JOSM_BOUNDS)


def unordered_file(path: Path) -> None:
    """The same grid with positive ids, written ways first, a relation among the ways (a way
    after a relation, as in the audit), nodes last."""
    nodes, ways = osm_grid_xml(4, 3)
    write_osm(path, [*ways[:3], osm_relation_xml(1, [1000, 1003]), *ways[3:], *nodes])


def duplicate_file(path: Path) -> None:
    """The grid with node 6 twice in a row (version 1, then version 2 moved 30 m north) and
    the way "Row 1" (id 1001) copied as it is after the last way."""
    nodes, ways = osm_grid_xml(4, 3)
    lat, lon = ll(2.0, 2.3)  # node 6 is junction (1, 1): grid point (2, 2)
    nodes.insert(6, f'  <node id="6" version="2" lat="{lat:.7f}" lon="{lon:.7f}"/>')
    write_osm(path, [*nodes, *ways, ways[1]])


CASES = {
    # writer, expected report counts, osm2pgsql's refusal of the file as it is, the warning
    "josm": (
        josm_file,
        {"negative_ids": 22, "out_of_order": 0, "duplicates": 0},
        "Negative OSM object ids are not allowed",
        "22 objects with negative ids",
    ),
    "unordered": (
        unordered_file,
        {"negative_ids": 0, "out_of_order": 2, "duplicates": 0},
        "Input data is not ordered: way after relation",
        "2 objects out of order",
    ),
    "duplicate": (
        duplicate_file,
        {"negative_ids": 0, "out_of_order": 0, "duplicates": 2},
        "node id 6 appears more than once",
        "2 duplicate objects",
    ),
}


def import_problems(path: Path) -> list[str]:
    """What osm2pgsql would refuse in a file: negative ids, disorder, repeats."""
    found = []
    last = (-1, 0)
    o: Any
    for o in osmium.FileProcessor(
        str(path), osmium.osm.NODE | osmium.osm.WAY | osmium.osm.RELATION
    ):
        key = (0 if o.is_node() else 1 if o.is_way() else 2, o.id)
        if o.id < 0:
            found.append(f"negative {key}")
        if key <= last:
            found.append(f"{key} after {last}")
        last = key
    return found


def graph_way_ids(graph) -> set[int]:
    ids: set[int] = set()
    for *_, d in graph.edges(data=True):
        osmid = d["osmid"]
        ids.update(osmid if isinstance(osmid, list) else [osmid])
    return ids


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_extract_is_repaired_imported_and_graphed(case, cluster, cache, tmp_path, caplog):
    write, counts, refusal, warning = CASES[case]
    src = tmp_path / f"{case}.osm"
    write(src)
    sha = hashlib.sha256(src.read_bytes()).hexdigest()
    caplog.set_level(logging.WARNING)

    e = load_extract(src, cache=cache)
    assert e.sha256 == sha  # the hash is the file's, not the repaired copy's
    assert e.source == src and e.path != src and e.path.is_relative_to(cache)
    assert {k: getattr(e.report, k) for k in counts} == counts and e.report.repaired
    assert warning in caplog.text and "cannot be imported as it is" in caplog.text
    assert str(e.path) in caplog.text
    assert import_problems(e.path) == []
    assert src.read_bytes() and hashlib.sha256(src.read_bytes()).hexdigest() == sha  # untouched

    # the file as it is: osm2pgsql refuses it (the audit's failure)
    raw = dataclasses.replace(e, path=src, sha256=hashlib.sha256(b"raw" + sha.encode()).hexdigest())
    with pytest.raises(DatabaseError, match=refusal):
        ensure_database(raw, cluster=cluster)

    # the repaired copy imports, and the road graph's ways are the database's ways
    db = ensure_database(e, cluster=cluster)
    with psycopg.connect(db.connection.conninfo()) as c:
        rows = c.execute(
            "SELECT osm_id, name FROM planet_osm_line WHERE highway = 'residential'"
        ).fetchall()
        stored = c.execute("SELECT sha256 FROM cartoqa_import").fetchone()
    assert stored == (sha,)
    assert {name for _, name in rows} == GRID_NAMES
    graph = load_road_graph(e, cache=cache).graph
    names = {d["road"] for *_, d in graph.edges(data=True)}
    assert names == GRID_NAMES
    assert graph_way_ids(graph) == {osm_id for osm_id, _ in rows}
    assert len(graph) == 12 and all(n > 0 for n in graph)

    if case == "josm":  # renumbered from 1, and the clipped stub was trimmed after it
        assert e.report.ways_with_missing_nodes == 1 and e.report.trimmed == 1
        assert set(graph) <= set(range(1, 14))
        # the header box is the file's (osmium's copies need not keep it)
        assert e.has_header_box and e.bounds == pytest.approx(JOSM_BOUNDS, abs=1e-6)
    if case == "duplicate":  # the highest version of node 6 is the one kept
        lat, lon = ll(2.0, 2.3)
        assert any(
            abs(d["y"] - lat) < 1e-6 and abs(d["x"] - lon) < 1e-6 for _, d in graph.nodes(data=True)
        )
        row_1 = [osm_id for osm_id, name in rows if name == "Row 1"]
        assert row_1 == [1001]  # one copy of the duplicated way

    caplog.clear()
    again = load_extract(src, cache=cache)  # from the cache: the same extract, the same warning
    assert again == e and warning in caplog.text


def test_extract_without_problems_is_not_copied(tmp_path, caplog):
    src = tmp_path / "fine.osm"
    nodes, ways = osm_grid_xml(3, 3)
    write_osm(src, [*nodes, *ways])
    caplog.set_level(logging.WARNING)
    e = load_extract(src, cache=tmp_path / "cache")
    assert e.path == src and not e.report.repaired and caplog.text == ""


def _pbf_bytes(tmp_path: Path) -> bytes:
    xml, pbf = tmp_path / "grid.osm", tmp_path / "grid.osm.pbf"
    nodes, ways = osm_grid_xml(20, 20)
    write_osm(xml, [*nodes, *ways])
    with osmium.SimpleWriter(str(pbf)) as w:
        for o in osmium.FileProcessor(str(xml)):
            w.add(o)
    return pbf.read_bytes()


UNREADABLE = {
    # file name, contents (a callable of tmp_path for the cut PBF), what osmium says
    "cut.osm.pbf": (lambda t: _pbf_bytes(t)[:300], "PBF error"),
    "cut.osm": (
        lambda t: b'<?xml version="1.0"?><osm version="0.6"><node id="1" lat="1" lon="1"',
        "XML parsing error at line 1",
    ),
    "overpass-error.osm": (
        lambda t: b"<html><body><p>rate_limited</p></body></html>",
        "Unknown top-level element: html",
    ),
    "bad-coordinate.osm": (
        lambda t: b'<?xml version="1.0"?><osm version="0.6"><node id="1" lat="abc" lon="1"/></osm>',
        "wrong format for coordinate: 'abc'",
    ),
    "not-bzip2.osm.bz2": (lambda t: b"plain text, not bzip2", "bzip2 error"),
}


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_unreadable_file_names_itself_and_the_fault(name, tmp_path):
    data, fault = UNREADABLE[name]
    src = tmp_path / name
    src.write_bytes(data(tmp_path))
    with pytest.raises(MapDataError) as info:
        load_extract(src, cache=tmp_path / "cache")
    msg = str(info.value)
    assert f"cannot read {src} as OSM data" in msg and fault in msg
    assert "osmium fileinfo" in msg  # says how to look further


def test_repair_without_the_osmium_command_says_how_to_install_it(tmp_path, monkeypatch):
    src = tmp_path / "josm.osm"
    josm_file(src)
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no osmium on it
    with pytest.raises(MapDataError, match=r"josm.osm needs repair .* apt-get install osmium-tool"):
        load_extract(src, cache=tmp_path / "cache")
