"""A rebuild keeps the review store (issue 27, item 6): `cartoqa build DS --overwrite` deleted
DS/review.sqlite with 1,318 decisions although the new dataset was byte-identical.  The store
is carried into the new folder in the swap, every decision in it; a sample whose truth the
rebuild changed shows "truth changed" and its old decisions are not applied to the new truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from annotations.decisions import DecisionStore
from annotations.export import export_reviewed
from cartoqa.errors import ReviewError
from cartoqa.records import CountTruth
from cartoqa.stores import DatasetWriter, load_dataset
from tests.cartoqa.model_data import kinds_dataset

CARTOQA = Path(sys.executable).with_name("cartoqa")


def _build(out: Path, *extra: str) -> None:
    r = subprocess.run(
        [str(CARTOQA), "build", str(out), "--tasks", "distance", "--per-task", "10",
         "--no-progress", *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_rebuild_with_overwrite_keeps_every_one_of_1100_decisions(tmp_path):
    ds_path = tmp_path / "ds"
    _build(ds_path)
    ds = load_dataset(ds_path)
    path = ds_path / "review.sqlite"
    store = DecisionStore.open(path, ds)
    with store.transaction():
        for round_ in range(110):
            for s in ds.samples:
                verdict = ("accept", "reject")[round_ % 2]
                store.decide(
                    s, reviewer=f"r{round_ % 7}", verdict=verdict, seen=store.version(s.id),
                    reason="" if verdict == "accept" else "blank map",
                )  # fmt: skip
    before = [d.as_dict() for d in store.all()]
    assert len(before) == 1100
    # the review tool still open on the store while the dataset is rebuilt under it
    _build(ds_path, "--overwrite")
    left = [*tmp_path.glob(".ds.staging-*"), *tmp_path.glob(".ds.old-*")]
    assert not left, left  # nothing left over
    new = load_dataset(ds_path)
    assert new.manifest.samples_sha256 == ds.manifest.samples_sha256  # byte-identical
    with DecisionStore.open(path, new, read_only=True) as kept:
        assert [d.as_dict() for d in kept.all()] == before
        assert {kept.status(s.id) for s in new.samples} == {"rejected"}  # the last round
    # the old store object may not write to the copy the rebuild replaced
    with pytest.raises(ReviewError, match="rebuilt"):
        store.decide(ds.samples[0], reviewer="ana", verdict="reject", seen=110, reason="x")
    store.close()
    with DecisionStore.open(path, new) as again:
        assert len(again.all()) == 1100
        again.decide(new.samples[0], reviewer="ana", verdict="reject", seen=110, reason="x")
        assert again.version(new.samples[0].id) == 111


def test_a_changed_truth_shows_as_such_and_its_old_decisions_are_not_applied(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    by = ds.by_id()
    path = tmp_path / "ds" / "review.sqlite"
    with DecisionStore.open(path, ds) as store:
        store.decide(
            by["stmf_count-000"], reviewer="ana", verdict="correct", seen=0,
            truth=CountTruth(value=7, feature_type=by["stmf_count-000"].ground_truth.feature_type),
        )  # fmt: skip
        store.decide(by["rle-000"], reviewer="ana", verdict="reject", seen=0, reason="blank")
        store.decide(by["mml-000"], reviewer="bo", verdict="accept", seen=0)
        store.decide(by["srn-000"], reviewer="bo", verdict="reject", seen=0, reason="x")
    # the same dataset rebuilt: the count's generated truth is now 5, rle's 1234 m; the rest
    # as they were
    truth = by["stmf_count-000"].ground_truth
    changed = {
        "stmf_count-000": truth.model_copy(update={"value": 5}),
        "rle-000": by["rle-000"].ground_truth.model_copy(update={"value": 1234.0}),
    }
    with DatasetWriter(tmp_path / "ds", name=ds.manifest.name, overwrite=True) as w:
        for s in ds.samples:
            for r in s.prompt.images:
                w.add_image(r.split("/")[-1], ds.image_path(r).read_bytes())
            w.add(s.model_copy(update={"ground_truth": changed.get(s.id, s.ground_truth)}))
        w.finish(seeds=[0])
    new = load_dataset(tmp_path / "ds")
    assert new.manifest.samples_sha256 != ds.manifest.samples_sha256
    nby = new.by_id()
    with DecisionStore.open(path, new, read_only=True) as store:  # before anyone opened it
        assert store.status("stmf_count-000") == "truth changed"
        assert store.status("rle-000") == "truth changed"
        assert store.effective(nby["stmf_count-000"]).ground_truth.value == 5
        assert store.effective(nby["rle-000"]) is not None  # the rejection was of another truth
        assert store.status("mml-000") == "accepted" and store.status("srn-000") == "rejected"
        assert store.stats(s.id for s in new.samples)["truth changed"] == 2
        manifest = export_reviewed(new, store, tmp_path / "out")
    out = load_dataset(tmp_path / "out").by_id()
    assert out["stmf_count-000"].ground_truth.value == 5
    assert out["stmf_count-000"].metadata.model_extra["review_status"] == "truth changed"
    assert out["rle-000"].ground_truth.value == 1234.0 and "srn-000" not in out
    assert manifest.review["decisions"] == 4  # every decision kept, none applied wrongly
    with DecisionStore.open(path, new) as store:  # opened to write: the change is recorded
        assert len(store.all()) == 4
        v = store.version("stmf_count-000")
        assert v == 2 and store.status("stmf_count-000") == "truth changed"
        d = store.decide(nby["stmf_count-000"], reviewer="ana", verdict="accept", seen=v)
        assert d.truth_before["value"] == 5 and store.status("stmf_count-000") == "accepted"
        assert store.effective(nby["stmf_count-000"]).ground_truth.value == 5
        changes = store.truth_changes("stmf_count-000")
        assert [(c["version"], c["truth_before"]["value"], c["truth_after"]["value"])
                for c in changes] == [(2, truth.value, 5)]  # fmt: skip
    lines = (tmp_path / "out" / "review.jsonl").read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["sample_id"] == "stmf_count-000"
