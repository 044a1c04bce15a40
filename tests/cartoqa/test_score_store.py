"""Scores stored beside each run store and read back (issue 14, item 3).

``cartoqa score`` keeps each run's per-sample scores in
``<store stem>.scores-<key>.jsonl`` and reads them while they are fresh.  The
tests prove the reuse from the outside: a score edited in the file shows up in
the tables while the file is fresh, and is gone once the run store changes,
the key changes (another mode, a bumped scorer version) or ``--rescore`` is
given.  The tables are checked against ``score_run`` on the store's responses,
a read-only runs folder is a real read-only bind mount, and racing writers are
real processes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.records import SampleScore
from cartoqa.scoring import (
    score_run,
    score_sample,
    score_samples,
    scoring_versions,
    tables_from_scores,
    task_versions,
)
from cartoqa.stores import RunStore, find_runs, read_scores, scores_path, scoring_key
from cartoqa.stores._files import strict_json
from cartoqa.stores.scores import fingerprint, store_state, write_scores
from cartoqa.tasks.spec import get_task, register_task
from tests.cartoqa.model_data import kinds_dataset
from tests.cartoqa.read_only import read_only_mount

CARTOQA = Path(sys.executable).with_name("cartoqa")


def cli(*args):
    r = CliRunner().invoke(app, [str(a) for a in args])
    return r


def make_runs(ds, runs, models=("oracle", "random:3", "constant:FINAL ANSWER: 3")):
    for m in models:
        r = cli("run", ds.path, "-m", m, "--runs-dir", runs, "--no-progress")
        assert r.exit_code == 0, r.output


def stores(ds, runs):
    infos, problems = find_runs(runs, dataset_sha256=ds.manifest.samples_sha256)
    assert not problems
    return {i.model: i for i in infos}


def latest(path):
    with RunStore(path, readonly=True) as store:
        return {k: r.response for k, r in store.latest().items()}


def key_of(ds, mode="cartoqa"):
    return scoring_key(scoring_versions({s.task for s in ds.samples}), mode)


def as_json(obj):
    # as cartoqa writes JSON: NaN as null, so equal NaNs compare equal
    return json.dumps(strict_json(obj), sort_keys=False, allow_nan=False)


def score_json(ds, runs, *extra):
    r = cli("score", ds.path, "--runs-dir", runs, "--json", *extra)
    assert r.exit_code == 0, r.output
    return {run["model"]: run for run in json.loads(r.stdout).values()}, r


def read_lines(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(x) for x in lines[1:]]


def write_lines(path, header, rows):
    path.write_text("\n".join(json.dumps(x) for x in [header, *rows]) + "\n", encoding="utf-8")


def edit_stored(path, sample_id, **fields):
    """Change one sample's stored score by hand (what a stale reuse would show)."""
    header, rows = read_lines(path)
    (row,) = [r for r in rows if r["sample_id"] == sample_id]
    row.update(fields)
    write_lines(path, header, rows)


@pytest.fixture
def kinds(tmp_path):
    return kinds_dataset(tmp_path / "kinds", copies=3)


# ------------------------------------------------------------------ written, and read back


