"""People in a report: Fleiss' kappa, pairwise agreement within tolerance, the pooled
people score and the items people dispute, read from real run stores of "human:NAME".

The dataset: three MML questions (road pairs: categorical) and three RLE questions (a
length with a 5 % tolerance: numbers).  Three people answer from run stores written here:

- alice: right everywhere;
- bob: MML right on 0 and 1, on 2 names other roads (those of question 0); RLE 2 % long;
- carol: MML right on 0, on 1 and 2 names question 0's roads; RLE right on 0 and 1,
  twice the length on 2.

So MML item 2 is disputed (bob and carol wrong, 2 of 3), item 1 is not (1 of 3); RLE item
2 is not (1 of 3).  A model run ("oracle-ish" alpha) is there too and is no person.
"""

from __future__ import annotations

import json
from itertools import combinations

import pytest
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
from cartoqa.records.truths import Tolerance
from cartoqa.reports.collect import score_runs
from cartoqa.reports.people import (
    disputed_ids,
    fleiss_kappa,
    pairwise_agreement,
    people_summary,
)
from cartoqa.stores import DatasetWriter, RunStore, load_dataset
from tests.cartoqa.model_data import png

PROV = Provenance(generator="tests", seed=0)
LENGTHS = [400.0, 800.0, 1200.0]
ROADS = [("Rue A", "Rue B"), ("Rue C", "Rue D"), ("Rue E", "Rue F")]

# Fleiss (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters,
# 5 categories; P̄ = 0.378, P_e = 0.213, kappa = 0.210.
TEXTBOOK = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def kappa_by_pairs(labels: list[list[str]]) -> float:
    """An independent kappa: each item's labels compared pair by pair (observed agreement
    the mean over items of agreeing pairs / pairs), chance from the pooled label shares."""
    observed = []
    pooled: dict[str, int] = {}
    for item in labels:
        pairs = list(combinations(item, 2))
        observed.append(sum(a == b for a, b in pairs) / len(pairs))
        for x in item:
            pooled[x] = pooled.get(x, 0) + 1
    total = sum(pooled.values())
    chance = sum((v / total) ** 2 for v in pooled.values())
    return (sum(observed) / len(observed) - chance) / (1 - chance)


def test_fleiss_kappa_matches_the_textbook_example():
    assert fleiss_kappa(TEXTBOOK) == pytest.approx(0.2099, abs=5e-4)


def test_fleiss_kappa_matches_an_independent_implementation_with_uneven_raters():
    labels = [["a", "a", "b"], ["a", "a"], ["b", "b", "b", "a"], ["c", "a"], ["c", "c", "c"]]
    cats = sorted({x for item in labels for x in item})
    counts = [[item.count(c) for c in cats] for item in labels]
    assert fleiss_kappa(counts) == pytest.approx(kappa_by_pairs(labels), abs=1e-12)
    textbook_labels = [[str(j) for j, n in enumerate(r) for _ in range(n)] for r in TEXTBOOK]
    assert fleiss_kappa(TEXTBOOK) == pytest.approx(kappa_by_pairs(textbook_labels), abs=1e-12)


def test_fleiss_kappa_perfect_chance_and_undefined():
    assert fleiss_kappa([[2, 0], [0, 2]]) == pytest.approx(1.0)
    assert fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)  # always split
    assert fleiss_kappa([[3, 0], [2, 0]]) != fleiss_kappa([[3, 0], [2, 0]])  # nan: one category
    assert fleiss_kappa([[1, 0]]) != fleiss_kappa([[1, 0]])  # nan: no item with two raters


def test_pairwise_agreement_counts_pairs_and_unreadable_never_agrees():
    close = Tolerance(rel=0.05).allows
    share, pairs = pairwise_agreement([[100.0, 104.0, 120.0], [50.0, None]], close)
    assert pairs == 4  # three pairs on the first item, one on the second
    assert share == pytest.approx(1 / 4)  # only 100 and 104


def _sample(sid, task, truth, images, meta):
    return Sample(
        id=sid,
        task=task,
        prompt=Prompt(text=f"[{sid}] question", images=images),
        ground_truth=truth,
        metadata=Metadata(**meta),
        provenance=PROV,
    )


