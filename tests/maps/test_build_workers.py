"""``cartoqa build --workers N`` (issue 31, item 2): the same bytes whatever N; a worker
process that dies fails the build and leaves no dataset; bad values are refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import CartoqaError

from .build_bytes import REFERENCE, build, first_difference, reference
from .conftest import extract_path


@pytest.mark.parametrize("workers", [2, 4])
def test_workers_make_the_single_process_bytes(
    workers, tmp_path, tmp_path_factory, engine_for, cache, carto_files
):
    single = reference(tmp_path_factory, engine_for, cache, carto_files)
    folder = tmp_path / f"w{workers}"
    report = build(folder, engine_for(REFERENCE["extract"]), cache, carto_files, workers=workers)
    assert report.workers == workers
    assert first_difference(single, folder) is None
    # the manifest records no timing and no worker count: equal but for when it was made
    want = (single / "manifest.json").read_text().splitlines()
    got = (folder / "manifest.json").read_text().splitlines()
    assert [x for x in got if "created_at" not in x] == [x for x in want if "created_at" not in x]


def test_a_difference_is_named(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, png in ((a, b"one"), (b, b"two")):
        (folder / "images").mkdir(parents=True)
        (folder / "samples.jsonl").write_text('{"id": "x"}\n')
        (folder / "images" / "x.png").write_bytes(png)
    assert first_difference(a, a) is None
    assert first_difference(a, b).startswith("image x.png differs")


@pytest.mark.parametrize("workers", [0, -3])
def test_bad_worker_counts_are_refused(workers, tmp_path):
    from cartoqa.tasks import build_dataset

    with pytest.raises(CartoqaError, match=f"--workers {workers}"):
        build_dataset(tmp_path / "out", tasks=["srn"], per_task=2, workers=workers)
    result = CliRunner().invoke(app, ["build", str(tmp_path / "cli"), "--workers", str(workers)])
    assert result.exit_code == 2
    assert f"--workers {workers}: give 1 or more" in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "cli").exists()


def _cli_env(cache: Path, carto_files: Path) -> dict[str, str]:
    return {**os.environ, "CARTOQA_CACHE": str(cache), "CARTOQA_CARTO_FILES": str(carto_files)}


def _dsn(cluster) -> str:
    return f"host={cluster.socket_dir} port={cluster.port} user={cluster.user}"


def _children(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        todo += kids
    return out


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _workers_of(pid: int) -> list[int]:
    """The pool's worker processes under ``pid`` (spawned: 'multiprocessing.spawn')."""
    out = []
    for child in _children(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.append(child)
        except OSError:
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


_ON_PROC = pytest.mark.skipif(
    not Path("/proc/self/stat").is_file(), reason="finds workers through /proc"
)


def _command(out: Path, cluster) -> list[str]:
    return [
        sys.executable, "-m", "cartoqa", "build", str(out),
        "--extract", str(extract_path(REFERENCE["extract"])), "--tasks", "srn,rle,mml",
        "--per-task", "2", "--seed", "3", "--dsn", _dsn(cluster), "--workers", "2",
        "--no-progress",
    ]  # fmt: skip


def _stop_at_work(cmd: list[str], env: dict[str, str], stop) -> tuple[int, str, list[int], int]:
    """Run ``cmd``; once a worker is at work (past its imports: a few CPU seconds), call
    ``stop(proc, worker)``; return (exit status, stderr, the workers seen, the worker)."""
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        # Ctrl-C as a terminal gives it: an ignored SIGINT stays ignored across exec, and a
        # test process may hold it so (the full suite did: the build then never saw it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    victim = None
    deadline = time.monotonic() + 240
    while victim is None and proc.poll() is None and time.monotonic() < deadline:
        for w in _workers_of(proc.pid):
            try:
                if _cpu_seconds(w) > 3:
                    victim = w
                    break
            except OSError:
                continue
        time.sleep(0.2)
    if victim is None:
        proc.kill()
        proc.communicate()
        pytest.fail("no worker was seen at work before the build ended")
    seen = _workers_of(proc.pid)
    stop(proc, victim)
    _, err = proc.communicate(timeout=240)
    return proc.returncode, err.decode(), seen, victim


def _no_dataset(tmp_path: Path, out: Path, seen: list[int]) -> None:
    assert not (out / "manifest.json").exists()
    assert not (out / "samples.jsonl").exists()
    assert not list(tmp_path.glob(".out.staging-*"))  # no half dataset beside it either
    alive = [w for w in seen if _alive(w)]
    assert not alive, f"workers left running: {alive}"


@_ON_PROC
def test_a_killed_worker_fails_the_build_and_writes_nothing(
    tmp_path, cluster, cache, carto_files, engine_for
):
    engine_for(REFERENCE["extract"])  # imported and its road graph cached: the build is the test
    out = tmp_path / "out"
    # a cache of its own, cold: the build's work outlasts the moment the worker is stopped
    # (on the session's warm cache a worker may be done before the kill lands)
    cmd, env = _command(out, cluster), _cli_env(tmp_path / "cache", carto_files)
    status, err, seen, victim = _stop_at_work(
        cmd, env, lambda _proc, worker: os.kill(worker, signal.SIGKILL)
    )
    assert status == 1, err
    assert "a build worker process died while" in err
    assert f"pid {victim} killed by signal 9" in err
    assert "no dataset was written" in err
    _no_dataset(tmp_path, out, seen)
    # the same command without a kill then builds the dataset
    again = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (out / "manifest.json").is_file()


@_ON_PROC
def test_ctrl_c_stops_the_workers_and_writes_nothing(
    tmp_path, cluster, cache, carto_files, engine_for
):
    engine_for(REFERENCE["extract"])
    out = tmp_path / "out"
    # Ctrl-C in a terminal signals the whole process group: the command and its workers
    status, err, seen, _ = _stop_at_work(
        _command(out, cluster),
        _cli_env(tmp_path / "cache", carto_files),  # cold: see the test above
        lambda proc, _worker: os.killpg(proc.pid, signal.SIGINT),
    )
    assert status == 130, err
    assert "interrupted; no dataset written" in err
    _no_dataset(tmp_path, out, seen)


def test_the_local_path_does_not_import_ray():
    code = (
        "import sys, cartoqa.cli.build, cartoqa.tasks.build, cartoqa.tasks.build_shards; "
        "sys.exit('ray' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_ray_without_the_extra_is_named(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: import ray fails
    result = CliRunner().invoke(app, ["build", str(tmp_path / "out"), "--ray", "auto"])
    assert result.exit_code == 2
    assert "pip install 'cartoqa[ray]'" in result.output
    assert not (tmp_path / "out").exists()


def test_extracts_builds_one_dataset_per_extract(tmp_path, cluster, cache, carto_files):
    monaco = extract_path("monaco.osm.pbf")
    listing = tmp_path / "cities.txt"
    listing.write_text(f"# cities\n{monaco}\n\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["build", str(out), "--extracts", str(listing), "--tasks", "rle", "--per-task", "2",
         "--dsn", _dsn(cluster), "--carto-files", str(carto_files), "--no-progress"],
        env={"CARTOQA_CACHE": str(cache)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (out / "monaco" / "manifest.json").is_file()
    assert "monaco" in (out / "monaco" / "samples.jsonl").read_text()


def test_bad_extract_lists_are_refused(tmp_path):
    monaco = extract_path("monaco.osm.pbf")
    runner = CliRunner()
    cases = {
        "missing.txt": (None, "cannot read it"),
        "nofile.txt": ("nowhere.osm.pbf\n", "line 1: nowhere.osm.pbf is not a file"),
        "twice.txt": (f"{monaco}\n{monaco}\n", "line 2: a second extract named 'monaco'"),
        "empty.txt": ("# nothing\n", "lists no extract"),
    }
    for name, (text, message) in cases.items():
        listing = tmp_path / name
        if text is not None:
            listing.write_text(text)
        result = runner.invoke(app, ["build", str(tmp_path / "out"), "--extracts", str(listing)])
        assert result.exit_code == 2, (name, result.output)
        assert message in result.output, (name, result.output)
    listing = tmp_path / "one.txt"
    listing.write_text(f"{monaco}\n")
    result = runner.invoke(
        app, ["build", str(tmp_path / "out"), "--extracts", str(listing), "--extract", str(monaco)]
    )
    assert result.exit_code == 2 and "--extract and --extracts" in result.output
    assert not (tmp_path / "out").exists()
