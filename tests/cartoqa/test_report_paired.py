"""``cartoqa report`` on a dataset with paired variants: each variant's score against its
base's on the same questions, the paired difference with a paired bootstrap interval, one
sentence a line, the unanswerable items apart, and one plot.

The dataset is written here by the dataset writer: four RLE and four MML questions, each
with a text-only copy ("@text") and a copy without labels ("@nolabels"); the MML copies
without labels are flagged unanswerable (the answer is the roads' names), all but one.  Two
"models" answer from run stores written here, so every number is known by hand:

- alpha: right on every base question, wrong on every text copy (MML: other roads; RLE:
  twice the length), right on the RLE copies without labels, and it still names the right
  roads on the unanswerable MML copies (a guess, or a memory);
- beta: MML base right on questions 0 and 1, text right on 1 and 2 (paired differences
  -1, 0, +1, 0: an interval around 0); RLE always 10 % long on the base, 30 % long on
  text; "I cannot read the map" on every copy without labels.
"""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.records import (
    Metadata,
    NumberTruth,
    Prompt,
    Provenance,
    RoadPairTruth,
    RunRecord,
    Sample,
)
from cartoqa.reports.collect import score_runs
from cartoqa.reports.paired import paired_bootstrap, paired_lines
from cartoqa.stores import DatasetWriter, RunStore, load_dataset
from cartoqa.tasks.spec import get_task
from tests.cartoqa.model_data import kinds_dataset, png

PROV = Provenance(generator="tests", seed=0)
LENGTHS = [400.0, 800.0, 1200.0, 1600.0]
ROADS = [("Rue A", "Rue B"), ("Rue C", "Rue D"), ("Rue E", "Rue F"), ("Rue G", "Rue H")]


def _sample(sid, task, truth, images, meta):
    return Sample(
        id=sid,
        task=task,
        prompt=Prompt(text=f"[{sid}] question", images=images),
        ground_truth=truth,
        metadata=Metadata(**meta),
        provenance=PROV,
    )


def paired_dataset(folder):
    """Four RLE and four MML bases with their @text and @nolabels copies (module
    docstring); the last MML copy without labels stays answerable."""
    with DatasetWriter(folder, name="paired", overwrite=True) as w:
        for i in range(4):
            for task, truth, meta in (
                ("rle", NumberTruth(value=LENGTHS[i], unit="m"), {"unit": "m"}),
                ("mml", RoadPairTruth(road_1=ROADS[i][0], road_2=ROADS[i][1]), {}),
            ):
                sid = f"{task}-{i:03d}"
                img = w.add_image(f"{sid}.png", png(i))
                plain = w.add_image(f"{sid}@nolabels.png", png(i + 20))
                w.add(_sample(sid, task, truth, [img], meta))
                w.add(
                    _sample(f"{sid}@text", task, truth, [], meta | {"variant": "text", "base": sid})
                )
                nolabels = meta | {"variant": "nolabels", "base": sid}
                if task == "mml" and i < 3:
                    nolabels["answerable"] = False
                w.add(_sample(f"{sid}@nolabels", task, truth, [plain], nolabels))
        w.finish(seeds=[0])
    return load_dataset(folder)


def _roads(i: int) -> str:
    return f"{ROADS[i][0]} and {ROADS[i][1]}"


def answers(model: str) -> dict[str, str]:
    """Each model's answer to each sample id (module docstring)."""
    out = {}
    for i in range(4):
        length = LENGTHS[i]
        if model == "alpha":
            out[f"rle-{i:03d}"] = f"{length:g} m"
            out[f"rle-{i:03d}@text"] = f"{2 * length:g} m"
            out[f"rle-{i:03d}@nolabels"] = f"{length:g} m"
            out[f"mml-{i:03d}"] = _roads(i)
            out[f"mml-{i:03d}@text"] = _roads((i + 1) % 4)
            out[f"mml-{i:03d}@nolabels"] = _roads(i)
        else:
            out[f"rle-{i:03d}"] = f"{1.1 * length:g} m"
            out[f"rle-{i:03d}@text"] = f"{1.3 * length:g} m"
            out[f"rle-{i:03d}@nolabels"] = "I cannot read the map."
            out[f"mml-{i:03d}"] = _roads(i if i in (0, 1) else (i + 1) % 4)
            out[f"mml-{i:03d}@text"] = _roads(i if i in (1, 2) else (i + 1) % 4)
            out[f"mml-{i:03d}@nolabels"] = "I cannot read the map."
    return out


