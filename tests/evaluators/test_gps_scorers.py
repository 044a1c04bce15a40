"""The GPS scorers are named by what they read, not by task (issue 29): any task may use one,
a task with truths of several kinds picks by kind (``by_truth``), and the evaluators
import nothing of ``cartoqa.tasks``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cartoqa.records import (
    ChoiceTruth,
    Metadata,
    NumberTruth,
    Prompt,
    Provenance,
    Sample,
    TextTruth,
    ValuesTruth,
)
from cartoqa.tasks.spec import registered_tasks
from evaluators import gps

ROOT = Path(__file__).resolve().parents[2]


def _sample(task: str, truth, **meta) -> Sample:
    # a task no registry knows: the scorer reads the truth and the metadata only
    return Sample.model_construct(
        id=f"{task}-0",
        task=task,
        split="test",
        prompt=Prompt(text="Which?"),
        ground_truth=truth,
        metadata=Metadata(region="x", difficulty="easy", track="mine", **meta),
        provenance=Provenance(generator="tests"),
    )


def test_a_scorer_reads_what_it_is_named_for_whatever_the_task():
    km = _sample("my_road_length", NumberTruth(value=1000.0, unit="km"))
    got = gps.score_km(km, "FINAL ANSWER: 900 km")
    assert not got.correct and got.values["closeness"] == pytest.approx(0.9)
    assert got.why == "outside max(5 km, 5%)"  # the default tolerance, GPSBench's
    assert gps.score_km(km, "FINAL ANSWER: 621 mi").correct
    assert gps.score_km(km, None).values == {"closeness": 0.0}
    deg = _sample("my_latitude", NumberTruth(value=-10.0, unit="deg"), given="longitude")
    assert gps.score_degree(deg, "FINAL ANSWER: 10.05 S").correct
    assert "outside a latitude's range" in gps.score_degree(deg, "FINAL ANSWER: 100").why
    values = ValuesTruth(values={"a": 1.0, "b": 2.0}, tolerances={"a": 0.1, "b": 0.1})
    both = _sample("my_pair", values)
    assert gps.score_values(both, 'FINAL ANSWER: {"a": 1.05, "b": 2}').values == {}
    assert gps.score_values_closeness(both, 'FINAL ANSWER: {"a": 1, "b": 1}').values == {
        "closeness": pytest.approx(0.75)
    }


def test_by_truth_picks_the_scorer_of_the_sample_s_truth_kind():
    score = gps.by_truth(choice=gps.score_choice, text=gps.score_city)
    opts = {"A": "Lyon", "B": "Nice"}
    assert score(_sample("my_pick", ChoiceTruth(answer="B", options=opts)), "FINAL ANSWER: B")
    assert score(_sample("my_pick", TextTruth(answer="Nice")), "FINAL ANSWER: Nice").correct
    other = score(_sample("my_pick", NumberTruth(value=1.0)), "FINAL ANSWER: 1")
    assert other.correct is False and "number" in other.why  # never raises


def test_every_gps_task_is_scored_by_a_scorer_of_evaluators_gps():
    for name, spec in registered_tasks().items():
        if spec.family == "gps" and spec.generator is not None:
            fn = spec.score
            assert fn.__module__ == "evaluators.gps", name
            assert fn.__name__.startswith("score"), name
    assert not hasattr(gps, "score_gps") and not hasattr(gps, "_NUMERIC")


def test_the_evaluators_import_nothing_of_cartoqa_tasks():
    found = {}
    for path in sorted((ROOT / "evaluators").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            bad = [n for n in names if n == "cartoqa.tasks" or n.startswith("cartoqa.tasks.")]
            if bad:
                found[path.name] = bad
    assert found == {}
