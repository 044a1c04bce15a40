"""Fixtures for the map tests: the shared extracts, a private PostgreSQL cluster and a cache.

The cluster and cache are the session's own (a fresh cluster, so imports are
really made); the cluster is stopped at the end.  Tests that need the
shared extracts skip when ../shared is absent (a user's checkout).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from cartoqa.settings import running_as_root

SHARED = Path(__file__).resolve().parents[3] / "shared"
OSM = SHARED / "data" / "osm"
CARTO_FILES = SHARED / "carto-5.7.0"


def extract_path(name: str) -> Path:
    p = OSM / name
    if not p.is_file():
        pytest.skip(f"the shared extract {p} is not here (it ships beside the project in CI)")
    return p


def network(host: str) -> bool:
    """True when ``host`` answers on port 443 (these machines have no network)."""
    import socket

    try:
        socket.create_connection((host, 443), timeout=3).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def carto_files() -> Path:
    if not CARTO_FILES.is_dir():
        pytest.skip(f"{CARTO_FILES} is not here; set CARTOQA_CARTO_FILES to run these tests")
    return CARTO_FILES


@pytest.fixture(scope="session")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cartoqa-cache")


@pytest.fixture(scope="session")
def cluster():
    from maps.database import PostgresCluster

    if shutil.which("osm2pgsql") is None:
        pytest.skip("osm2pgsql is not installed (bash scripts/setup.sh test)")
    # as root the server runs as 'postgres', which cannot enter pytest's private /tmp folders
    base = Path("/var/tmp") if running_as_root() else Path(tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix=f"cartoqa-test-pg-{os.getpid()}-", dir=base))
    os.chmod(folder, 0o755)
    c = PostgresCluster(folder / "pg").start()
    yield c
    c.stop()
    shutil.rmtree(folder, ignore_errors=True)


_ENGINES: dict[str, object] = {}


@pytest.fixture(scope="session")
def engine_for(cluster, cache, carto_files):
    """engine_for("monaco.osm.pbf") -> a MapEngine, made once per session."""
    from maps import MapEngine

    def make(name: str):
        if name not in _ENGINES:
            _ENGINES[name] = MapEngine(
                extract_path(name), carto_files=carto_files, cache=cache, cluster=cluster
            )
        return _ENGINES[name]

    return make