def test_scores_are_written_beside_each_store_with_what_they_came_from(kinds, tmp_path):
    runs = tmp_path / "runs"
    make_runs(kinds, runs)
    score_json(kinds, runs)
    key = key_of(kinds)
    for model, info in stores(kinds, runs).items():
        path = runs / f"{info.path.stem}.scores-{key}.jsonl"
        assert path == scores_path(info.path, key) and path.exists(), model
        header, rows = read_lines(path)
        raw = info.path.read_bytes()
        assert header["key"] == key and header["mode"] == "cartoqa"
        assert header["store"]["size"] == len(raw) == info.path.stat().st_size
        assert header["store"]["sha256"] == hashlib.sha256(raw).hexdigest()
        assert header["dataset_sha256"] == kinds.manifest.samples_sha256
        assert header["samples"] == len(rows) == len(kinds.samples)
        # one line per sample, the SampleScore's fields each, as its task's scorer gives them
        responses = latest(info.path)
        by_id = {r["sample_id"]: r for r in rows}
        assert set(by_id) == {s.id for s in kinds}
        for s in kinds:
            row = dict(by_id[s.id])
            assert row.pop("task") == s.task
            row.pop("sample_id")
            for name, value in row.pop("nonfinite", {}).items():  # null in "values"
                assert row["values"][name] is None and value in ("NaN", "Infinity", "-Infinity")
            want = score_sample(s, responses.get(s.id))  # unregistered tasks: exact match
            assert as_json(row) == as_json(want.model_dump()), s.id
    # the key: a short sha256, of cartoqa's version, the mode and each task's scorer version
    assert len(key) == 16 and int(key, 16) >= 0
    assert key_of(kinds, "original") != key
    assert sorted(p.name for p in runs.glob("*.tmp")) == []


def test_a_second_score_reads_the_stored_scores_while_they_are_fresh(kinds, tmp_path):
    runs = tmp_path / "runs"
    make_runs(kinds, runs, models=("oracle",))
    first, _ = score_json(kinds, runs)
    assert first["oracle"]["scores"]["mfs"]["all"] == {"n": 3, "accuracy": 1.0, "unanswered": 0}
    [info] = stores(kinds, runs).values()
    path = scores_path(info.path, key_of(kinds))
    # a hand edit of one stored score: a reused file shows it, a recomputed one does not
    edit_stored(path, "mfs-001", correct=False, why="wrong (edited)")
    again, _ = score_json(kinds, runs)
    assert again["oracle"]["scores"]["mfs"]["all"]["accuracy"] == pytest.approx(2 / 3)
    # everything else is as before
    del first["oracle"]["scores"]["mfs"], again["oracle"]["scores"]["mfs"]
    assert as_json(first) == as_json(again)

    # --rescore: computed afresh, and stored again
    fresh, _ = score_json(kinds, runs, "--rescore")
    assert fresh["oracle"]["scores"]["mfs"]["all"]["accuracy"] == 1.0
    _, rows = read_lines(path)
    assert next(r for r in rows if r["sample_id"] == "mfs-001")["correct"] is True


def test_stored_scores_are_ignored_once_the_run_store_changes(kinds, tmp_path):
    runs = tmp_path / "runs"
    r = cli("run", kinds.path, "-m", "oracle", "--runs-dir", runs, "--no-progress", "--limit", "20")
    assert r.exit_code == 0, r.output
    [info] = stores(kinds, runs).values()
    partial, _ = score_json(kinds, runs)
    path = scores_path(info.path, key_of(kinds))
    header, _ = read_lines(path)
    answered = {s for s, v in latest(info.path).items() if v is not None}
    assert len(answered) == 20 and header["samples"] == len(kinds.samples)
    edit_stored(path, "mfs-000", correct=False)
    # the run resumes: the store grows, so its stored scores no longer describe it
    r = cli("run", kinds.path, "-m", "oracle", "--runs-dir", runs, "--no-progress")
    assert r.exit_code == 0, r.output
    whole, _ = score_json(kinds, runs)
    assert whole["oracle"]["scores"]["mfs"]["all"]["accuracy"] == 1.0
    assert as_json(whole["oracle"]["scores"]) == as_json(
        score_run(kinds.samples, latest(info.path))
    )
    assert as_json(whole["oracle"]["scores"]) != as_json(partial["oracle"]["scores"])
    header2, _ = read_lines(path)
    assert header2["store"]["size"] == info.path.stat().st_size > header["store"]["size"]

    # a change that leaves the size alone (one byte of a response rewritten) is seen too
    edit_stored(path, "mfs-000", correct=False)
    data = info.path.read_bytes()
    i = data.index(b'"response":"') + len(b'"response":"')
    info.path.write_bytes(data[:i] + (b"X" if data[i : i + 1] != b"X" else b"Y") + data[i + 1 :])
    assert info.path.stat().st_size == len(data)
    after, _ = score_json(kinds, runs)
    assert after["oracle"]["scores"]["mfs"]["all"]["accuracy"] == 1.0
    assert as_json(after["oracle"]["scores"]) == as_json(
        score_run(kinds.samples, latest(info.path))
    )


