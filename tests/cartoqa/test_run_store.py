"""The run store: resume, duplicates, torn lines, and a writer killed with SIGKILL."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from cartoqa.errors import RunStoreError
from cartoqa.records import RunRecord
from cartoqa.stores import RunStore, run_id

WRITER = Path(__file__).with_name("run_writer.py")


def rec(sid, response="ok", error=None):
    return RunRecord(sample_id=sid, model="m", response=None if error else response, error=error)


def test_open_finds_the_same_store_for_the_same_run(tmp_path):
    kw = dict(dataset_name="ds", dataset_sha256="f" * 64, model="openai:gpt-4o", settings={"t": 0})
    with RunStore.open(tmp_path, **kw) as s:
        s.append(rec("a"))
    with RunStore.open(tmp_path, **kw) as s:
        assert s.completed_ids() == {"a"}
    with RunStore.open(tmp_path, **{**kw, "settings": {"t": 1}}) as s:
        assert s.completed_ids() == set()
    assert run_id("f" * 64, "m", {"a": 1, "b": 2}) == run_id("f" * 64, "m", {"b": 2, "a": 1})
    assert len(list(tmp_path.glob("*.jsonl"))) == 2


def test_meta_file_that_disagrees_is_refused(tmp_path):
    kw = dict(dataset_name="ds", dataset_sha256="f" * 64, model="m", settings={})
    with RunStore.open(tmp_path, **kw) as s:
        meta = s.path.with_suffix(".meta.json")
    data = json.loads(meta.read_text())
    data["dataset_sha256"] = "0" * 64
    meta.write_text(json.dumps(data))
    with pytest.raises(RunStoreError, match="differs in dataset_sha256"):
        RunStore.open(tmp_path, **kw)


def test_failed_attempts_then_success_and_no_duplicates(tmp_path):
    with RunStore(tmp_path / "r.jsonl") as s:
        assert s.append(rec("a", error="HTTP 500"))
        assert s.append(rec("a", error="timeout"))
        assert s.completed_ids() == set()
        assert s.append(rec("a", response="42 km"))
        assert not s.append(rec("a", response="again"))  # already answered: nothing written
        assert s.attempts("a") == 3
        assert s.latest()["a"].response == "42 km"
        s.append(rec("b", error="HTTP 429"))
        assert s.latest()["b"].error == "HTTP 429"
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == 4


def test_torn_last_line_is_dropped_on_open(tmp_path, caplog):
    path = tmp_path / "r.jsonl"
    with RunStore(path) as s:
        s.append(rec("a"))
        s.append(rec("b"))
    whole = path.read_bytes()
    line = rec("c").model_dump_json().encode()
    path.write_bytes(whole + line[: len(line) // 2])  # a writer killed half-way through a line
    with RunStore(path) as s:
        assert s.repaired_bytes == len(line) // 2
        assert s.completed_ids() == {"a", "b"}
        s.append(rec("c"))
    assert "torn last line" in caplog.text
    assert [json.loads(x)["sample_id"] for x in path.read_text().splitlines()] == ["a", "b", "c"]


def test_corrupt_middle_line_is_reported_by_number(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(
        rec("a").model_dump_json() + '\n{"oops": 1}\n' + rec("b").model_dump_json() + "\n"
    )
    with pytest.raises(RunStoreError, match=r"r\.jsonl:2: not a run record"):
        RunStore(path)


def _append_all(path: str, ids: list[str]) -> int:
    with RunStore(path) as s:
        return sum(s.append(rec(i, response=f"from {os.getpid()}")) for i in ids)


def test_two_processes_appending_the_same_samples(tmp_path):
    path = str(tmp_path / "r.jsonl")
    ids = [f"s{i}" for i in range(300)]
    with ProcessPoolExecutor(2) as pool:
        written = list(pool.map(_append_all, [path, path], [ids, ids[::-1]]))
    assert sum(written) == 300
    got = [json.loads(x)["sample_id"] for x in Path(path).read_text().splitlines()]
    assert sorted(got) == sorted(ids)


@pytest.mark.slow
def test_writer_killed_mid_run_resumes_without_loss_or_duplicates(tmp_path):
    """SIGKILL a writer of large records at random moments, again and again, then let it finish."""
    path = tmp_path / "run.jsonl"
    n, size = 400, 100_000
    rng = random.Random(1234)
    kills_mid_run = 0
    torn_seen = 0
    for _ in range(12):
        proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(path), str(n), str(size), "0.0003"],
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.06))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if path.exists():
            data = path.read_bytes()
            torn_seen += bool(data) and not data.endswith(b"\n")
            done = data.count(b"\n")
            kills_mid_run += 0 < done < n
    assert kills_mid_run >= 3, "the writer was never killed part-way; the test proved nothing"
    subprocess.run(
        [sys.executable, str(WRITER), str(path), str(n), str(size), "0.0003"],
        check=True,
        timeout=120,
        stdout=subprocess.DEVNULL,
    )
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    ids = [RunRecord.model_validate_json(x).sample_id for x in lines[:-1]]
    assert sorted(ids) == [f"s-{i:04d}" for i in range(n)]
    assert len(ids) == len(set(ids))
    print(f"kills part-way: {kills_mid_run}, torn tails left by a kill: {torn_seen}")
