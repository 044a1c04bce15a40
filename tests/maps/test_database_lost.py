"""A renderer whose database stops answering says so at once (issue: 'maps db --stop' during a
build gave a Playwright TimeoutError 121 s later, the database never mentioned).

The module has its own private cluster (own folder, socket and port) that the tests stop and
start; the session's shared cluster is never touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from cartoqa.errors import DatabaseError
from cartoqa.settings import running_as_root
from maps import MapEngine, Marker, View
from maps.browser import screenshot_views
from maps.database import PostgresCluster
from maps.labels import RoadLabels
from maps.tiles import TileRenderer

from .conftest import extract_path

PORT = 5494
CENTRE = (51.5190, -0.0902)  # the middle of the Moorgate extract
#: "at once": the page timeout this replaces was 120 s; a lost database is seen in about 1 s
AT_ONCE_S = 60


@pytest.fixture(scope="module")
def own():
    """(cluster, engine) on a cluster of this module's own."""
    if shutil.which("osm2pgsql") is None:
        pytest.skip("osm2pgsql is not installed (bash scripts/setup.sh test)")
    base = Path("/var/tmp") if running_as_root() else Path(tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix=f"cartoqa-test-lost-{os.getpid()}-", dir=base))
    os.chmod(folder, 0o755)
    cluster = PostgresCluster(folder / "pg", port=PORT).start()
    try:
        carto = Path(__file__).resolve().parents[3] / "shared" / "carto-5.7.0"
        engine = MapEngine(
            extract_path("london-moorgate.osm.pbf"),
            carto_files=carto if carto.is_dir() else None,
            cache=folder / "cache",
            cluster=cluster,
        )
        yield cluster, engine, folder / "cache"
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def views(n: int, zoom: int = 19) -> list[View]:
    """n views from west to east across the extract, each with a marker at its centre."""
    lat, lon = CENTRE
    step = 0.0054 / max(1, n - 1)  # degrees of longitude; the extract is about 0.0086 wide
    centres = [(lat, lon - 0.0027 + i * step) for i in range(n)]
    return [
        View.make(c, zoom, markers=[Marker(*c, "red")], id=f"v{i}") for i, c in enumerate(centres)
    ]


def assert_names_the_database(err: pytest.ExceptionInfo, engine: MapEngine) -> None:
    msg = str(err.value)
    assert engine.database.connection.conninfo() in msg
    assert "stopped answering" in msg and "rerun" in msg


def test_database_stopped_between_batches_fails_the_next_batch_at_once(own, tmp_path):
    cluster, engine, _ = own
    cluster.start()
    first, *rest = views(3)
    assert engine.render(first).png  # the renderer works and holds a loaded Mapnik map
    cluster.stop()
    t0 = time.monotonic()
    with pytest.raises(DatabaseError) as err:
        engine.render_many(rest, progress=False)
    assert time.monotonic() - t0 < AT_ONCE_S
    assert_names_the_database(err, engine)
    # started again, the same engine renders again
    cluster.start()
    assert engine.render_many(rest, progress=False)[0].aborted == []


def test_database_stopped_while_a_batch_renders(own, tmp_path):
    cluster, engine, _ = own
    cluster.start()
    # no tile cache and no prefetch: every view's tiles are drawn from the database when asked
    tiles = TileRenderer(engine.style, engine.database, cache=tmp_path, use_cache=False)
    done: list[int] = []

    def stop_after_the_first(i: int) -> None:
        done.append(i)
        if len(done) == 1:
            cluster.stop()

    t0 = time.monotonic()
    with pytest.raises(DatabaseError) as err:
        screenshot_views(views(4), tiles, concurrency=1, on_done=stop_after_the_first)
    assert time.monotonic() - t0 < AT_ONCE_S + 30  # the first view rendered in full
    assert done == [0]  # the first view was made, then the batch stopped
    assert_names_the_database(err, engine)


def test_a_renderer_that_never_loaded_its_style_does_not_hang(own, tmp_path):
    """Loading the style fails without the database; the renderer must not then wait forever
    for a Mapnik map that was never made (the 121 s page timeout of the issue)."""
    cluster, engine, _ = own
    cluster.stop()
    tiles = TileRenderer(engine.style, engine.database, cache=tmp_path, workers=1)
    errors: list[BaseException] = []

    def ask(x: int) -> None:
        try:
            tiles.tile(19, 262000 + 8 * x, 174300)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,), daemon=True) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(AT_ONCE_S)
    assert not any(t.is_alive() for t in threads), "a tile request waits for a map never made"
    assert len(errors) == 3 and all(isinstance(e, DatabaseError) for e in errors), errors
    assert "loading the map style" in str(errors[0])


def test_label_checks_name_the_lost_database(own):
    cluster, engine, _ = own
    cluster.start()
    labels = RoadLabels(engine)
    cluster.stop()
    with pytest.raises(DatabaseError) as err:
        labels.names(views(1, zoom=18)[0])
    assert_names_the_database(err, engine)
    with pytest.raises(DatabaseError) as err:
        RoadLabels(engine)
    assert_names_the_database(err, engine)


def test_database_stopped_during_a_build_names_the_database(own, tmp_path):
    """'cartoqa maps db --stop' while a build samples: the build's rendering stops at once."""
    from cartoqa.tasks import build_dataset

    cluster, engine, cache = own
    cluster.start()
    t0 = time.monotonic()
    with pytest.raises(DatabaseError) as err:
        # one RLE map: the database goes once it is planned, before its map is rendered
        build_dataset(
            tmp_path / "ds",
            engine=engine,
            tasks=["rle"],
            per_task=2,
            seed=3,
            cache=cache,
            progress=False,
            on_plan=cluster.stop,
        )
    assert time.monotonic() - t0 < AT_ONCE_S + 30  # sampling included
    assert_names_the_database(err, engine)
    assert not (tmp_path / "ds" / "manifest.json").exists()
