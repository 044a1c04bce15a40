"""The review tool's store of decisions (``annotations.decisions``, issue 17 item 2):
append-only, versioned, refusing stale edits; real processes race it and are killed while
writing, and nothing committed is lost."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from annotations.decisions import DecisionStore
from cartoqa.errors import ReviewError, StaleEditError
from cartoqa.records import CountTruth, NumberTruth
from cartoqa.stores import load_dataset
from tests.cartoqa.model_data import kinds_dataset

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ds(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=2)
    return load_dataset(tmp_path / "ds")


def _by(ds, sid):
    return next(s for s in ds.samples if s.id == sid)


def test_accept_correct_reject_and_the_effective_truth(ds, tmp_path):
    store = DecisionStore.open(tmp_path / "r.sqlite", ds)
    count, rle, mfs = _by(ds, "stmf_count-000"), _by(ds, "rle-000"), _by(ds, "mfs-000")
    assert store.status(count.id) == "unreviewed" and store.version(count.id) == 0
    store.decide(count, reviewer="ana", verdict="accept", seen=0, reason="truth is right")
    fixed = CountTruth(value=4, feature_type="bank")
    d = store.decide(
        count, reviewer="bo", verdict="correct", truth=fixed, seen=1, reason="wrong count"
    )
    assert d.version == 2 and d.truth_before["value"] == 3 and d.truth_after["value"] == 4
    assert store.effective(count).ground_truth.value == 4
    assert store.status(count.id) == "corrected"
    store.decide(rle, reviewer="ana", verdict="reject", seen=0, reason="marker or path hard to see")
    assert store.effective(rle) is None and store.status(rle.id) == "rejected"
    assert store.effective(mfs) == mfs  # undecided: as generated
    # reopened: the same state
    store.close()
    again = DecisionStore.open(tmp_path / "r.sqlite", ds)
    assert [x.verdict for x in again.history(count.id)] == ["accept", "correct"]
    assert again.effective(count).ground_truth.value == 4
    stats = again.stats(s.id for s in ds.samples)
    assert stats["reviewed"] == 2 and stats["corrected"] == 1 and stats["rejected"] == 1
    assert stats["decisions"] == 3 and stats["reviewers"] == ["ana", "bo"]


def test_accepting_a_rejected_sample_brings_its_truth_back(ds, tmp_path):
    store = DecisionStore.open(tmp_path / "r.sqlite", ds)
    count = _by(ds, "stmf_count-000")
    fixed = CountTruth(value=4, feature_type="bank")
    store.decide(count, reviewer="ana", verdict="correct", truth=fixed, seen=0)
    store.decide(count, reviewer="bo", verdict="reject", seen=1, reason="image broken")
    store.decide(count, reviewer="bo", verdict="reject", seen=2, reason="still broken")
    assert store.effective(count) is None
    assert store.shown_truth(count)["value"] == 4  # what the rejections dropped
    d = store.decide(count, reviewer="cy", verdict="accept", seen=3)
    assert d.truth_before == {} and d.truth_after["value"] == 4
    assert store.effective(count).ground_truth.value == 4
    rows = store.statuses()
    assert rows[count.id] == ("accepted", 4, ["ana", "bo", "cy"])
    assert all(store.status(sid) == st for sid, (st, _, _) in rows.items())


def test_a_stale_edit_is_refused_and_names_the_change_that_came_in_between(ds, tmp_path):
    a = DecisionStore.open(tmp_path / "r.sqlite", ds)
    b = DecisionStore.open(tmp_path / "r.sqlite", ds)
    s = _by(ds, "stmf_count-001")
    seen = a.version(s.id)
    assert seen == b.version(s.id) == 0  # both open the sample
    a.decide(
        s,
        reviewer="ana",
        verdict="correct",
        truth=CountTruth(value=5, feature_type="bank"),
        seen=seen,
    )
    with pytest.raises(StaleEditError, match="ana made it 'correct'") as err:
        b.decide(s, reviewer="bo", verdict="accept", seen=seen)
    assert err.value.latest.reviewer == "ana" and err.value.latest.truth_after["value"] == 5
    assert [d.reviewer for d in a.history(s.id)] == ["ana"]  # nothing lost, nothing overwritten
    b.decide(s, reviewer="bo", verdict="accept", seen=b.version(s.id))  # after looking again
    assert b.effective(s).ground_truth.value == 5


def test_rows_are_append_only_even_by_hand(ds, tmp_path):
    store = DecisionStore.open(tmp_path / "r.sqlite", ds)
    s = _by(ds, "mml-000")
    store.decide(s, reviewer="ana", verdict="reject", seen=0)
    raw = sqlite3.connect(tmp_path / "r.sqlite")
    for sql in ("UPDATE decisions SET verdict = 'accept'", "DELETE FROM decisions"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            raw.execute(sql)
    raw.close()
    assert store.history(s.id)[0].verdict == "reject"


def test_bad_decisions_are_refused_with_the_reason(ds, tmp_path):
    store = DecisionStore.open(tmp_path / "r.sqlite", ds)
    s = _by(ds, "stmf_count-000")
    with pytest.raises(ReviewError, match="verdict 'maybe'"):
        store.decide(s, reviewer="ana", verdict="maybe", seen=0)
    with pytest.raises(ReviewError, match="gives the corrected truth"):
        store.decide(s, reviewer="ana", verdict="correct", seen=0)
    with pytest.raises(ReviewError, match="takes no truth"):
        store.decide(
            s,
            reviewer="ana",
            verdict="accept",
            seen=0,
            truth=CountTruth(value=1, feature_type="bank"),
        )
    with pytest.raises(ReviewError, match="reviewer"):
        store.decide(s, reviewer="  ", verdict="accept", seen=0)
    with pytest.raises(ReviewError, match="not valid for task 'stmf_count'"):
        store.decide(s, reviewer="ana", verdict="correct", seen=0, truth=NumberTruth(value=2.0))
    with pytest.raises(ReviewError, match="not valid"):
        store.decide(s, reviewer="ana", verdict="correct", seen=0, truth={"kind": "count"})
    assert store.version(s.id) == 0


def test_a_store_made_for_another_dataset_is_refused(ds, tmp_path):
    DecisionStore.open(tmp_path / "r.sqlite", ds).close()
    with pytest.raises(ReviewError, match="another dataset"):
        DecisionStore(tmp_path / "r.sqlite", "0" * 64)


def test_two_reviews_required_agreement_and_disputes(ds, tmp_path):
    store = DecisionStore.open(tmp_path / "r.sqlite", ds, required=2)
    s, t = _by(ds, "stmf_count-000"), _by(ds, "stmf_count-001")
    store.decide(s, reviewer="ana", verdict="accept", seen=0)
    assert store.status(s.id) == "needs another review"
    store.decide(s, reviewer="bo", verdict="accept", seen=1)
    assert store.status(s.id) == "accepted"
    store.decide(t, reviewer="ana", verdict="accept", seen=0)
    store.decide(
        t, reviewer="bo", verdict="correct", truth=CountTruth(value=9, feature_type="bank"), seen=1
    )
    assert store.status(t.id) == "disputed"
    [(sid, latest)] = store.disagreements()
    assert sid == t.id and sorted(d.reviewer for d in latest) == ["ana", "bo"]
    stats = store.stats([s.id, t.id])
    assert stats["agreement"] == 0.5 and stats["disputed"] == 1 and stats["accepted"] == 1


_CHILD = """
import sys
from pathlib import Path
from cartoqa.errors import StaleEditError
from annotations.decisions import DecisionStore
from cartoqa.stores import load_dataset
ds = load_dataset(Path(sys.argv[1]))
store = DecisionStore.open(Path(sys.argv[2]), ds)
sample = next(s for s in ds.samples if s.id == sys.argv[3])
who, n, go = sys.argv[4], int(sys.argv[5]), Path(sys.argv[6])
print("ready", flush=True)
while not go.exists():  # both start deciding at once
    pass