def test_another_key_is_another_file_and_the_edited_one_is_not_read(kinds, tmp_path):
    runs = tmp_path / "runs"
    make_runs(kinds, runs, models=("oracle",))
    score_json(kinds, runs)
    [info] = stores(kinds, runs).values()
    old = scores_path(info.path, key_of(kinds))
    edit_stored(old, "mml-002", correct=False)
    # another mode: its own key and file
    orig, _ = score_json(kinds, runs, "--mode", "original")
    assert orig["oracle"]["scores"]["mml"]["all"]["accuracy"] == 1.0
    assert scores_path(info.path, key_of(kinds, "original")).exists()
    # a task's scorer version bumped: the key changes, the old file is passed by
    spec = get_task("mml")  # a registered task
    try:
        register_task(dataclasses.replace(spec, version="2"), replace=True)
        bumped = key_of(kinds)
        assert bumped != old.name.split("scores-")[1].removesuffix(".jsonl")
        now, _ = score_json(kinds, runs)
        assert now["oracle"]["scores"]["mml"]["all"]["accuracy"] == 1.0
        header, _ = read_lines(scores_path(info.path, bumped))
        assert header["tasks"]["mml"] == "2" and header["tasks"]["srn"] == "1"
        assert header["tasks"]["mfs"] == "1"  # registered (issue 16): its own scorer

        # a task the schema knows but no spec registers is scored by exact match
        versions = task_versions(["no_such_spec", "mml"])
        assert versions == {"no_such_spec": "unregistered", "mml": "2"}
    finally:
        register_task(spec, replace=True)
    # back to version 1: the old (edited) file is fresh again and is read
    back, _ = score_json(kinds, runs)
    assert back["oracle"]["scores"]["mml"]["all"]["accuracy"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "",  # empty
        lambda text: "not json\n" + text,  # no header
        lambda text: text + '{"sample_id": "mfs-000", "task": "mfs", "correct": true}\n',  # extra
        lambda text: text.replace('"correct":true', '"correct":"yes"', 1),  # not a SampleScore
        lambda text: "\n".join(text.splitlines()[:-1]) + "\n",  # a sample missing
    ],
    ids=["truncated", "empty", "no-header", "extra-line", "bad-field", "missing-sample"],
)
def test_a_damaged_scores_file_is_scored_afresh_and_rewritten(kinds, tmp_path, damage):
    runs = tmp_path / "runs"
    make_runs(kinds, runs, models=("oracle",))
    good, _ = score_json(kinds, runs)
    [info] = stores(kinds, runs).values()
    path = scores_path(info.path, key_of(kinds))
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    again, r = score_json(kinds, runs)
    assert as_json(again) == as_json(good) and r.stderr == ""
    fp = fingerprint(info.path)
    sha = kinds.manifest.samples_sha256
    assert read_scores(info.path, key_of(kinds), kinds.samples, store=fp, dataset_sha256=sha)


# ------------------------------------------------------------------ the same tables


