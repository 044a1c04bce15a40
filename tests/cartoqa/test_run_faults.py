"""Runs and scores under races, torn files, bad replies and dead endpoints (issue 11).

Real ``cartoqa`` processes against the fake OpenAI-compatible server where a
race or an exit status is the point; in-process runs with a deterministic
misbehaving model where a reply's content is.
"""

import json
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.models import GenerationSettings, Request, Response
from cartoqa.runner import open_run_store, run_model, storable_text
from cartoqa.stores import RunStore
from cartoqa.testing.fake_openai import FakeOpenAIServer, Fault
from tests.cartoqa.model_data import text_dataset
from tests.cartoqa.test_runner import run_command, store_lines, wait_for_lines

CARTOQA = Path(sys.executable).with_name("cartoqa")


def cli(*args):
    r = CliRunner().invoke(app, [str(a) for a in args])
    return r.exit_code, r.output


def oracle_run(ds, runs, *extra):
    code, out = cli("run", ds.path, "-m", "oracle", "--runs-dir", runs, "--no-progress", *extra)
    assert code == 0, out
    return out


# ------------------------------------------------------------------ item 3: torn-line repair


def test_a_last_record_without_its_newline_is_kept_by_score_and_by_run(tmp_path):
    ds = text_dataset(tmp_path / "ds", 12)
    runs = tmp_path / "runs"
    oracle_run(ds, runs)
    [store] = runs.glob("*.jsonl")
    store.write_bytes(store.read_bytes().rstrip(b"\n"))  # valid, only its newline missing
    before = store.read_bytes()
    code, out = cli("score", ds.path, "--runs-dir", runs, "--json")
    assert code == 0, out
    (run,) = json.loads(out).values()
    assert run["scores"]["distance"]["all"]["accuracy"] == 1.0  # 12 of 12, not 11
    assert store.read_bytes() == before  # scoring changes nothing
    out = oracle_run(ds, runs)
    assert "answered now" in out and "correct: 12/12" in out
    lines = store.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 13  # the newline added, no line lost


def test_a_torn_last_line_is_reported_by_score_and_dropped_by_run(tmp_path):
    ds = text_dataset(tmp_path / "ds", 6)
    runs = tmp_path / "runs"
    oracle_run(ds, runs)
    [store] = runs.glob("*.jsonl")
    whole = store.read_bytes()
    store.write_bytes(whole + b'{"schema_version": 1, "sample_id": "q-00')
    code, out = cli("score", ds.path, "--runs-dir", runs)
    assert code == 1 and "last line is incomplete" in out
    oracle_run(ds, runs)
    assert store.read_bytes() == whole


# ------------------------------------------------------------------ item 5: two runs at once


def test_a_second_run_of_the_same_store_is_refused_and_nothing_is_sent_twice(tmp_path):
    ds = text_dataset(tmp_path / "ds", 40)
    runs = tmp_path / "runs"
    with FakeOpenAIServer(latency_s=0.25) as server:  # 10 s in all: still going when asked
        cmd = run_command(ds, server, runs, concurrency=1)
        first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_lines(runs, 3)
        t0 = time.monotonic()
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stderr
        assert time.monotonic() - t0 < 20  # refused at once, not after answering
        assert "another run is answering" in second.stderr
        assert f"process {first.pid}" in second.stderr
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        assert len(server.log) == 40  # every question asked once
    assert sorted(r["sample_id"] for r in store_lines(runs)) == sorted(s.id for s in ds)


