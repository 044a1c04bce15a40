"""``cartoqa report``: runs of oracle, random and a constant model over a dataset with every
kind of task, written as Markdown, one offline HTML page, CSV, JSON and plots; its numbers
checked against ``cartoqa score`` and its intervals against a bootstrap computed here."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.reports.collect import score_runs
from cartoqa.reports.tables import bootstrap, outcomes
from cartoqa.scoring import score_run
from cartoqa.stores import load_dataset
from cartoqa.tasks.spec import get_task
from tests.cartoqa.model_data import kinds_dataset

MODELS = ["oracle", "random", "constant:3"]


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    kinds_dataset(tmp / "ds", copies=4)
    runner = CliRunner()
    for m in MODELS:
        r = runner.invoke(app, ["run", str(tmp / "ds"), "-m", m, "--runs-dir", str(tmp / "runs")])
        assert r.exit_code == 0, r.output
    args = ["report", str(tmp / "ds"), "--runs-dir", str(tmp / "runs"), "-o", str(tmp / "rep")]
    r = runner.invoke(app, [*args, "--bootstrap", "300"])
    assert r.exit_code == 0, r.output
    return tmp, r.output


def test_every_output_is_written_and_the_html_opens_offline(reported):
    tmp, output = reported
    rep = tmp / "rep"
    for name in ("report.md", "report.html", "tables.csv", "tables.json"):
        assert (rep / name).stat().st_size > 500, name
    assert "report.html" in output
    page = (rep / "report.html").read_text(encoding="utf-8")
    srcs = re.findall(r"src='([^']*)'", page)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "http://" not in page and "https://" not in page and "<link" not in page
    assert "© OpenStreetMap contributors" in page
    plots = sorted(p.name for p in (rep / "plots").glob("*.png"))
    assert {"headlines.png", "stmf_count_predicted.png", "rle_predicted.png"} <= set(plots)
    assert "stmf_presence_predicted.png" not in plots  # yes/no answers: no scatter
    for p in (rep / "plots").glob("*.png"):
        lo, hi = Image.open(p).convert("L").getextrema()
        assert hi - lo > 100, p.name
    md = (rep / "report.md").read_text(encoding="utf-8")
    for p in plots:
        assert f"(plots/{p})" in md
    assert "## GPSBench tracks: accuracy" in md and "| oracle | 1.000 |" in md


def test_the_numbers_are_cartoqa_scores_and_every_task_and_model_is_there(reported):
    tmp, _ = reported
    ds = load_dataset(tmp / "ds")
    doc = json.loads((tmp / "rep" / "tables.json").read_text(encoding="utf-8"))
    tasks = {t["task"]: t for t in doc["tasks"]}
    assert set(tasks) == set(ds.manifest.counts)
    runs = score_runs(ds, tmp / "runs").runs
    for run in runs:
        responses = {k: r.response for k, r in run.records.items()}
        want = score_run(ds.samples, responses)  # scored again, here
        for task, entry in tasks.items():
            got = next(m for m in entry["models"] if m["model"] == run.model)
            for key, value in got["values"].items():
                row, _, metric = key.partition(" · ")
                w = want[task][row][metric]
                assert value == w or (np.isnan(w) and value is None), key  # strict JSON
    assert sorted(m["model"] for m in tasks["srn"]["models"]) == sorted(MODELS)


def test_unreadable_answers_are_counted_apart_from_wrong_ones(reported):
    tmp, _ = reported
    doc = json.loads((tmp / "rep" / "tables.json").read_text(encoding="utf-8"))
    srn = {
        m["model"]: m["outcomes"]
        for m in next(t for t in doc["tasks"] if t["task"] == "srn")["models"]
    }
    assert srn["constant:3"]["unreadable"] == 4 and srn["constant:3"]["wrong"] == 0
    assert srn["random"]["unreadable"] == 0 and srn["random"]["wrong"] == 4
    assert srn["oracle"]["right"] == 4
    for t in doc["tasks"]:
        for m in t["models"]:
            o = m["outcomes"]
            assert o["right"] + o["wrong"] + o["unreadable"] + o["unanswered"] == o["n"]


def test_the_intervals_are_a_seeded_bootstrap(reported):
    tmp, _ = reported
    ds = load_dataset(tmp / "ds")
    (run,) = [r for r in score_runs(ds, tmp / "runs").runs if r.model == "random"]
    rows = run.scored["mml"]
    lo, hi = bootstrap(rows, get_task("mml"), "all", "accuracy", n=300, seed=0)
    # the same resamples drawn here, the accuracy of each computed from the verdicts
    right = np.array([float(bool(s.correct)) for _, s in rows])
    rng = np.random.default_rng(0)
    means = [right[rng.integers(0, len(rows), len(rows))].mean() for _ in range(300)]
    assert (lo, hi) == tuple(np.percentile(means, [2.5, 97.5]))
    assert bootstrap(rows, get_task("mml"), "all", "accuracy", n=300, seed=0) == (lo, hi)
    table = list(csv.DictReader((tmp / "rep" / "tables.csv").open(encoding="utf-8")))
    got = next(r for r in table if r["task"] == "mml" and r["model"] == "random"
               and r["metric"] == "accuracy")  # fmt: skip
    assert (float(got["ci_low"]), float(got["ci_high"])) == (lo, hi)
    assert outcomes(rows)["n"] == 4


def test_published_numbers_are_labelled_as_another_datasets(reported, tmp_path):
    tmp, _ = reported
    md = (tmp / "rep" / "report.md").read_text(encoding="utf-8")
    assert "Published numbers: CartoMapQA paper" in md and "Another dataset's numbers" in md
    assert "| o3 | srn | SR2 | 0.338 |" in md
    args = ["report", str(tmp / "ds"), "--runs-dir", str(tmp / "runs"), "-o", str(tmp_path / "r")]
    r = CliRunner().invoke(app, [*args, "--no-references", "--bootstrap", "0", "-m", "oracle"])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "Published numbers" not in md and "random" not in md


def test_a_dataset_without_runs_is_named_with_the_fix(tmp_path):
    kinds_dataset(tmp_path / "ds")
    r = CliRunner().invoke(
        app,
        [
            "report",
            str(tmp_path / "ds"),
            "--runs-dir",
            str(tmp_path / "none"),
            "-o",
            str(tmp_path / "r"),
        ],
    )
    assert r.exit_code == 2 and "no readable run" in r.output and "cartoqa run" in r.output