def test_tables_are_those_of_score_run_computed_stored_and_read(kinds, tmp_path):
    runs = tmp_path / "runs"
    make_runs(kinds, runs)
    r = cli(
        "run", kinds.path, "-m", "random:9", "--runs-dir", runs, "--no-progress", "--limit", "7"
    )
    assert r.exit_code == 0, r.output
    infos = stores(kinds, runs)
    for mode in ("cartoqa", "original"):
        want = {
            m: as_json(score_run(kinds.samples, latest(i.path), mode=mode))
            for m, i in infos.items()
        }
        computed, _ = score_json(kinds, runs, "--mode", mode, "--out", tmp_path / f"a-{mode}")
        for p in infos.values():
            assert scores_path(p.path, key_of(kinds, mode)).exists()
        read, _ = score_json(kinds, runs, "--mode", mode, "--out", tmp_path / f"b-{mode}")
        for m in infos:
            assert as_json(computed[m]["scores"]) == want[m], (mode, m)
            assert as_json(read[m]["scores"]) == want[m], (mode, m)
        for name in ("scores.json", "scores.csv"):  # the outputs, byte for byte
            a = (tmp_path / f"a-{mode}" / name).read_bytes()
            assert a == (tmp_path / f"b-{mode}" / name).read_bytes(), (mode, name)
    # in Python: the stored scores through tables_from_scores, and score_run, agree
    sha = kinds.manifest.samples_sha256
    for info in infos.values():
        responses = latest(info.path)
        stored = read_scores(
            info.path,
            key_of(kinds),
            kinds.samples,
            store=fingerprint(info.path),
            dataset_sha256=sha,
        )
        assert stored is not None
        assert as_json(tables_from_scores(stored, kinds.samples, responses)) == as_json(
            score_run(kinds.samples, responses)
        )
        assert [(s.id, as_json(x.model_dump())) for rows in stored.values() for s, x in rows] == [
            (s.id, as_json(x.model_dump()))
            for rows in score_samples(kinds.samples, responses).values()
            for s, x in rows
        ]


def _not_json(name):
    raise ValueError(f"{name} is not JSON")


def test_nan_and_infinite_values_survive_the_file(kinds, tmp_path):
    s = kinds.samples[0]
    weird = SampleScore(
        correct=None, values={"a": float("nan"), "b": float("inf"), "c": -0.0, "d": 0.1 + 0.2}
    )
    store = tmp_path / "x.jsonl"
    store.write_bytes(b"")
    fp = fingerprint(store)
    sha = kinds.manifest.samples_sha256
    scored = {s.task: [(s, weird)]}
    write_scores(
        store, "k", scored, mode="cartoqa", versions={s.task: "1"}, store=fp, dataset_sha256=sha
    )
    _header, row = [  # strict JSON (issue 26, finding 12): null, and named to read back
        json.loads(line, parse_constant=_not_json)
        for line in scores_path(store, "k").read_text().splitlines()
    ]
    assert row["values"]["a"] is None and row["nonfinite"] == {"a": "NaN", "b": "Infinity"}
    got = read_scores(store, "k", [s], store=fp, dataset_sha256=sha)
    [(_, back)] = got[s.task]
    assert repr(back.values) == repr(weird.values)  # nan, inf, -0.0, 0.30000000000000004
    # another dataset, another key, another store: not read
    assert read_scores(store, "k", [s], store=fp, dataset_sha256="0" * 64) is None
    assert read_scores(store, "k2", [s], store=fp, dataset_sha256=sha) is None
    other = dataclasses.replace(fp, sha256="0" * 64)
    assert read_scores(store, "k", [s], store=other, dataset_sha256=sha) is None


def test_a_store_that_changes_while_it_is_read_gives_no_fingerprint(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"a": 1}\n')
    state = store_state(p)
    assert fingerprint(p, since=state) == fingerprint(p)
    with p.open("ab") as f:
        f.write(b'{"a": 2}\n')
    assert fingerprint(p, since=state) is None  # scores of what was read are not stored
    assert fingerprint(p).size == p.stat().st_size
    assert fingerprint(tmp_path / "gone.jsonl") is None


# ------------------------------------------------------------------ a read-only runs folder


@pytest.fixture
def read_only_view(tmp_path):
    """(src, view): ``view`` shows ``src`` read-only, truly: as root a read-only bind mount
    (skipped where mounting is not allowed), otherwise ``src`` itself at mode 0555."""
    src = tmp_path / "runs"
    src.mkdir()
    if os.geteuid() != 0:
        yield src, src
        src.chmod(0o755)
        return
    view = tmp_path / "ro-runs"
    view.mkdir()
    with read_only_mount(src, view):
        yield src, view