def people_dataset(folder):
    with DatasetWriter(folder, name="crowd", overwrite=True) as w:
        for i in range(3):
            truth = NumberTruth(value=LENGTHS[i], unit="m", tolerance=Tolerance(rel=0.05))
            img = w.add_image(f"rle-{i}.png", png(i))
            w.add(_sample(f"rle-{i:03d}", "rle", truth, [img], {"unit": "m"}))
            img = w.add_image(f"mml-{i}.png", png(i + 10))
            road = RoadPairTruth(road_1=ROADS[i][0], road_2=ROADS[i][1])
            w.add(_sample(f"mml-{i:03d}", "mml", road, [img], {}))
        w.finish(seeds=[0])
    return load_dataset(folder)


def _roads(i: int) -> str:
    return f"{ROADS[i][0]} and {ROADS[i][1]}"


ANSWERS = {
    "human:alice": {"mml": [0, 1, 2], "rle": [1.0, 1.0, 1.0]},
    "human:bob": {"mml": [0, 1, 0], "rle": [1.02, 1.02, 1.02]},
    "human:carol": {"mml": [0, 0, 0], "rle": [1.0, 1.0, 2.0]},
    "alpha": {"mml": [0, 0, 0], "rle": [3.0, 3.0, 3.0]},  # a model, not a person
}


def write_runs(ds, runs_dir, models=tuple(ANSWERS)) -> None:
    for model in models:
        store = RunStore.open(
            runs_dir,
            dataset_name=ds.manifest.name,
            dataset_sha256=ds.manifest.samples_sha256,
            model=model,
        )
        for i in range(3):
            a = ANSWERS[model]
            store.append(RunRecord(sample_id=f"mml-{i:03d}", model=model,
                                   response=_roads(a["mml"][i]), latency_s=3.0))  # fmt: skip
            text = f"{LENGTHS[i] * a['rle'][i]:g} m"
            store.append(RunRecord(sample_id=f"rle-{i:03d}", model=model, response=text,
                                   latency_s=3.0))  # fmt: skip
        store.close()


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("people")
    ds = people_dataset(tmp / "ds")
    write_runs(ds, tmp / "runs")
    return tmp, ds, score_runs(ds, tmp / "runs").runs


def test_agreement_pooled_score_and_disputed_items(scored):
    _, _, runs = scored
    summary = people_summary(runs, n_boot=200, seed=1)
    assert summary is not None
    tasks = {t.task: t for t in summary.tasks}
    mml, rle = tasks["mml"], tasks["rle"]
    assert mml.people == {"human:alice": 3, "human:bob": 3, "human:carol": 3}
    assert mml.measure == "fleiss kappa" and mml.overlap == 3
    # categories: every right answer one ("t"), a wrong one its roads' words ("ab"); item
    # 0: t t t; item 1: t t ab; item 2: t ab ab
    labels = [["t"] * 3, ["t", "t", "ab"], ["t", "ab", "ab"]]
    assert mml.agreement == pytest.approx(kappa_by_pairs(labels))
    assert mml.pooled == pytest.approx(6 / 9)  # 3 + 2 + 1 right of 9 answers
    lo, hi = mml.interval
    assert lo <= mml.pooled <= hi and lo < hi
    assert rle.measure == "pairwise agreement" and rle.overlap == 3
    # pairs within 5 %: items 0 and 1 all three pairs; item 2 only alice-bob
    assert rle.agreement == pytest.approx(7 / 9)
    assert [(d.task, d.sample_id) for d in summary.disputed] == [("mml", "mml-002")]
    d = summary.disputed[0]
    assert d.wrong == 2 and d.answers["human:bob"] == _roads(0)
    assert "Rue E" in d.truth and "Rue F" in d.truth
    assert disputed_ids(runs) == {"mml-002"}


def test_a_sitting_that_answered_part_of_the_dataset_counts_only_its_answers(tmp_path):
    """``cartoqa answer --n`` answers part of a dataset: the questions a person left are
    neither their answers nor an error (an outside check crashed the report on them)."""
    ds = people_dataset(tmp_path / "ds")
    write_runs(ds, tmp_path / "runs")
    store = RunStore.open(
        tmp_path / "runs",
        dataset_name=ds.manifest.name,
        dataset_sha256=ds.manifest.samples_sha256,
        model="human:dan",
    )
    store.append(RunRecord(sample_id="mml-002", model="human:dan", response=_roads(0)))
    store.close()
    summary = people_summary(score_runs(ds, tmp_path / "runs").runs, n_boot=50)
    assert summary is not None
    tasks = {t.task: t for t in summary.tasks}
    assert tasks["mml"].people["human:dan"] == 1 and "human:dan" not in tasks["rle"].people
    assert tasks["mml"].answers == 10 and tasks["rle"].answers == 9
    (d,) = summary.disputed
    assert d.sample_id == "mml-002" and d.wrong == 3 and d.answers["human:dan"] == _roads(0)


