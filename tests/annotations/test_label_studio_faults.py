"""Hostile Label Studio exports (issue 27, item 9): a file is read whole and checked before
anything is stored; then every annotation goes in, or none, and every bad task is named."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from annotations.decisions import DecisionStore
from annotations.label_studio import read_annotations, write_tasks
from cartoqa.cli import app
from cartoqa.errors import CartoqaError
from cartoqa.stores import load_dataset
from tests.annotations.test_label_studio import _complete
from tests.cartoqa.model_data import kinds_dataset


@pytest.fixture
def setup(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    store = DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds)
    write_tasks(ds, store, tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    yield ds, store, _complete(tasks, verdict="accept")
    store.close()


def _import(tmp_path, text: str):
    path = tmp_path / "export.json"
    path.write_text(text)
    args = ["review", "label-studio-import", str(tmp_path / "ds"), str(path)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    return result.exit_code, " ".join(result.output.split())


def test_deeply_nested_brackets_are_refused_by_name_not_a_recursion_error(setup, tmp_path):
    ds, store, _ = setup
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CartoqaError, match="deep.json.*nested"):
        read_annotations(ds, store, tmp_path / "deep.json")
    code, said = _import(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert code == 2 and "nested" in said and "Traceback" not in said, said
    assert store.all() == []


def test_a_null_task_among_valid_ones_stores_nothing_and_is_named(setup, tmp_path):
    _, store, done = setup
    code, said = _import(tmp_path, json.dumps([None, *done]))
    assert code == 1, said
    assert "item 1" in said and "nothing was stored" in said, said
    assert store.all() == []


def test_a_bad_version_after_three_valid_tasks_stores_none_of_them(setup, tmp_path):
    ds, store, done = setup
    bad = {**done[3], "data": {**done[3]["data"], "version": "v2"}}
    report = read_annotations(ds, store, _write(tmp_path, [*done[:3], bad]))
    assert report.decisions == 0 and store.all() == []
    assert len(report.errors) == 1 and "'v2'" in report.errors[0], report.errors
    assert done[3]["data"]["sample_id"] in report.errors[0]


def test_every_bad_task_is_named_and_a_clean_file_then_goes_in_whole(setup, tmp_path):
    ds, store, done = setup
    broken = [dict(t) for t in done]
    broken[0] = {**broken[0], "annotations": [{"result": [{"from_name": "truth", "value": []}]}]}
    broken[1] = {**broken[1], "data": None}
    broken[2] = {**broken[2], "annotations": [{"result": "x", "completed_by": [1]}]}
    broken[4] = {**broken[4], "data": {**broken[4]["data"], "version": 99}}
    report = read_annotations(ds, store, _write(tmp_path, broken))
    assert report.decisions == 0 and store.all() == []
    named = " | ".join(report.errors)
    for t in (done[0], done[4]):
        assert t["data"]["sample_id"] in named, named
    assert "task" in named and len(report.errors) >= 3, named
    report = read_annotations(ds, store, _write(tmp_path, done))
    assert (report.decisions, report.errors) == (len(ds), [])
    assert len(store.all()) == len(ds)


def _write(tmp_path, items) -> object:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(items))
    return path
