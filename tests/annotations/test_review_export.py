"""A reviewed dataset (``annotations.export``, ``cartoqa review export``; issue 17, item 3):
the decisions applied, every one of them kept, and a dataset the other commands take."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from annotations.decisions import DecisionStore
from annotations.export import REVIEW_FILE, export_reviewed
from cartoqa.cli import app
from cartoqa.records import ChoiceTruth, CountTruth
from cartoqa.stores import load_dataset
from tests.cartoqa.model_data import kinds_dataset


def _reviewed(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=2)
    ds = load_dataset(tmp_path / "ds")
    store = DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds)
    by = ds.by_id()
    store.decide(by["stmf_count-000"], reviewer="ana", verdict="accept", seen=0)
    store.decide(
        by["stmf_count-001"],
        reviewer="ana",
        verdict="correct",
        truth=CountTruth(value=7, feature_type="bank"),
        seen=0,
        reason="wrong count",
    )
    store.decide(by["rle-000"], reviewer="bo", verdict="reject", seen=0, reason="image broken")
    fixed = ChoiceTruth(answer="A", options={"A": "bank", "B": "school", "C": "cafe", "D": "atm"})
    store.decide(by["mfs-001"], reviewer="bo", verdict="correct", truth=fixed, seen=0)
    store.decide(by["mfs-001"], reviewer="ana", verdict="accept", seen=1)
    return ds, store


def test_the_export_applies_every_decision_and_keeps_them_all(tmp_path):
    ds, store = _reviewed(tmp_path)
    manifest = export_reviewed(ds, store, tmp_path / "out")
    out = load_dataset(tmp_path / "out", verify_images=True)  # a dataset like any other
    got = out.by_id()
    assert "rle-000" not in got and len(out) == len(ds) - 1
    assert got["stmf_count-001"].ground_truth.value == 7
    assert got["mfs-001"].ground_truth.answer == "A"
    for sid, s in ds.by_id().items():
        if sid in ("rle-000", "stmf_count-001", "mfs-001"):
            continue
        assert got[sid].ground_truth == s.ground_truth and got[sid].prompt == s.prompt
    md = {sid: s.metadata.model_extra for sid, s in got.items()}
    assert md["stmf_count-000"]["review_status"] == "accepted"
    assert md["stmf_count-001"]["review_status"] == "corrected"
    assert md["mfs-001"]["reviewed_by"] == "ana,bo"
    assert md["srn-000"]["review_status"] == "unreviewed"
    # the decisions file is the store's decisions, exactly
    lines = (tmp_path / "out" / REVIEW_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == [d.as_dict() for d in store.all()]
    r = manifest.review
    assert (r["samples"], r["exported"], r["decisions"]) == (len(ds), len(ds) - 1, 5)
    assert (r["accepted"], r["corrected"], r["rejected"]) == (2, 1, 1)
    assert r["source"]["samples_sha256"] == ds.manifest.samples_sha256
    assert out.manifest.attribution == ds.manifest.attribution


def test_only_reviewed_writes_the_verified_set(tmp_path):
    ds, store = _reviewed(tmp_path)
    export_reviewed(ds, store, tmp_path / "out", only_reviewed=True)
    out = load_dataset(tmp_path / "out")
    assert sorted(s.id for s in out) == ["mfs-001", "stmf_count-000", "stmf_count-001"]


def test_the_command_exports_and_the_result_runs_and_scores(tmp_path):
    _reviewed(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["review", "export", str(tmp_path / "ds"), str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "rejected 1" in " ".join(result.output.split())
    runs = str(tmp_path / "runs")
    result = runner.invoke(app, ["run", str(tmp_path / "out"), "-m", "oracle", "--runs-dir", runs])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["score", str(tmp_path / "out"), "--runs-dir", runs])
    assert result.exit_code == 0, result.output
    # a dataset with no review store is told so
    kinds_dataset(tmp_path / "other", copies=1)
    result = runner.invoke(
        app, ["review", "export", str(tmp_path / "other"), str(tmp_path / "out2")]
    )
    assert result.exit_code == 2 and "no review store" in result.output


def test_the_command_refuses_an_out_that_is_holds_or_is_inside_the_dataset(tmp_path):
    """Issue 26, 15: `review export DS DS --overwrite` deleted the decision store."""
    _, store = _reviewed(tmp_path)
    store.close()
    folder = tmp_path / "ds"

    def files():  # the -wal and -shm a reader may leave are SQLite's, not the dataset's
        return {
            p.name: p.read_bytes()
            for p in folder.iterdir()
            if p.is_file() and not p.name.endswith(("-wal", "-shm"))
        }

    before = files()
    runner = CliRunner()
    for out in (folder, tmp_path, folder / "images", folder / "inside"):
        result = runner.invoke(
            app, ["review", "export", str(folder), str(out), "--overwrite"], catch_exceptions=False
        )
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and "overlap" in said, (out, result.output)
    assert files() == before
    assert not (folder / "inside").exists()
    with DecisionStore.open(folder / "review.sqlite", load_dataset(folder)) as again:
        assert len(again.all()) == 5
    # another folder holding a review store is someone's reviewed dataset, not an export
    kinds_dataset(tmp_path / "victim", copies=1)
    (tmp_path / "victim" / "review.sqlite").write_bytes(b"their decisions")
    result = runner.invoke(
        app, ["review", "export", str(folder), str(tmp_path / "victim"), "--overwrite"]
    )
    assert result.exit_code == 2 and "review store" in result.output, result.output
    assert (tmp_path / "victim" / "review.sqlite").read_bytes() == b"their decisions"


def test_a_variants_copy_follows_its_base_unless_judged_itself(tmp_path):
    """Paired variants (issue 32): a copy nobody decided on that kept its base's truth is
    corrected, rejected or accepted with its base; one with decisions of its own keeps
    them."""
    from tests.cartoqa.variant_data import variant_dataset

    ds = variant_dataset(tmp_path / "ds")
    by = ds.by_id()
    store = DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds)
    store.decide(
        by["stmf_count-0001"],
        reviewer="ana",
        verdict="correct",
        truth=CountTruth(value=5, feature_type="bank"),
        seen=0,
    )
    store.decide(by["stmf_count-0002"], reviewer="ana", verdict="reject", seen=0, reason="x")
    # the greyscale copy of the first view is judged on its own: accepted as generated
    store.decide(by["stmf_count-0001@greyscale"], reviewer="bo", verdict="accept", seen=0)
    export_reviewed(ds, store, tmp_path / "out")
    got = load_dataset(tmp_path / "out").by_id()
    assert got["stmf_count-0001"].ground_truth.value == 5
    assert got["stmf_count-0001@text"].ground_truth.value == 5
    assert got["stmf_count-0001@nolabels"].ground_truth.value == 5
    assert got["stmf_count-0001@text"].metadata.model_extra["review_status"] == "corrected"
    assert got["stmf_count-0001@text"].metadata.model_extra["reviewed_by"] == "ana"
    assert got["stmf_count-0001@greyscale"].ground_truth.value == 2  # its own decision
    assert not [sid for sid in got if sid.startswith("stmf_count-0002")]
    assert got["stmf_names-0001@nolabels"].metadata.model_extra["review_status"] == "unreviewed"


def test_a_copy_whose_truth_was_recomputed_is_judged_by_its_own(tmp_path):
    from annotations.export import _judged_by
    from tests.cartoqa.variant_data import variant_dataset

    ds = variant_dataset(tmp_path / "ds")
    by = ds.by_id()
    store = DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds)
    copy = by["stmf_count-0001@nolabels"]
    recounted = copy.model_copy(update={"ground_truth": CountTruth(value=9, feature_type="bank")})
    assert _judged_by(copy, by, store) is by["stmf_count-0001"]
    assert _judged_by(recounted, by, store) is recounted
