"""``cartoqa run`` and ``run_model``: selection, resume, summary, exit codes, SIGKILL mid-run."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import CartoqaError
from cartoqa.models import GenerationSettings, load_model
from cartoqa.runner import open_run_store, run_model, select_samples
from cartoqa.testing.fake_openai import FakeOpenAIServer, Fault
from tests.cartoqa.model_data import kinds_dataset, text_dataset

CARTOQA = Path(sys.executable).with_name("cartoqa")


def store_lines(runs: Path) -> list[dict]:
    [path] = runs.glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_command(ds, server, runs: Path, *, concurrency: int) -> list[str]:
    """The installed ``cartoqa run`` against the fake server, as a subprocess argument list."""
    return [
        str(CARTOQA),
        "run",
        str(ds.path),
        "--model",
        f"openai:fake@{server.url}",
        "--concurrency",
        str(concurrency),
        "--runs-dir",
        str(runs),
        "--no-progress",
    ]


def wait_for_lines(runs: Path, n: int, timeout_s: float = 60) -> None:
    """Wait until the run store under ``runs`` holds at least ``n`` lines."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        files = list(runs.glob("*.jsonl"))
        if files and files[0].read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.005)
    raise AssertionError(f"the run wrote fewer than {n} lines in {timeout_s} s")


def test_tasks_and_limit_select_samples(tmp_path):
    ds = kinds_dataset(tmp_path / "ds", copies=3)
    assert {s.task for s in select_samples(ds, tasks=["srn", "mml"])} == {"srn", "mml"}
    assert len(select_samples(ds, tasks=["srn", "mml"])) == 6
    assert [s.id for s in select_samples(ds, limit=2)] == [s.id for s in list(ds)[:2]]
    with pytest.raises(
        CartoqaError, match=r"--tasks nope: no such task .* \(it has: boundary_analysis, "
    ):
        select_samples(ds, tasks=["nope"])
    with pytest.raises(CartoqaError, match="--limit 0"):
        select_samples(ds, limit=0)


def test_a_run_resumes_where_it_stopped(tmp_path):
    ds = text_dataset(tmp_path / "ds", 40)
    model = load_model("oracle")
    model.batch_size = 5  # a stop takes effect between batches
    stop = threading.Event()
    seen = []

    def on_record(rec):
        seen.append(rec.sample_id)
        if len(seen) == 15:
            stop.set()

    with open_run_store(tmp_path / "runs", ds, "oracle", GenerationSettings()) as store:
        first = run_model(ds, model, store, on_record=on_record, stop=stop)
    assert first.stopped and "resume" in first.stopped
    assert first.answered >= 15 and first.remaining == 40 - first.answered
    with open_run_store(tmp_path / "runs", ds, "oracle", GenerationSettings()) as store:
        second = run_model(ds, model, store)
        assert len(store) == 40
    assert second.skipped == first.answered and second.answered == 40 - first.answered


def test_cli_oracle_run_scores_every_kind_exactly(tmp_path):
    ds = kinds_dataset(tmp_path / "ds", copies=2)
    args = ["run", str(ds.path), "-m", "oracle", "--runs-dir", str(tmp_path / "r"), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"correct: {len(ds)}/{len(ds)}" in result.output
    result = CliRunner().invoke(app, [*args[:3], "constant:no idea", *args[4:]])
    assert f"correct: 0/{len(ds)}" in result.output


def test_different_settings_make_a_separate_store(tmp_path):
    ds = text_dataset(tmp_path / "ds", 3)
    for t in (0.0, 0.7):
        with open_run_store(
            tmp_path / "runs", ds, "oracle", GenerationSettings(temperature=t)
        ) as s:
            run_model(ds, load_model("oracle"), s)
    assert len(list((tmp_path / "runs").glob("*.jsonl"))) == 2


def test_cli_runs_prints_a_summary_and_resumes(tmp_path, fake_server, monkeypatch):
    ds = text_dataset(tmp_path / "ds", 10)
    fake_server.faults = [Fault("500", match="q-0003", times=-1)]
    monkeypatch.chdir(tmp_path)
    args = [
        "run",
        str(ds.path),
        "--model",
        f"openai:fake@{fake_server.url}",
        "--retries",
        "1",
        "--retry-base",
        "0.01",
        "--no-progress",
        "--price",
        "2.5,10",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "answered now" in out and "failed now" in out
    assert "1 failed (q-0003)" in out and "Run the same command again" in out
    assert "$0.000" in out  # a cost line from the given price
    lines = store_lines(tmp_path / "runs")
    assert len(lines) == 10 and sum(1 for r in lines if r["error"]) == 1

    fake_server.faults = []
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = store_lines(tmp_path / "runs")
    assert len(lines) == 11
    assert [r["attempt"] for r in lines if r["sample_id"] == "q-0003"] == [1, 2]


def test_cli_exit_codes_when_the_run_cannot_proceed(tmp_path, fake_server):
    ds = text_dataset(tmp_path / "ds", 4)
    runs = ["--runs-dir", str(tmp_path / "runs"), "--no-progress"]
    r = CliRunner().invoke(app, ["run", str(tmp_path / "missing"), "--model", "oracle", *runs])
    assert r.exit_code == 2 and "error:" in r.output
    r = CliRunner().invoke(app, ["run", str(ds.path), "--model", "gpt-4o", *runs])
    assert r.exit_code == 2 and "not one of" in r.output
    fake_server.faults = [Fault("401", times=-1)]
    r = CliRunner().invoke(
        app, ["run", str(ds.path), "--model", f"openai:x@{fake_server.url}", *runs]
    )
    assert r.exit_code == 1 and "refused the API key" in r.output


def test_cli_run_killed_with_sigkill_then_rerun_has_one_response_per_sample(tmp_path):
    ds = text_dataset(tmp_path / "ds", 80)
    runs = tmp_path / "runs"
    with FakeOpenAIServer(latency_s=0.03) as server:
        cmd = run_command(ds, server, runs, concurrency=4)
        kills = 0
        for stop_at in (10, 35):  # kill twice, at different depths
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_lines(runs, stop_at)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += proc.returncode == -signal.SIGKILL
        partial = len(store_lines(runs))
        assert kills == 2 and stop_at <= partial < 80
        sent_before = len(server.log)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    lines = store_lines(runs)
    ids = [r["sample_id"] for r in lines if r["error"] is None]
    assert sorted(ids) == sorted(s.id for s in ds)  # every sample exactly once
    assert len(lines) == 80
    # the last run asked only for what was missing (plus nothing twice)
    assert len(server.log) - sent_before == 80 - partial


def test_ctrl_c_stops_with_status_130_and_keeps_the_answers(tmp_path):
    ds = text_dataset(tmp_path / "ds", 200)
    runs = tmp_path / "runs"
    with FakeOpenAIServer(latency_s=0.05) as server:
        cmd = run_command(ds, server, runs, concurrency=2)
        # SIGINT at its default in the child: a suite started in the background by a shell
        # inherits it ignored, and Python then installs no Ctrl-C handler at all
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        wait_for_lines(runs, 5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "interrupted" in err and "resume" in err
        kept = store_lines(runs)
        assert 5 <= len(kept) < 200 and all(r["error"] is None for r in kept)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert sorted(r["sample_id"] for r in store_lines(runs)) == sorted(s.id for s in ds)