def test_wait_makes_the_second_run_resume_after_the_first(tmp_path):
    ds = text_dataset(tmp_path / "ds", 30)
    runs = tmp_path / "runs"
    with FakeOpenAIServer(latency_s=0.5) as server:  # the first run lasts until the second waits
        cmd = run_command(ds, server, runs, concurrency=1)
        first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_lines(runs, 2)
        second = subprocess.Popen(
            [*cmd, "--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        said = ""
        for line in second.stderr:  # (a loaded machine may take seconds to start it)
            said += line
            if "waiting for the run of" in line:
                break
        server.latency_s = 0.0  # now let the first one finish
        _, rest = second.communicate(timeout=120)
        assert first.wait(120) == 0
        assert second.returncode == 0, said + rest
        assert "waiting for the run of" in said and f"process {first.pid}" in said
        assert len(server.log) == 30
    assert len(store_lines(runs)) == 30


# ------------------------------------------------------------------ item 6: runs keyed by id


def test_two_runs_of_one_model_with_other_settings_are_scored_apart(tmp_path):
    ds = text_dataset(tmp_path / "ds", 8)
    runs = tmp_path / "runs"
    for t in ("0", "0.7"):
        code, out = cli(
            "run",
            ds.path,
            "-m",
            "random:3",
            "--runs-dir",
            runs,
            "--no-progress",
            "--temperature",
            t,
        )
        assert code == 0, out
    code, out = cli("score", ds.path, "--runs-dir", runs, "--json", "--out", tmp_path / "sc")
    assert code == 0, out
    data = json.loads(out)
    assert len(data) == 2
    assert sorted(r["settings"]["temperature"] for r in data.values()) == [0.0, 0.7]
    assert {r["model"] for r in data.values()} == {"random:3"}
    rows = (tmp_path / "sc" / "scores.csv").read_text().splitlines()
    keys = {tuple(r.split(",")[:3]) for r in rows[1:]}
    assert len(keys) == 2  # run id, model, temperature tell the two apart on every row


# ------------------------------------------------------------------ item 9: exit status


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_endpoint_stops_the_run_at_once_with_status_1(tmp_path):
    ds = text_dataset(tmp_path / "ds", 3)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    t0 = time.monotonic()
    done = subprocess.run(
        [CARTOQA, "run", ds.path, "-m", f"openai:x@{url}", "--runs-dir", tmp_path / "runs"]
        + ["--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "cannot connect" in done.stderr and "is it running" in done.stderr
    assert time.monotonic() - t0 < 60  # not seven tries with backoff per sample


def test_a_run_where_every_request_fails_exits_1(tmp_path):
    ds = text_dataset(tmp_path / "ds", 4)
    with FakeOpenAIServer() as server:
        server.faults = [Fault("400", times=-1)]  # each request refused alone, the run goes on
        code, out = cli(
            "run",
            ds.path,
            "-m",
            f"openai:x@{server.url}",
            "--runs-dir",
            tmp_path / "runs",
            "--no-progress",
        )
    assert code == 1, out
    assert "every request of this run failed (4 of 4)" in out.replace("\n", " ")
    assert "HTTP 400" in out


def test_a_deadline_shorter_than_a_try_is_refused(tmp_path):
    ds = text_dataset(tmp_path / "ds", 1)
    code, out = cli("run", ds.path, "-m", "oracle", "--timeout", "60", "--deadline", "10")
    assert code == 2 and "give --deadline 60 or more" in out


def test_a_rerun_with_nothing_left_to_send_exits_zero(tmp_path):
    ds = text_dataset(tmp_path / "ds", 3)
    oracle_run(ds, tmp_path / "runs")
    oracle_run(ds, tmp_path / "runs")  # every sample answered before: not a failure


# ------------------------------------------------------------------ item 10: bad replies


class MisbehavingModel:
    """A deterministic fake model (not a real one) whose replies break naive storage: lone
    surrogates, negative and non-integer token counts, and one batch that raises."""

    spec = "test:misbehaving"
    batch_size = 1
    thread_safe = False

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        (r,) = requests
        n = int(r.id.rsplit("-", 1)[1])
        if n == 0:
            return [Response(text="FINAL ANSWER: \ud800 lone", input_tokens=5, output_tokens=3)]
        if n == 1:
            return [Response(text="FINAL ANSWER: 1 km", input_tokens=-5, output_tokens=2)]
        if n == 2:
            return [Response(text="FINAL ANSWER: 2 km", input_tokens=3, output_tokens=2.5)]  # type: ignore[arg-type]
        if n == 3:
            raise RuntimeError("the adapter broke on this one")
        return [Response(text=f"FINAL ANSWER: {n} km", input_tokens=1, output_tokens=1)]

    def close(self) -> None:
        pass


def test_every_reply_is_stored_whatever_it_holds_and_a_sample_fails_alone(tmp_path):
    ds = text_dataset(tmp_path / "ds", 6)
    settings = GenerationSettings()
    model = MisbehavingModel()
    with open_run_store(tmp_path / "runs", ds, model.spec, settings) as store:
        summary = run_model(ds, model, store, settings=settings)
    assert summary.stopped is None
    assert summary.answered == 5 and summary.failed == 1 and summary.mended == 3
    with RunStore(store.path, readonly=True) as again:
        latest = again.latest()
    ids = sorted(latest)
    assert ids == sorted(s.id for s in ds)
    first, second, third, fourth = (latest[i] for i in ids[:4])
    assert first.response == "FINAL ANSWER: \\ud800 lone" and "surrogate" in (first.note or "")
    assert second.input_tokens is None and "input_tokens=-5" in (second.note or "")
    assert second.output_tokens == 2
    assert third.output_tokens is None and third.input_tokens == 3
    assert fourth.error and "RuntimeError" in fourth.error


def test_storable_text_changes_only_what_json_cannot_hold():
    assert storable_text("Ünïcödé 🗺 ok") == ("Ünïcödé 🗺 ok", False)
    assert storable_text("a\udc80b") == ("a\\udc80b", True)


# ------------------------------------------------------------------ item 16: corrupt files


def test_score_reports_a_corrupt_store_or_meta_and_scores_the_rest(tmp_path):
    ds = text_dataset(tmp_path / "ds", 5)
    runs = tmp_path / "runs"
    oracle_run(ds, runs)
    code, out = cli("run", ds.path, "-m", "random", "--runs-dir", runs, "--no-progress")
    assert code == 0, out
    random_store = next(p for p in runs.glob("*.jsonl") if "random" in p.name)
    lines = random_store.read_text().splitlines()
    lines[2] = '{"half": "a record'
    random_store.write_text("\n".join(lines) + "\n")
    code, out = cli("score", ds.path, "--runs-dir", runs)
    assert code == 1
    assert f"{random_store.name}:3: not a run record" in out.replace("\n", "")
    assert "oracle" in out and "Traceback" not in out  # the readable run is still scored
    code, out = cli("run", ds.path, "-m", "random", "--runs-dir", runs, "--no-progress")
    assert code == 2 and ":3: not a run record" in out.replace("\n", "")
    meta = random_store.with_suffix(".meta.json")
    meta.write_text("{broken")
    random_store.write_text("\n".join(lines[:2]) + "\n")
    code, out = cli("score", ds.path, "--runs-dir", runs)
    assert code == 1 and "meta.json cannot be read" in out.replace("\n", "")
    code, out = cli("run", ds.path, "-m", "random", "--runs-dir", runs, "--no-progress")
    assert code == 2 and "is not valid JSON" in out.replace("\n", "")


def test_run_refuses_a_dataset_edited_after_it_was_made(tmp_path):
    ds = text_dataset(tmp_path / "ds", 4)
    oracle_run(ds, tmp_path / "runs")
    path = Path(ds.path) / "samples.jsonl"
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["ground_truth"]["value"] = rec["ground_truth"]["value"] + 1
    lines[0] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    for cmd in (["run", ds.path, "-m", "oracle"], ["score", ds.path]):
        code, out = cli(*cmd, "--runs-dir", tmp_path / "runs")
        assert code == 2 and "does not match its manifest" in out.replace("\n", "")


def test_odd_replies_through_the_real_sdk_are_stored_and_scored(tmp_path):
    """Item 10 end to end: the installed cartoqa run, the openai SDK, a local server."""
    ds = text_dataset(tmp_path / "ds", 6)
    runs = tmp_path / "runs"
    with FakeOpenAIServer() as server:
        server.faults = [
            Fault("surrogate", match="[q-0001]"),
            Fault("negative_usage", match="[q-0002]"),
            Fault("garbage_usage", match="[q-0003]"),
        ]
        done = subprocess.run(
            run_command(ds, server, runs, concurrency=2), capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    lines = {r["sample_id"]: r for r in store_lines(runs)}
    assert len(lines) == 6 and all(r["error"] is None for r in lines.values())
    assert lines["q-0001"]["response"].endswith("\\ud800")
    assert lines["q-0002"]["input_tokens"] is None and lines["q-0003"]["output_tokens"] is None
    [meta] = runs.glob("*.meta.json")
    assert any("not a count" in n for n in json.loads(meta.read_text())["notes"])
    code, out = cli("score", ds.path, "--runs-dir", runs)
    assert code == 0, out


def test_settings_the_sdk_does_not_take_are_named_in_the_run_metadata(tmp_path):
    pytest.importorskip("anthropic")
    from cartoqa.testing.fake_anthropic import FakeAnthropicServer

    ds = text_dataset(tmp_path / "ds", 3)
    runs = tmp_path / "runs"
    with FakeAnthropicServer() as server:
        code, out = cli(
            *("run", ds.path, "-m", f"anthropic:claude-test@{server.url}"),
            *("--runs-dir", runs, "--no-progress", "--temperature", "0.3"),
        )
        sent = [entry.params for entry in server.log]
    assert code == 0, out
    [meta] = runs.glob("*.meta.json")
    notes = json.loads(meta.read_text()).get("notes", [])
    import inspect

    import anthropic

    takes = inspect.signature(anthropic.Anthropic(api_key="x").messages.create).parameters
    assert len(sent) == 3
    if "temperature" in takes:  # this SDK takes it: sent, nothing to note
        assert all(p.get("temperature") == 0.3 for p in sent)
    else:  # anthropic 2.14: left out, and said so in the run's metadata
        assert all("temperature" not in p for p in sent)
        assert any("temperature" in n for n in notes), notes


def test_gps_questions_get_gpsbench_s_8192_output_tokens_by_default(tmp_path):
    from cartoqa.runner import GPS_MAX_TOKENS, MAP_MAX_TOKENS, default_max_tokens
    from cartoqa.tasks.gps import generate_gps

    generate_gps(tmp_path / "g", per_task=10, tasks=["distance"])
    from cartoqa.stores import load_dataset

    gps = load_dataset(tmp_path / "g")
    assert default_max_tokens(gps.samples) == GPS_MAX_TOKENS == 8192
    text = text_dataset(tmp_path / "t", 2)  # no track: not a GPS question
    assert default_max_tokens(text.samples) == MAP_MAX_TOKENS == 1024
    code, out = cli("run", gps.path, "-m", "oracle", "--runs-dir", tmp_path / "r", "--no-progress")
    assert code == 0, out
    [meta] = (tmp_path / "r").glob("*.meta.json")
    assert json.loads(meta.read_text())["settings"]["max_tokens"] == 8192
    code, out = cli(
        "run",
        gps.path,
        "-m",
        "oracle",
        "--runs-dir",
        tmp_path / "r2",
        "--no-progress",
        "--max-tokens",
        "512",
    )
    [meta] = (tmp_path / "r2").glob("*.meta.json")
    assert json.loads(meta.read_text())["settings"]["max_tokens"] == 512


# ------------------------------------------------------------------ issue 26: runs under faults


def test_a_replaced_image_fails_its_sample_unsent_and_nothing_answered_is_lost(tmp_path):
    """Finding 24: mml's image overwritten by another map after the dataset was made."""
    from tests.cartoqa.model_data import kinds_dataset

    ds = kinds_dataset(tmp_path / "ds")
    runs = tmp_path / "runs"
    image = Path(ds.path) / "images" / "mml-000.png"
    good = image.read_bytes()
    with FakeOpenAIServer() as server:
        spec = f"openai:fake@{server.url}"
        code, out = cli("run", ds.path, "-m", spec, "--runs-dir", runs, "--no-progress",
                        "--limit", "3")  # fmt: skip
        assert code == 0, out
        image.write_bytes((Path(ds.path) / "images" / "srn-000.png").read_bytes())
        code, out = cli("run", ds.path, "-m", spec, "--runs-dir", runs, "--no-progress")
        assert code == 0, out  # the others answered: the run went through
        sent = [e.text for e in server.log]
        assert not any("[mml-000]" in t for t in sent)  # the wrong map never left
        lines = store_lines(runs)
        assert len(lines) == len(ds)  # the three answered before kept, each once
        [mml] = [r for r in lines if r["sample_id"] == "mml-000"]
        assert mml["response"] is None
        for words in ("images/mml-000.png", "not the image this sample was made with",
                      "Restore the original file", "build the dataset again"):  # fmt: skip
            assert words in mml["error"], mml["error"]
        assert "1 failed (mml-000)" in out.replace("\n", " ")
        image.write_bytes(good)  # restored: the sample is answered on the next run
        code, out = cli("run", ds.path, "-m", spec, "--runs-dir", runs, "--no-progress")
        assert code == 0 and "answered now" in out
        assert sum("[mml-000]" in e.text for e in server.log) == 1
    with RunStore(next(runs.glob("*.jsonl")), readonly=True) as store:
        assert all(r.ok for r in store.latest().values())


def test_a_second_answer_for_a_sample_is_named_and_the_first_one_counts(tmp_path):
    """Finding 25: a store holding two successful records for one sample."""
    ds = text_dataset(tmp_path / "ds", 4)
    runs = tmp_path / "runs"
    oracle_run(ds, runs)
    [store] = runs.glob("*.jsonl")
    lines = store.read_text().splitlines()
    second = json.loads(lines[1])
    assert second["sample_id"] == "q-0001"
    second.update(response="FINAL ANSWER: 99999 km", attempt=2)
    store.write_text("\n".join([*lines, json.dumps(second)]) + "\n")
    r = CliRunner().invoke(app, ["score", str(ds.path), "--runs-dir", str(runs), "--json"])
    assert r.exit_code == 0, r.output
    (run,) = json.loads(r.stdout).values()
    assert run["scores"]["distance"]["all"]["accuracy"] == 1.0  # the first answer counts
    warning = r.stderr.replace("\n", " ")
    assert "more than one successful answer for 1 sample(s): q-0001 (2)" in warning
    assert "the first answer of each is scored" in warning
    with RunStore(store, readonly=True) as again:
        assert again.latest()["q-0001"].response == json.loads(lines[1])["response"]
        assert again.duplicates() == {"q-0001": 2}