won = 0
for i in range(n):
    try:
        store.decide(sample, reviewer=who, verdict="accept", seen=store.version(sample.id))
        won += 1
        print(won, flush=True)
    except StaleEditError:
        pass
"""


def _child(ds, db: Path, sid: str, who: str, n: int, go: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(ds.path), str(db), sid, who, str(n), str(go)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_processes_deciding_on_one_sample_never_both_win_a_version(ds, tmp_path):
    db = tmp_path / "r.sqlite"
    DecisionStore.open(db, ds).close()
    go = tmp_path / "go"
    kids = [_child(ds, db, "mfs-000", who, 300, go) for who in ("ana", "bo")]
    for k in kids:
        assert k.stdout is not None and k.stdout.readline().strip() == "ready"
    go.touch()
    won = []
    for k in kids:
        out, err = k.communicate(timeout=120)
        assert k.returncode == 0, err[-2000:]
        won.append(len(out.split()))
    assert all(won) and sum(won) < 600  # both won some; some tries were told they were stale
    store = DecisionStore.open(db, ds)
    history = store.history("mfs-000")
    assert [d.version for d in history] == list(range(1, len(history) + 1))  # no gap, no twin
    assert len(history) == sum(won)  # every win stored once; every loss told, not written
    assert {d.reviewer for d in history} <= {"ana", "bo"}


def test_a_process_killed_while_deciding_loses_no_decision_it_was_told_was_stored(ds, tmp_path):
    db = tmp_path / "r.sqlite"
    DecisionStore.open(db, ds).close()
    go = tmp_path / "go"
    go.touch()
    kid = _child(ds, db, "srn-000", "ana", 100_000, go)
    assert kid.stdout is not None and kid.stdout.readline().strip() == "ready"
    told = 0
    deadline = time.monotonic() + 60
    assert kid.stdout is not None
    while time.monotonic() < deadline:
        line = kid.stdout.readline()
        if not line:
            break
        told = int(line)
        if told >= 40:
            break
    os.kill(kid.pid, signal.SIGKILL)
    kid.wait()
    assert told >= 40, kid.stderr.read()[-2000:] if kid.stderr else ""
    store = DecisionStore.open(db, ds)
    assert store.version("srn-000") >= told  # each acknowledged decision is on disk
    history = store.history("srn-000")
    assert [d.version for d in history] == list(range(1, len(history) + 1))
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()
    s = _by(ds, "srn-000")
    store.decide(s, reviewer="bo", verdict="reject", seen=store.version(s.id))
    assert store.effective(s) is None
    assert json.loads(json.dumps(store.latest(s.id).as_dict()))["verdict"] == "reject"


# ---------------------------------------------------------------- issue 26


def test_one_person_is_one_reviewer_whatever_invisible_characters_they_type(tmp_path):
    """Finding 16: "ana" and "ana\u200b" made an "agreed" sample; "\u202etoor" showed as root."""
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    store = DecisionStore.open(tmp_path / "r.sqlite", ds, required=2)
    count = _by(ds, "stmf_count-000")
    store.decide(count, reviewer="ana", verdict="accept", seen=0)
    store.decide(count, reviewer="ana\u200b", verdict="accept", seen=1)
    store.decide(count, reviewer="\uff41na\u2060 ", verdict="accept", seen=2)  # fullwidth a
    assert store.status(count.id) == "needs another review"
    assert {d.reviewer for d in store.all()} == {"ana"}
    assert store.stats(s.id for s in ds.samples)["agreement"] is None  # one reviewer only
    d = store.decide(_by(ds, "rle-000"), reviewer="\u202etoor", verdict="accept", seen=0)
    assert d.reviewer == "toor"
    d = store.decide(_by(ds, "mml-000"), reviewer="ana \t\n  lee", verdict="accept", seen=0)
    assert d.reviewer == "ana lee"
    for bad in ("\u200b", "\u202e\u202c", " \x00 "):
        with pytest.raises(ReviewError, match="name"):
            store.decide(_by(ds, "mfs-000"), reviewer=bad, verdict="accept", seen=0)
    assert store.version("mfs-000") == 0
    store.decide(count, reviewer="bo", verdict="accept", seen=3)
    assert store.status(count.id) == "accepted"  # two people now


def test_correcting_one_unit_of_an_rle_pair_corrects_its_twin(tmp_path):
    """Finding 18: a correction of rle-…-m left its -ft twin at the old value."""
    from tests.annotations.review_data import rle_pair_dataset

    ds = rle_pair_dataset(tmp_path / "ds")
    store = DecisionStore.open(tmp_path / "r.sqlite", ds)
    by = ds.by_id()
    assert store.twins_of("rle-0000-m") == ["rle-0000-ft"] and store.twins_of("rle-0001-m") == []
    fixed = NumberTruth(value=520.0, unit="m", equivalents={"ft": 1706.04})
    store.decide(by["rle-0000-m"], reviewer="ana", verdict="correct", truth=fixed, seen=0)
    ft = store.effective(by["rle-0000-ft"]).ground_truth
    assert (ft.value, ft.unit, ft.equivalents) == (1706.04, "ft", {"m": 520.0})
    twin = store.latest("rle-0000-ft")
    assert (twin.verdict, twin.reviewer, twin.version) == ("correct", "ana", 1)
    assert "rle-0000-m" in twin.reason
    # a JSON edit of the value alone: the truth's own equivalent follows too
    feet = {"kind": "number", "value": 1000.0, "unit": "ft", "equivalents": {"m": 520.0}}
    store.decide(by["rle-0000-ft"], reviewer="bo", verdict="correct", truth=feet, seen=1)
    m = store.effective(by["rle-0000-m"]).ground_truth
    assert (m.value, m.equivalents) == (304.8, {"ft": 1000.0})
    assert store.effective(by["rle-0000-ft"]).ground_truth.equivalents == {"m": 304.8}
    # a rejected twin stays rejected
    store.decide(by["rle-0000-ft"], reviewer="bo", verdict="reject", seen=2, reason="x")
    store.decide(
        by["rle-0000-m"], reviewer="bo", verdict="correct", seen=2,
        truth=NumberTruth(value=300.0, unit="m", equivalents={"ft": 984.25}),
    )  # fmt: skip
    assert store.effective(by["rle-0000-ft"]) is None
    assert store.effective(by["rle-0001-m"]).ground_truth.value == 80.0


def _locked(path: Path):
    """Another process's write lock on the store (a long write)."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_held_store_is_refused_as_busy_naming_it(ds, tmp_path):
    """Finding 17: a locked store froze every request for ~30 s, then failed unexplained."""
    from cartoqa.errors import StoreBusyError

    store = DecisionStore.open(tmp_path / "r.sqlite", ds, busy_timeout_s=0.2)
    other = _locked(tmp_path / "r.sqlite")
    try:
        with pytest.raises(StoreBusyError, match=r"r\.sqlite is busy.*try again"):
            store.decide(_by(ds, "mml-000"), reviewer="ana", verdict="accept", seen=0)
        assert store.version("mml-000") == 0  # reading goes on while another writes
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.decide(_by(ds, "mml-000"), reviewer="ana", verdict="accept", seen=0)