def test_no_people_no_summary_and_one_person_is_not_enough_overlap(scored):
    _, _, runs = scored
    models = [r for r in runs if not r.model.startswith("human:")]
    assert people_summary(models) is None and disputed_ids(models) == set()
    alice = [r for r in runs if r.model in ("alpha", "human:alice")]
    summary = people_summary(alice, n_boot=50)
    assert summary is not None
    assert {t.measure for t in summary.tasks} == {"not enough overlap"}
    assert summary.disputed == []


def _report(tmp, out, *extra):
    args = ["report", str(tmp / "ds"), "--runs-dir", str(tmp / "runs"), "-o", str(out)]
    r = CliRunner().invoke(app, [*args, "--bootstrap", "100", *extra])
    assert r.exit_code == 0, r.output
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


def test_the_people_section_in_every_format(scored):
    tmp, _, _ = scored
    files = _report(tmp, tmp / "rep")
    md = files["report.md"].decode()
    assert "## People" in md
    people_part = md.split("## People", 1)[1]
    assert "fleiss kappa" in people_part and "pairwise agreement" in people_part
    assert "human:alice (3), human:bob (3), human:carol (3)" in people_part
    assert "disputed: mml mml-002" in people_part and "rle-002" not in people_part
    assert "cartoqa review DATASET --runs-dir RUNS" in people_part
    assert "disputed by people" in people_part
    assert "| mml | human:alice (3), human:bob (3), human:carol (3) | accuracy | 0.667 [" in md
    assert "| 9 | 0.000 | fleiss kappa | 3 |" in md  # no "-0.000" from rounding
    html = files["report.html"].decode()
    assert "<h2 id='people'>People</h2>" in html
    assert "disputed: mml mml-002" in html and "&#x27;Rue A and Rue B&#x27;" in html
    doc = json.loads(files["tables.json"])
    people = {t["task"]: t for t in doc["people"]["tasks"]}
    assert people["mml"]["measure"] == "fleiss kappa" and people["mml"]["overlap_items"] == 3
    assert people["mml"]["pooled"] == pytest.approx(6 / 9)
    assert people["rle"]["agreement"] == pytest.approx(7 / 9)
    assert [d["sample_id"] for d in doc["people"]["disputed"]] == ["mml-002"]
    assert doc["people"]["disputed"][0]["answers"]["human:carol"] == _roads(0)
    rows = [r for r in files["tables.csv"].decode().splitlines() if ",people," in r]
    assert "mml,people,people: pooled,accuracy,0.6666666666666666" in rows[0]
    assert any(r.startswith("mml,people,people: disputed mml-002,wrong,2") for r in rows)
    # each person keeps a row as a model does, beside the models
    mml = {m["model"] for t in doc["tasks"] if t["task"] == "mml" for m in t["models"]}
    assert mml == {"alpha", "human:alice", "human:bob", "human:carol"}


def test_a_report_without_human_runs_is_unchanged(tmp_path):
    """Only a model's run: no People section, and the bytes the renderer gives without
    the people argument at all (the report as it was before people were counted)."""
    ds = people_dataset(tmp_path / "ds")
    write_runs(ds, tmp_path / "runs", models=("alpha",))
    files = _report(tmp_path, tmp_path / "rep")
    assert b"## People" not in files["report.md"] and b'"people"' not in files["tables.json"]
    assert b",people," not in files["tables.csv"] and b">People<" not in files["report.html"]
    from cartoqa.reports import task_reports
    from cartoqa.reports.render import render_outputs

    runs = score_runs(ds, tmp_path / "runs").runs
    doc = json.loads(files["tables.json"])
    rendered = render_outputs(
        title=doc["title"],
        reports=task_reports(runs, n_boot=100, seed=0),
        usage=doc["usage"],
        references=doc["references"],
        plots={},
        credits=doc["attribution"],
        extra={k: doc[k] for k in ("datasets", "runs", "bootstrap", "gps")},
    )
    assert rendered["tables.csv"] == files["tables.csv"]
    assert json.loads(rendered["tables.json"])["tasks"] == doc["tasks"]
    again = _report(tmp_path, tmp_path / "rep2")
    assert again == files
