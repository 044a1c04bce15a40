"""The private PostgreSQL cluster: two processes starting it at once, and a server that will not
start (the error names server.log and quotes it).

Each test makes its own cluster in a temporary folder, on its own socket folder and port, so
the session's shared cluster (conftest.py) is never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cartoqa.errors import DatabaseError
from cartoqa.settings import running_as_root
from maps.database import PostgresCluster

PORT = 5491  # not the shared cluster's; each cluster has its own socket folder anyway

# a process that waits for the go file, then starts the cluster and says whether it runs
STARTER = """
import sys, time
from pathlib import Path
from maps.database import PostgresCluster
folder, go = Path(sys.argv[1]), Path(sys.argv[2])
(go.parent / f"ready-{sys.argv[3]}").touch()
while not go.exists():
    time.sleep(0.005)
c = PostgresCluster(folder, port=int(sys.argv[4])).start()
print("running" if c.is_running() else "not running")
"""


@pytest.fixture
def pg_folder():
    if shutil.which("pg_ctl") is None and not list(Path("/usr/lib/postgresql").glob("*/bin")):
        pytest.skip("PostgreSQL is not installed (bash scripts/setup.sh test)")
    # as root the server runs as 'postgres', which cannot enter pytest's private /tmp folders
    base = Path("/var/tmp") if running_as_root() else Path(tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix=f"cartoqa-test-cluster-{os.getpid()}-", dir=base))
    os.chmod(folder, 0o755)
    yield folder / "pg"
    PostgresCluster(folder / "pg", port=PORT).stop()
    shutil.rmtree(folder, ignore_errors=True)


def _race(folder: Path, sync: Path) -> list[subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STARTER, str(folder), str(sync / "go"), str(i), str(PORT)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    deadline = time.monotonic() + 120
    while not all((sync / f"ready-{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline, "the starter processes did not come up"
        time.sleep(0.01)
    (sync / "go").touch()  # both start the cluster at the same moment
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=180)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


@pytest.mark.parametrize("state", ["stopped", "absent"])
def test_two_processes_starting_the_cluster_at_once_both_succeed(pg_folder, tmp_path, state):
    if state == "stopped":  # made and stopped, as after 'cartoqa maps db --stop'
        c = PostgresCluster(pg_folder, port=PORT).start()
        c.stop()
        assert not c.is_running()
    results = _race(pg_folder, tmp_path)
    for r in results:
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.strip() == "running"
    assert PostgresCluster(pg_folder, port=PORT).is_running()
    assert (pg_folder / "cluster.lock").is_file()


def test_a_server_that_will_not_start_is_explained_from_its_log(pg_folder):
    c = PostgresCluster(pg_folder, port=PORT).start()
    c.stop()
    with open(c.data / "postgresql.conf", "a") as f:
        f.write("\ncartoqa_no_such_setting = 1\n")
    with pytest.raises(DatabaseError) as err:
        c.start()
    msg = str(err.value)
    assert str(c.log_file) in msg  # names the log file
    assert "cartoqa_no_such_setting" in msg  # and quotes what the server wrote there
    assert "did not start" in msg and "cartoqa maps db --drop" in msg
    assert not c.is_running()