def _read_only(src, view):
    if src == view:  # not root: permission bits hold
        src.chmod(0o555)


def score_process(ds, runs, *extra):
    return subprocess.run(
        [CARTOQA, "score", str(ds.path), "--runs-dir", str(runs), "--json", *map(str, extra)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_read_only_runs_folder_is_scored_afresh_with_one_line_saying_so(kinds, read_only_view):
    src, view = read_only_view
    make_runs(kinds, src, models=("oracle", "random:3"))
    _read_only(src, view)
    with pytest.raises(OSError):
        (view / "probe").write_text("x")
    done = score_process(kinds, view)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and all(x.startswith("note: cannot store the scores of") for x in lines)
    assert all("scored afresh" in x for x in lines) and "Traceback" not in done.stderr
    got = {r["model"]: r["scores"] for r in json.loads(done.stdout).values()}
    for model, info in stores(kinds, view).items():
        assert as_json(got[model]) == as_json(score_run(kinds.samples, latest(info.path)))
    assert not list(src.glob("*.scores-*")) and not list(src.glob(".*.tmp"))


def test_fresh_scores_in_a_read_only_folder_are_read_and_stale_ones_recomputed(
    kinds, read_only_view
):
    src, view = read_only_view
    make_runs(kinds, src, models=("oracle",))
    score_json(kinds, src)  # stored while the folder could be written
    [info] = stores(kinds, src).values()
    path = scores_path(info.path, key_of(kinds))
    edit_stored(path, "mfs-000", correct=False)
    if src == view:
        pytest.skip("not root: the store cannot be changed under a read-only view")
    done = score_process(kinds, view)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    (run,) = json.loads(done.stdout).values()
    assert run["scores"]["mfs"]["all"]["accuracy"] == pytest.approx(2 / 3)  # read
    stored_before = path.read_bytes()
    with info.path.open("ab") as f:  # the store changes (through the writable side)
        f.write(b"\n")
    done = score_process(kinds, view)
    assert done.returncode == 0, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "scored afresh" in done.stderr
    (run,) = json.loads(done.stdout).values()
    assert run["scores"]["mfs"]["all"]["accuracy"] == 1.0  # recomputed, not the edit
    assert path.read_bytes() == stored_before


# ------------------------------------------------------------------ racing writers


def test_racing_score_processes_leave_one_whole_file(tmp_path):
    ds = kinds_dataset(tmp_path / "big", copies=60, images=False)  # 840 samples
    runs = tmp_path / "runs"
    make_runs(ds, runs, models=("random:5",))
    [info] = stores(ds, runs).values()
    want = as_json(score_run(ds.samples, latest(info.path)))
    path = scores_path(info.path, key_of(ds))
    sha = ds.manifest.samples_sha256
    fp = fingerprint(info.path)
    seen_whole = 0
    for rnd in range(3):
        if rnd == 0:
            assert not path.exists()
        procs = [
            subprocess.Popen(
                [CARTOQA, "score", str(ds.path), "--runs-dir", str(runs), "--json", "--rescore"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(8)
        ]
        # meanwhile, read the file again and again: it is whole whenever it is there
        while any(p.poll() is None for p in procs):
            if path.exists():
                got = read_scores(info.path, key_of(ds), ds.samples, store=fp, dataset_sha256=sha)
                assert got is not None
                seen_whole += 1
            time.sleep(0.005)
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and err == "", err
            (run,) = json.loads(out).values()
            assert as_json(run["scores"]) == want
    assert seen_whole > 0
    stored = read_scores(info.path, key_of(ds), ds.samples, store=fp, dataset_sha256=sha)
    assert as_json(tables_from_scores(stored, ds.samples, latest(info.path))) == want
    assert list(runs.glob(".*.tmp")) == []  # every writer's temporary file replaced or gone
    assert sorted(p.name for p in runs.iterdir() if ".scores-" in p.name) == [path.name]
