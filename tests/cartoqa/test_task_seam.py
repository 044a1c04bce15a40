"""A task defined here, on its own, goes through the registry to ``cartoqa tasks``, ``run``
with the oracle and random baselines, and ``score``, with no edit anywhere else (issue 14)."""

import json
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import CartoqaError
from cartoqa.records import Metadata, NumberTruth, Prompt, Provenance, Sample, SampleScore
from cartoqa.scoring import is_correct, score_run
from cartoqa.stores import DatasetWriter
from cartoqa.tasks.spec import TaskSpec, get_task, register_task, registered_tasks


def _count_score(sample: Sample, response: str | None) -> SampleScore:
    """The toy task's own scorer: the last whole number in the answer, exactly."""
    found = re.findall(r"-?\d+", response or "")
    if not found:
        return SampleScore(correct=False, why="no number")
    got = int(found[-1])
    ok = got == int(sample.ground_truth.value)
    return SampleScore(
        correct=ok,
        values={"error": float(abs(got - sample.ground_truth.value))},
        parsed=str(got),
        why=None if ok else "wrong",
    )


def _count_metrics(rows):
    return {
        "n": len(rows),
        "accuracy": sum(bool(s.correct) for _, s in rows) / len(rows),
        "mean error": sum(s.values.get("error", 10.0) for _, s in rows) / len(rows),
    }


TOY = TaskSpec(
    name="toy_marker_count",
    family="map",
    track="toy",
    description="how many markers does this map show?",
    truth_kinds=frozenset({"number"}),
    score=_count_score,
    reduce=_count_metrics,
    metrics=("accuracy", "mean error"),
    group_by=("zoom",),
    answer_format=lambda s: f"I count them.\nFINAL ANSWER: {int(s.ground_truth.value)}",
    answer_space={"low": 0, "high": 9},
)


@pytest.fixture(scope="module")
def toy_dataset(tmp_path_factory):
    register_task(TOY, replace=True)
    out = tmp_path_factory.mktemp("toy") / "ds"
    with DatasetWriter(out, name="toy") as w:
        for i in range(30):
            w.add(
                Sample(
                    id=f"toy-{i:03d}",
                    task="toy_marker_count",
                    prompt=Prompt(text="How many markers does this map show?"),
                    ground_truth=NumberTruth(value=i % 7),
                    metadata=Metadata(zoom=17 + i % 3),
                    provenance=Provenance(generator="tests.toy"),
                )
            )
        w.finish(attribution=["made up for a test"])
    return out


def test_the_toy_task_is_listed_and_scored_by_its_own_scorer(toy_dataset, tmp_path):
    r = CliRunner().invoke(app, ["tasks"])
    assert r.exit_code == 0 and "toy_marker_count" in r.output and "how many markers" in r.output
    runs = tmp_path / "runs"
    said = {}
    for model in ("oracle", "random"):
        r = CliRunner().invoke(
            app, ["run", str(toy_dataset), "-m", model, "--runs-dir", str(runs), "--no-progress"]
        )
        assert r.exit_code == 0, r.output
        said[model] = r.output
    assert "correct: 30/30" in said["oracle"]  # run's summary uses the toy's own scorer
    r = CliRunner().invoke(
        app, ["score", str(toy_dataset), "--runs-dir", str(runs), "--out", str(tmp_path / "s")]
    )
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "s" / "scores.json").read_text())
    by_model = {run["model"]: run["scores"]["toy_marker_count"] for run in data.values()}
    assert by_model["oracle"]["all"]["accuracy"] == 1.0
    assert by_model["oracle"]["all"]["mean error"] == 0.0
    assert {"zoom=17", "zoom=18", "zoom=19"} <= set(by_model["oracle"])
    # random draws from the spec's answer space, 0-9: right about one time in ten
    assert 0.0 <= by_model["random"]["all"]["accuracy"] <= 0.4
    assert by_model["random"]["all"]["mean error"] > 0


def test_run_and_score_give_one_verdict(toy_dataset):
    from cartoqa.stores import load_dataset

    ds = load_dataset(toy_dataset)
    answers = {
        s.id: f"FINAL ANSWER: {int(s.ground_truth.value) + (s.id.endswith('1'))}" for s in ds
    }
    table = score_run(ds.samples, answers)["toy_marker_count"]
    verdicts = [is_correct(s, answers[s.id]) for s in ds]
    assert table["all"]["accuracy"] == sum(verdicts) / len(verdicts) == 27 / 30


def test_a_second_spec_of_one_name_is_refused_and_names_must_be_plain():
    register_task(TOY, replace=True)
    with pytest.raises(CartoqaError, match="registered already"):
        register_task(TOY)
    with pytest.raises(CartoqaError, match="letters, digits and underscores"):
        register_task(TaskSpec(**{**TOY.__dict__, "name": "toy task"}))


def test_every_built_in_task_is_registered_with_its_own_scorer():
    specs = registered_tasks()
    assert {"srn", "rle", "mml", "distance", "polygon", "missing_data"} <= set(specs)
    assert get_task("srn").scorer("original") is not get_task("srn").scorer()
    assert {s.family for s in specs.values()} >= {"map", "gps"}
    for spec in specs.values():
        assert spec.description and spec.metrics and spec.truth_kinds, spec.name


def test_threads_looking_up_tasks_at_once_all_see_the_whole_registry():
    """The runner's workers look tasks up from several threads; while the first one loads
    the built-in modules, the others wait for all of them (a half-filled registry made the
    oracle write the generic answer form for the task registered last)."""
    code = """
import threading
from cartoqa.tasks.spec import get_task
names = ["mfs", "srn", "stmf_names", "distance"]
barrier = threading.Barrier(8)
seen = []
def look(i):
    barrier.wait()
    seen.append(get_task(names[i % len(names)]) is not None)
threads = [threading.Thread(target=look, args=(i,)) for i in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print(sum(seen), len(seen))
"""
    for _ in range(3):  # a fresh interpreter each time: the registry loads once a process
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split() == ["8", "8"], done.stdout
