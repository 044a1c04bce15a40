"""Corrupt build caches (issue 27, items 1, 7 and 10): a cached tile, placement boxes, road
graph, extract metadata, cleaned extract or coverage grid that is cut short, empty or holds the
wrong bytes is dropped with a warning and made again, and what comes out decodes; temporary
files a writer left are cleared when the cache is next opened, and osm2pgsql ends with the
process that started it.  Real Mapnik, PostGIS, osmium and osm2pgsql on a tiny street grid."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cartoqa.conftest import tmpfs  # noqa: F401 - the real small-disk fixture
from tests.corrupt_bytes import CORRUPT, png_size

from .osm_xml import osm_grid_xml, write_osm
from .road_fixtures import ll

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory) -> Path:
    """A 4 x 4 street grid (600 m), its own content so its database and caches are its own."""
    nodes, ways = osm_grid_xml(4, 4, prefix="Cache ")
    path = tmp_path_factory.mktemp("cache-grid") / "cache-grid.osm"
    write_osm(path, [*nodes, *ways])
    return path


@pytest.fixture(scope="module")
def engine(grid_file, cluster, cache, carto_files):
    from maps import MapEngine

    return MapEngine(grid_file, carto_files=carto_files, cache=cache, cluster=cluster)


def _renderer(engine, cache):
    """A new renderer on the engine's cache: nothing in memory, everything read from disk."""
    from maps.tiles import TileRenderer

    return TileRenderer(engine.style, engine.database, cache=cache)