def _without_override(cmd: list[str]) -> list[str]:
    """``cmd`` run as a user whose read-only files are read-only: root loses the
    capabilities that let it write anything."""
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--", *cmd]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        _without_override([sys.executable, "-m", "cartoqa", *args]),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_a_read_only_store_is_exported_and_named_when_it_cannot_be_written(tmp_path):
    """Finding 17: `review export` refused a read-only store; a read-only -shm was left and
    the error named the wrong file."""
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    path = tmp_path / "ds" / "review.sqlite"
    with DecisionStore.open(path, ds) as store:
        store.decide(_by(ds, "mml-000"), reviewer="ana", verdict="reject", seen=0, reason="x")
    assert not path.with_name("review.sqlite-wal").exists()
    path.chmod(0o444)
    (tmp_path / "ds").chmod(0o555)
    try:
        r = _cli("review", "export", str(tmp_path / "ds"), str(tmp_path / "out"))
        assert r.returncode == 0, r.stdout + r.stderr
        assert "mml-000" not in load_dataset(tmp_path / "out").by_id()
        r = _cli("review", "serve", str(tmp_path / "ds"), "--port", "0")
        said = " ".join((r.stdout + r.stderr).split())
        assert r.returncode == 2 and f"{path} is read-only" in said, said
        assert sorted(p.name for p in (tmp_path / "ds").iterdir() if "review" in p.name) == [
            "review.sqlite"
        ]  # no -shm left beside it
    finally:
        (tmp_path / "ds").chmod(0o755)
        path.chmod(0o644)
    # a read-only -shm left beside a writable store: the error names the -shm
    shm = path.with_name("review.sqlite-shm")
    shm.write_bytes(b"")
    shm.chmod(0o444)
    r = _cli("review", "label-studio-import", str(tmp_path / "ds"), str(tmp_path / "x.json"))
    said = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 2 and f"{shm} is read-only" in said, said
