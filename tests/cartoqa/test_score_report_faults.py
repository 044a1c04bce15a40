"""What ``cartoqa score`` and ``cartoqa report`` write, under faults (issue 26): strict JSON
everywhere (finding 12), and a full disk that leaves earlier outputs whole (finding 23, on a
real tmpfs filled up)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cartoqa.model_data import kinds_dataset

CARTOQA = Path(sys.executable).with_name("cartoqa")


def cartoqa(*args, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(CARTOQA), *(str(a) for a in args)], capture_output=True, text=True, timeout=600
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON (strict readers such as jq and JavaScript refuse it)")


def strict(text: str):
    """``text`` read as strict JSON: NaN and Infinity refused."""
    return json.loads(text, parse_constant=_not_json)


def nulls(obj) -> int:
    if obj is None:
        return 1
    if isinstance(obj, dict):
        return sum(nulls(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(nulls(v) for v in obj)
    return 0


# ------------------------------------------------------------------ finding 12: strict JSON


def test_every_json_score_and_report_write_is_strict(tmp_path):
    """One sample a task: the count tasks' r^2 has one truth, so it is not a number, which
    must be written as null, not NaN, in every JSON file and in ``score --json``."""
    ds = kinds_dataset(tmp_path / "ds")
    runs = tmp_path / "runs"
    for model in ("oracle", "random:1"):
        cartoqa("run", ds.path, "-m", model, "--runs-dir", runs, "--no-progress")
    out = cartoqa("score", ds.path, "--runs-dir", runs, "--json", "--out", tmp_path / "sc")
    cartoqa("report", ds.path, "--runs-dir", runs, "-o", tmp_path / "rep", "--bootstrap", "50")
    printed = strict(out.stdout)
    written = {
        "score --json": printed,
        "scores.json": strict((tmp_path / "sc" / "scores.json").read_text(encoding="utf-8")),
        "tables.json": strict((tmp_path / "rep" / "tables.json").read_text(encoding="utf-8")),
    }
    for path in sorted(runs.glob("*.json")):  # the runs' meta.json
        written[path.name] = strict(path.read_text(encoding="utf-8"))
    for path in sorted(runs.glob("*.scores-*.jsonl")):  # the stored per-sample scores
        for line in path.read_text(encoding="utf-8").splitlines():
            written[path.name] = strict(line)  # every line
    # the case is there: a metric of one sample's group that is not a number, as null
    (run,) = [r for r in printed.values() if r["model"] == "oracle"]
    assert run["scores"]["stmf_count"]["all"]["r2"] is None, run["scores"]["stmf_count"]
    assert all(nulls(written[name]) for name in ("score --json", "scores.json", "tables.json"))


# ------------------------------------------------------------------ finding 23: a full disk


@pytest.fixture
def small_disk(tmpfs):
    """A real 4 MB file system (tmpfs) to fill up; root only."""
    return tmpfs("4m")


def fill(disk: Path) -> None:
    """Take every free byte of ``disk``."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 1 << 12, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def two_runs(tmp_path):
    """A dataset and its runs folder (not on the small disk) with an oracle run; ``more()``
    adds a random run, so that what is written next is larger than before."""
    ds = kinds_dataset(tmp_path / "ds")
    runs = tmp_path / "runs"
    cartoqa("run", ds.path, "-m", "oracle", "--runs-dir", runs, "--no-progress")

    def more():
        cartoqa("run", ds.path, "-m", "random:7", "--runs-dir", runs, "--no-progress")

    return ds, runs, more


def test_score_out_on_a_full_disk_keeps_the_old_scores_whole(small_disk, two_runs):
    ds, runs, more = two_runs
    out = small_disk / "sc"
    cartoqa("score", ds.path, "--runs-dir", runs, "--out", out)
    before = snapshot(out)
    json.loads(before["scores.json"])  # whole
    more()
    fill(small_disk)
    done = cartoqa("score", ds.path, "--runs-dir", runs, "--out", out, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    err = " ".join(done.stderr.split())
    assert f"cannot write scores.json and scores.csv in {out}" in err
    assert "No space left on device" in err and "as they were" in err
    assert snapshot(out) == before  # whole, and no temporary file left
    (small_disk / "filler").unlink()
    cartoqa("score", ds.path, "--runs-dir", runs, "--out", out)  # with room again: written
    assert len(strict((out / "scores.json").read_text())) == 2


def test_report_on_a_full_disk_keeps_the_earlier_report_whole(small_disk, two_runs):
    ds, runs, more = two_runs
    out = small_disk / "rep"
    args = ("report", ds.path, "--runs-dir", runs, "-o", out, "--bootstrap", "50")
    cartoqa(*args)
    before = snapshot(out)
    assert any(name.startswith("plots/") and name.endswith(".png") for name in before)
    more()
    fill(small_disk)
    done = cartoqa(*args, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    err = " ".join(done.stderr.split())
    assert f"cannot write the report in {out}" in err
    assert "No space left on device" in err and "as they were" in err
    assert snapshot(out) == before  # every file whole (the PNGs too), no temporary left
    (small_disk / "filler").unlink()
    cartoqa(*args)
    assert snapshot(out) != before
    assert len(strict((out / "tables.json").read_text())["runs"]) == 2