def _centre_tile(z: int = 17) -> tuple[int, int, int]:
    from maps.projection import world_pixel

    px, py = world_pixel(*ll(3, 3), z)
    return z, int(px // 256), int(py // 256)


@pytest.mark.parametrize("kind", [*CORRUPT, "another tile"])
def test_a_bad_cached_tile_is_made_again_with_a_warning(engine, cache, kind, caplog):
    z, x, y = _centre_tile()
    first = _renderer(engine, cache)
    good = first.tile(z, x, y)
    p = first.path(z, x, y)
    if kind == "another tile":  # a whole 256 px PNG, of empty land far away
        bad = first.tile(z, x + 40, y + 40)
        assert bad != good
    else:
        bad = CORRUPT[kind](p.read_bytes())
    p.write_bytes(bad)
    caplog.set_level(logging.WARNING)
    again = _renderer(engine, cache).tile(z, x, y)
    assert png_size(again) == (256, 256)
    assert again == good
    assert png_size(p.read_bytes()) == (256, 256) and p.read_bytes() == good
    assert str(p) in caplog.text and "made again" in caplog.text


def test_a_map_drawn_over_bad_cached_tiles_is_the_map_drawn_over_good_ones(engine, cache):
    """Every cached tile of a view emptied (a full disk, a killed copy): the screenshot is the
    same as before, not grey holes."""
    from maps import View
    from maps.projection import pixel_box

    view = View(center=ll(3, 3), zoom=17, width=400, height=300, id="cache-faults")
    before = engine.render(view)
    box = pixel_box(view.center, view.zoom, view.width, view.height)
    tiles = [engine.tiles.path(*t) for t in engine.tiles.tiles_for(view.zoom, *box)]
    assert len(tiles) >= 4 and all(p.is_file() for p in tiles)
    for p in tiles:
        p.write_bytes(b"")
    engine.tiles._images.clear()  # nothing of the first render in memory
    after = engine.render(view)
    assert (after.image() == before.image()).all()
    assert all(png_size(p.read_bytes()) == (256, 256) for p in tiles)


@pytest.mark.parametrize("kind", CORRUPT)
def test_bad_placement_boxes_are_drawn_again_with_a_warning(engine, cache, kind, caplog):
    z, x, y = _centre_tile(16)
    first = _renderer(engine, cache)
    _, mx, my = first.metatile_of(z, x, y)
    good = first.placements(z, mx, my)
    p = first.boxes_path(z, mx, my)
    p.write_bytes(CORRUPT[kind](p.read_bytes()))
    caplog.set_level(logging.WARNING)
    again = _renderer(engine, cache).placements(z, mx, my)
    assert again == good
    assert str(p) in caplog.text
    assert [tuple(b) for b in json.loads(p.read_text())] == good


def _graph_file(cache: Path, sha: str) -> Path:
    (found,) = (cache / "roads" / sha[:16]).glob("graph-v*.pickle")
    return found


@pytest.mark.parametrize("kind", CORRUPT)
def test_a_bad_road_graph_pickle_is_built_again_with_a_warning(grid_file, cache, kind, caplog):
    """Zero-length printed only "Aborted." (click turns the EOFError of pickle into Abort)."""
    from maps.extracts import load_extract
    from maps.roads import load_road_graph

    ex = load_extract(grid_file, cache=cache)
    good = load_road_graph(ex, cache=cache).graph
    p = _graph_file(cache, ex.sha256)
    p.write_bytes(CORRUPT[kind](p.read_bytes()))
    caplog.set_level(logging.WARNING)
    again = load_road_graph(ex, cache=cache).graph
    assert sorted(again.nodes) == sorted(good.nodes)
    assert again.number_of_edges() == good.number_of_edges()
    assert str(p) in caplog.text
    assert load_road_graph(ex, cache=cache).graph.number_of_edges() == good.number_of_edges()


@pytest.fixture
def clipped_file(tmp_path) -> Path:
    """A grid with a street that names a node the file lacks: cleaning writes a copy."""
    nodes, ways = osm_grid_xml(3, 3, prefix=f"Clip {tmp_path.name} ")
    ways.append(
        '  <way id="2000" version="1"><nd ref="1"/><nd ref="2"/><nd ref="999"/>'
        '<tag k="highway" v="residential"/></way>'
    )
    path = tmp_path / "clipped.osm"
    write_osm(path, [*nodes, *ways])
    return path


def _objects(path: Path) -> int:
    import osmium

    return sum(1 for _ in osmium.FileProcessor(str(path)))


@pytest.mark.parametrize("kind", CORRUPT)
def test_a_bad_cleaned_extract_is_cleaned_again_with_a_warning(
    clipped_file, tmp_path, kind, caplog
):
    from maps.extracts import load_extract

    cache = tmp_path / "cache"
    first = load_extract(clipped_file, cache=cache)
    assert first.path != clipped_file and first.report.trimmed == 1
    count = _objects(first.path)
    first.path.write_bytes(CORRUPT[kind](first.path.read_bytes()))
    caplog.set_level(logging.WARNING)
    again = load_extract(clipped_file, cache=cache)
    assert _objects(again.path) == count
    assert again.report == first.report
    assert str(first.path) in caplog.text


@pytest.mark.parametrize("kind", CORRUPT)
def test_bad_extract_metadata_is_made_again_with_a_warning(clipped_file, tmp_path, kind, caplog):
    from maps.extracts import load_extract

    cache = tmp_path / "cache"
    first = load_extract(clipped_file, cache=cache)
    meta = cache / "extracts" / first.sha256[:16] / "extract.json"
    meta.write_bytes(CORRUPT[kind](meta.read_bytes()))
    caplog.set_level(logging.WARNING)
    again = load_extract(clipped_file, cache=cache)
    assert (again.bounds, again.report, again.path) == (first.bounds, first.report, first.path)
    assert str(meta) in caplog.text
    assert json.loads(meta.read_text())["report"]["trimmed"] == 1


@pytest.mark.parametrize("kind", CORRUPT)
def test_a_bad_coverage_grid_is_made_again_with_a_warning(clipped_file, tmp_path, kind, caplog):
    from maps.extracts import load_extract

    cache = tmp_path / "cache"
    first = load_extract(clipped_file, cache=cache)
    cells = first.coverage().covered_cells
    p = first.coverage_file
    p.write_bytes(CORRUPT[kind](p.read_bytes()))
    caplog.set_level(logging.WARNING)
    again = load_extract(clipped_file, cache=cache)
    assert again.coverage().covered_cells == cells
    assert str(p) in caplog.text


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporary_files_of_dead_writers_are_cleared_when_the_cache_is_opened(
    grid_file, engine, cache, monkeypatch
):
    """Left by a writer killed part-way (or on a full disk): cleared at the next start; a live
    writer's temporary file (this process, just written) is kept."""
    from maps.extracts import load_extract
    from maps.roads import load_road_graph

    ex = load_extract(grid_file, cache=cache)
    load_road_graph(ex, cache=cache)
    dead, old = _dead_pid(), time.time() - 600
    folders = {
        "tiles": engine.tiles.folder / "17" / "1",
        "roads": cache / "roads" / ex.sha256[:16],
        "extracts": cache / "extracts" / ex.sha256[:16],
    }
    stale, live = [], []
    for f in folders.values():
        f.mkdir(parents=True, exist_ok=True)
        s = f / f".5.png.{dead}.0a1b2c3d.tmp"
        s.write_bytes(b"half a tile")
        os.utime(s, (old, old))
        stale.append(s)
        k = f / f".6.png.{os.getpid()}.0a1b2c3d.tmp"
        k.write_bytes(b"being written")
        live.append(k)
    import maps.tiles

    monkeypatch.setattr(maps.tiles, "_CLEANED", set())  # as in a new process
    _renderer(engine, cache)
    load_extract(grid_file, cache=cache)
    load_road_graph(ex, cache=cache)
    assert [p for p in stale if p.exists()] == []
    assert all(p.exists() for p in live)
    for p in live:
        p.unlink()


def test_a_tile_cache_on_a_full_disk_fails_clearly_and_leaves_no_temporary_files(
    engine,
    tmpfs,  # noqa: F811
):
    from cartoqa.errors import RenderStackError

    disk = tmpfs("1m")
    r = _renderer(engine, disk / "cache")
    z, x, y = _centre_tile()
    r.folder.mkdir(parents=True)
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
    with pytest.raises(RenderStackError, match="no space|No space") as err:
        r.tile(z, x, y)
    assert str(disk / "cache") in str(err.value)
    assert [p for p in disk.rglob("*") if ".tmp" in p.name] == []


CHILD = """
import json, sys
from pathlib import Path
from maps.database import ensure_database
from maps.extracts import CleaningReport, Extract
fifo = Path(sys.argv[1])
box = (43.7, 7.4, 43.71, 7.41)
ex = Extract("fifo", fifo, sys.argv[2], fifo, box, CleaningReport(0, 0, 0, 0, 0))
ensure_database(ex, dsn=sys.argv[3])
"""


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _wchan(pid: int) -> str:
    """Where in the kernel ``pid`` sleeps ("wait_for_partner": opening a pipe)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_osm2pgsql_ends_with_the_build_that_started_it(cluster, tmp_path, sig):
    """The import reads a pipe nobody writes, so osm2pgsql would wait for ever: when the
    process that started it is killed it must go too."""
    import secrets

    import psycopg

    fifo = tmp_path / "never.osm"
    os.mkfifo(fifo)
    sha = secrets.token_hex(32)
    admin = cluster.connection("postgres")
    parent = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(fifo), sha, admin.conninfo()],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    importer = None
    try:
        deadline = time.monotonic() + 120
        while importer is None and time.monotonic() < deadline and parent.poll() is None:
            for child in _children(parent.pid):
                if "osm2pgsql" in Path(f"/proc/{child}/cmdline").read_bytes().decode(
                    errors="replace"
                ):
                    importer = child
            time.sleep(0.05)
        assert importer is not None, parent.communicate()[1][-2000:]
        # wait until it has started up (said what it does) and waits for the pipe's writer
        while _wchan(importer) != "wait_for_partner" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _wchan(importer) == "wait_for_partner"
        parent.send_signal(sig)
        parent.wait()
        deadline = time.monotonic() + 30  # a generous poll; the import alone would never end
        while _alive(importer) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(importer), "osm2pgsql runs on after the build was killed"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if importer is not None and _alive(importer):
            os.kill(importer, signal.SIGKILL)
        with psycopg.connect(admin.conninfo(), autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "cartoqa_{sha[:16]}" WITH (FORCE)')


@pytest.mark.parametrize("kind", CORRUPT)
def test_a_bad_style_working_copy_is_made_again_with_a_warning(carto_files, tmp_path, kind, caplog):
    from maps.style import prepare_style

    first = prepare_style(carto_files=carto_files, cache=tmp_path)
    good = first.xml_path.read_bytes()
    first.xml_path.write_bytes(CORRUPT[kind](good))
    caplog.set_level(logging.WARNING)
    again = prepare_style(carto_files=carto_files, cache=tmp_path)
    assert again.xml_path.read_bytes() == good
    assert (again.placeholders, again.removed_faces) == (first.placeholders, first.removed_faces)
    assert str(first.folder) in caplog.text
