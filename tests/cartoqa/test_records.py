"""Sample and ground-truth records: validation and round trips."""

import json

import pytest
from pydantic import ValidationError

from cartoqa.records import (
    ChoiceTruth,
    Metadata,
    NumberTruth,
    Prompt,
    Provenance,
    RouteTruth,
    RunRecord,
    Sample,
    declare_truth_kinds,
)
from cartoqa.records import truths as truth_module

PROV = Provenance(generator="test", seed=1)
TRUTHS = [getattr(truth_module, n) for n in truth_module.__all__ if n != "GroundTruth"]


def make(**kw):
    base = dict(
        id="s-1",
        task="distance",
        prompt=Prompt(text="How far?"),
        ground_truth=NumberTruth(value=12.5, unit="km"),
        provenance=PROV,
    )
    base.update(kw)
    return Sample(**base)


def test_round_trip_keeps_types_and_extra_metadata():
    s = make(metadata=Metadata(city="Paris", zoom=17, pair="near"))
    back = Sample.model_validate_json(s.model_dump_json())
    assert back == s
    assert isinstance(back.ground_truth, NumberTruth)
    assert back.metadata.model_extra == {"pair": "near"}


def test_ground_truth_is_chosen_by_kind():
    raw = json.loads(make().model_dump_json())
    raw["task"] = "mfs"
    raw["ground_truth"] = {"kind": "choice", "answer": "B", "options": {"A": "bank", "B": "cafe"}}
    s = Sample.model_validate(raw)
    assert isinstance(s.ground_truth, ChoiceTruth)


def test_task_must_accept_the_truth_kind():
    with pytest.raises(ValidationError, match=r"task 'srn' takes ground truth of kind \['route'\]"):
        make(task="srn")


def test_unknown_task_is_refused_with_the_fix():
    with pytest.raises(ValidationError, match="unknown task 'distanse'.*Adding a task"):
        make(task="distanse")
    declare_truth_kinds("my_task", {"number"})
    assert make(task="my_task").task == "my_task"


def test_field_checks():
    with pytest.raises(ValidationError, match="answer 'C' is not one of the option letters"):
        ChoiceTruth(answer="C", options={"A": "x", "B": "y"})
    with pytest.raises(ValidationError, match="must start with 'blue'"):
        RouteTruth(steps=["turn left", "Main St", "red"])
    with pytest.raises(ValidationError, match="relative to the dataset folder"):
        Prompt(text="x", images=["../secret.png"])
    with pytest.raises(ValidationError, match="id"):
        make(id="has space")
    with pytest.raises(ValidationError, match="metadata 'tags' is a list"):
        Metadata(tags=["a"])
    with pytest.raises(ValidationError, match="schema_version 99 is newer"):
        make(schema_version=99)


def test_every_field_has_a_docstring():
    for model in (Sample, Prompt, Metadata, Provenance, RunRecord, *TRUTHS):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"


def test_run_record_ok():
    assert RunRecord(sample_id="a", model="m", response="x").ok
    assert not RunRecord(sample_id="a", model="m", error="timeout").ok