def write_runs(ds, runs_dir, models=("alpha", "beta")) -> None:
    for model in models:
        store = RunStore.open(
            runs_dir,
            dataset_name=ds.manifest.name,
            dataset_sha256=ds.manifest.samples_sha256,
            model=model,
        )
        for sid, text in answers(model).items():
            store.append(RunRecord(sample_id=sid, model=model, response=text, latency_s=0.1))
        store.close()


BOOT = 400


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paired")
    ds = paired_dataset(tmp / "ds")
    write_runs(ds, tmp / "runs")
    args = ["report", str(tmp / "ds"), "--runs-dir", str(tmp / "runs"), "-o", str(tmp / "rep")]
    r = CliRunner().invoke(app, [*args, "--bootstrap", str(BOOT), "--seed", "3"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp / "rep" / "tables.json").read_text(encoding="utf-8"))
    lines = {(x["key"], x["model"]): x for x in doc["paired"]}
    return tmp, ds, doc, lines


def test_runs_are_read_by_score_key_and_every_table_looks_up_its_task(reported):
    tmp, ds, doc, _ = reported
    for _ in range(2):  # scored afresh, then read back from the scores stored by task
        (run, *_) = score_runs(ds, tmp / "runs").runs
        assert set(run.scored) == {
            "rle", "rle@text", "rle@nolabels",
            "mml", "mml@text", "mml@nolabels", "mml@nolabels/unanswerable",
        }  # fmt: skip
        assert [s.id for s, _ in run.scored["mml@nolabels/unanswerable"]] == [
            "mml-000@nolabels", "mml-001@nolabels", "mml-002@nolabels",
        ]  # fmt: skip
        assert [s.id for s, _ in run.scored["mml"]] == [f"mml-{i:03d}" for i in range(4)]
    tasks = {t["task"]: t for t in doc["tasks"]}
    assert list(tasks) == [
        "mml", "mml@text", "mml@nolabels", "mml@nolabels/unanswerable",
        "rle", "rle@text", "rle@nolabels",
    ]  # fmt: skip
    assert tasks["rle@text"]["headline"] == [["all m", "mape"]]  # RLE's headline, per unit
    assert tasks["mml@text"]["headline"] == [["all", "accuracy"]]
    assert tasks["rle@text"]["family"] == "map" and tasks["rle@text"]["track"] == "cartomapqa"
    alpha = {m["model"]: m for m in tasks["mml"]["models"]}["alpha"]
    assert alpha["values"]["all · accuracy"] == 1.0 and alpha["outcomes"]["n"] == 4
    alpha = {m["model"]: m for m in tasks["mml@text"]["models"]}["alpha"]
    assert alpha["values"]["all · accuracy"] == 0.0
    # every plot's file name is safe; the per-task plots are the tasks' own samples'
    plots = sorted(p.name for p in (tmp / "rep" / "plots").iterdir())
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+\.png", p) for p in plots), plots
    assert "paired.png" in plots and "rle_predicted.png" in plots
    assert not [p for p in plots if "text" in p or "nolabels" in p]
    md = (tmp / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## mml@nolabels/unanswerable (map, cartomapqa)" in md
    assert "unanswerable by design" in md.split("## mml@nolabels/unanswerable")[1].split("##")[0]


def test_a_model_right_on_the_image_and_wrong_on_the_text_drops_by_one(reported):
    _, _, _, lines = reported
    mml = lines["mml@text", "alpha"]
    assert (mml["n"], mml["base"], mml["score"], mml["difference"]) == (4, 1.0, 0.0, -1.0)
    assert mml["interval"] == [-1.0, -1.0] and mml["excludes_zero"] is True
    assert mml["lower_is_better"] is False
    assert mml["sentence"] == (
        "mml: text-only accuracy is lower (worse) than image accuracy for alpha: 0.000 against "
        "1.000 on 4 pairs, the 95 % interval of the difference (-1.000 to -1.000) excludes 0"
    )
    # RLE: MAPE 0 on the image, 1 (twice the length) on text; lower is better: "worse"
    rle = lines["rle@text", "alpha"]
    assert (rle["row"], rle["metric"], rle["lower_is_better"]) == ("all m", "mape", True)
    assert (rle["base"], rle["score"], rle["difference"], rle["interval"]) == (0, 1, 1, [1, 1])
    assert rle["sentence"].startswith(
        "rle: text-only mape (all m) is higher (worse) than image mape (all m) for alpha: 1.000 "
        "against 0.000 on 4 pairs, the 95 % interval of the difference (1.000 to 1.000) "
        "excludes 0"
    )


def test_equal_pairs_give_a_point_interval_at_zero_and_no_difference_shown(reported):
    _, _, _, lines = reported
    same = lines["rle@nolabels", "alpha"]
    assert (same["n"], same["base"], same["score"]) == (4, 0.0, 0.0)
    assert same["difference"] == 0.0 and same["interval"] == [0.0, 0.0]
    assert same["excludes_zero"] is False
    assert same["sentence"].endswith(
        "the 95 % interval of the difference (0.000 to 0.000) includes 0: no difference shown"
    )
    # beta is 10 % long on every image and 30 % on every text: each pair differs by 0.2
    beta = lines["rle@text", "beta"]
    assert beta["difference"] == pytest.approx(0.2)
    assert beta["interval"] == pytest.approx([0.2, 0.2]) and beta["excludes_zero"] is True
    assert "is higher (worse) than image" in beta["sentence"]


def test_the_paired_interval_is_the_bootstrap_of_the_pairs_differences(reported):
    tmp, ds, _, lines = reported
    line = lines["mml@text", "beta"]
    assert (line["base"], line["score"], line["difference"]) == (0.5, 0.5, 0.0)
    # per pair: base right on 0 and 1, text right on 1 and 2
    diffs = np.array([0 - 1, 1 - 1, 1 - 0, 0 - 0], dtype=float)
    rng = np.random.default_rng(3)
    means = [diffs[rng.integers(0, 4, 4)].mean() for _ in range(BOOT)]
    want = list(np.percentile(means, [2.5, 97.5]))
    assert line["interval"] == pytest.approx(want) and want[0] < 0 < want[1]
    assert line["excludes_zero"] is False
    assert line["sentence"] == (
        "mml: text-only accuracy (0.500) and image accuracy (0.500) for beta, on 4 pairs: the 95 % "
        f"interval of the difference ({want[0]:.3f} to {want[1]:.3f}) includes 0: no "
        "difference shown"
    )
    # the function itself, on the scored pairs, with the same seed: the same interval
    (beta,) = [r for r in score_runs(ds, tmp / "runs").runs if r.model == "beta"]
    base = {s.id: (s, sc) for s, sc in beta.scored["mml"]}
    pairs = [(base[s.id.split("@")[0]], (s, sc)) for s, sc in beta.scored["mml@text"]]
    got = paired_bootstrap(pairs, get_task("mml"), "all", "accuracy", n=BOOT, seed=3)
    assert list(got) == want
    one = paired_bootstrap(pairs[:1], get_task("mml"), "all", "accuracy", n=BOOT)
    assert all(np.isnan(one))  # one pair: no interval


def test_unanswerable_items_get_their_own_line_and_stay_out_of_the_variants_score(reported):
    _, _, _, lines = reported
    flagged = lines["mml@nolabels/unanswerable", "alpha"]
    assert flagged["unanswerable"] is True and flagged["n"] == 3
    assert flagged["score"] == 1.0 and flagged["base"] == 1.0  # alpha "names" them anyway
    assert flagged["difference"] is None and flagged["interval"] == [None, None]
    assert "unanswerable by design" in flagged["sentence"]
    assert lines["mml@nolabels/unanswerable", "beta"]["score"] == 0.0
    # the one answerable copy without labels is the variant's whole score: one pair
    kept = lines["mml@nolabels", "alpha"]
    assert (kept["n"], kept["unanswerable"], kept["score"], kept["difference"]) == (
        1, False, 1.0, 0.0,
    )  # fmt: skip
    assert kept["excludes_zero"] is None
    assert "no interval (fewer than two pairs)" in kept["sentence"]
    # beta read nothing without labels: its RLE MAPE there is not defined
    assert "cannot be compared" in lines["rle@nolabels", "beta"]["sentence"]


def test_the_paired_section_table_csv_and_plot(reported):
    tmp, _, doc, _ = reported
    rep = tmp / "rep"
    md = (rep / "report.md").read_text(encoding="utf-8")
    section = md.split("## Paired variants")[1].split("\n## ")[0]
    assert (
        "| mml | text | alpha | accuracy (higher is better) | 4 | 1.000 | 0.000 | "
        "-1.000 [-1.000, -1.000] |" in section
    )
    assert "| mml | nolabels (unanswerable by design) | alpha |" in section
    assert "| rle | text | alpha | mape (all m) (lower is better) | 4 |" in section
    for x in doc["paired"]:
        assert f"- {x['sentence']}" in section
    page = (rep / "report.html").read_text(encoding="utf-8")
    assert "<h2 id='paired-variants'>Paired variants</h2>" in page
    assert "text-only accuracy is lower (worse) than image accuracy for alpha" in page
    rows = list(csv.DictReader((rep / "tables.csv").open(encoding="utf-8")))
    diff = next(r for r in rows if r["task"] == "mml@text" and r["model"] == "alpha"
                and r["row"] == "paired: difference")  # fmt: skip
    assert (float(diff["value"]), float(diff["ci_low"]), float(diff["ci_high"])) == (-1, -1, -1)
    assert any(r["task"] == "mml@nolabels/unanswerable" and r["row"] == "unanswerable: pairs"
               and r["value"] == "3" for r in rows)  # fmt: skip
    assert not any(r["task"] == "mml@nolabels/unanswerable" and "difference" in r["row"]
                   for r in rows)  # fmt: skip
    assert "plots/paired.png" in doc["plots"] and "(plots/paired.png)" in md
    img = Image.open(rep / "plots" / "paired.png").convert("L")
    lo, hi = img.getextrema()
    assert hi - lo > 100 and img.size[1] > 300  # drawn, one panel per task


def test_a_dataset_without_variants_has_no_paired_section(tmp_path):
    ds = kinds_dataset(tmp_path / "ds")
    r = CliRunner().invoke(
        app, ["run", str(tmp_path / "ds"), "-m", "oracle", "--runs-dir", str(tmp_path / "runs")]
    )
    assert r.exit_code == 0, r.output
    args = ["report", str(tmp_path / "ds"), "--runs-dir", str(tmp_path / "runs")]
    r = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "rep"), "--bootstrap", "20"])
    assert r.exit_code == 0, r.output
    rep = tmp_path / "rep"
    assert "Paired variants" not in (rep / "report.md").read_text(encoding="utf-8")
    assert "paired-variants" not in (rep / "report.html").read_text(encoding="utf-8")
    doc = json.loads((rep / "tables.json").read_text(encoding="utf-8"))
    assert "paired" not in doc and not (rep / "plots" / "paired.png").exists()
    assert "paired:" not in (rep / "tables.csv").read_text(encoding="utf-8")
    assert paired_lines(score_runs(ds, tmp_path / "runs").runs) == []
