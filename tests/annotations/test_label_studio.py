"""The Label Studio round trip (``annotations.label_studio``, issue 17 item 4): tasks out with
the truth as predictions, completed annotations back in as decisions; a round trip that
accepts everything changes nothing, and a sample decided meanwhile is a conflict."""

from __future__ import annotations

import copy
import json

from annotations.decisions import DecisionStore
from annotations.export import export_reviewed
from annotations.label_studio import LABEL_CONFIG, read_annotations, write_tasks
from cartoqa.records import CountTruth
from cartoqa.stores import load_dataset
from tests.cartoqa.model_data import kinds_dataset


def _setup(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    return ds, DecisionStore.open(tmp_path / "r.sqlite", ds)


def _complete(tasks, *, verdict=None, edit=None, who="ana@example.org"):
    """What Label Studio's JSON export holds once a person submitted each task: the
    prediction's result taken as the annotation (edited by ``edit(task, result)``)."""
    out = copy.deepcopy(tasks)
    for n, t in enumerate(out):
        result = copy.deepcopy(t["predictions"][0]["result"])
        if verdict:
            result.append(
                {"from_name": "verdict", "to_name": "question", "type": "choices",
                 "value": {"choices": [verdict]}}
            )  # fmt: skip
        if edit:
            edit(t, result)
        t["annotations"] = [
            {
                "id": 100 + n,
                "completed_by": {"id": 7, "email": who},
                "result": result,
                "was_cancelled": False,
                "created_at": f"2026-12-01T10:{n:02d}:00Z",
            }
        ]
    return out


def test_tasks_carry_the_image_the_question_and_the_truth_as_a_prediction(tmp_path):
    ds, store = _setup(tmp_path)
    n = write_tasks(ds, store, tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert n == len(tasks) == len(ds)
    by = ds.by_id()
    for t in tasks:
        s = by[t["data"]["sample_id"]]
        assert t["data"]["question"] == s.prompt.text and t["data"]["version"] == 0
        if s.prompt.images:
            assert t["data"]["image"] == f"/data/local-files/?d=ds/{s.prompt.images[0]}"
        (pred,) = t["predictions"]
        truth = json.loads(pred["result"][0]["value"]["text"][0])
        assert truth == s.ground_truth.model_dump(mode="json")
    for name in ('name="truth"', 'name="verdict"', 'value="$image"', 'value="$question"'):
        assert name in LABEL_CONFIG


def test_a_round_trip_that_accepts_everything_changes_nothing(tmp_path):
    ds, store = _setup(tmp_path)
    write_tasks(ds, store, tmp_path / "tasks.json")
    done = _complete(json.loads((tmp_path / "tasks.json").read_text()))
    (tmp_path / "export.json").write_text(json.dumps(done))
    report = read_annotations(ds, store, tmp_path / "export.json")
    assert (report.decisions, report.conflicts, report.errors) == (len(ds), [], [])
    assert {d.verdict for d in store.all()} == {"accept"}
    assert {d.reviewer for d in store.all()} == {"ana@example.org"}
    export_reviewed(ds, store, tmp_path / "out")
    out = load_dataset(tmp_path / "out")
    assert [s.ground_truth for s in out] == [s.ground_truth for s in ds]
    # the same file again: every sample has moved on; nothing is written twice
    again = read_annotations(ds, store, tmp_path / "export.json")
    assert again.decisions == 0 and sorted(again.conflicts) == sorted(s.id for s in ds)
    assert len(store.all()) == len(ds)


def test_edits_rejections_conflicts_and_bad_truths_come_back_as_they_should(tmp_path):
    ds, store = _setup(tmp_path)
    write_tasks(ds, store, tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())

    def edit(task, result):
        sid = task["data"]["sample_id"]
        if sid == "stmf_count-000":  # the count corrected, no verdict chosen
            truth = json.loads(result[0]["value"]["text"][0])
            result[0]["value"]["text"] = [json.dumps({**truth, "value": 6})]
        elif sid == "rle-000":
            result.append({"from_name": "verdict", "value": {"choices": ["reject"]}})
            result.append({"from_name": "reason", "value": {"text": ["path hidden"]}})
        elif sid == "mml-000":
            result[0]["value"]["text"] = ["{not json"]

    (tmp_path / "export.json").write_text(json.dumps(_complete(tasks, edit=edit)))
    # meanwhile, someone decides on one sample in cartoqa
    srn = ds.by_id()["srn-000"]
    store.decide(srn, reviewer="bo", verdict="reject", seen=0)
    report = read_annotations(ds, store, tmp_path / "export.json")
    assert report.conflicts == ["srn-000"]
    assert len(report.errors) == 1 and report.errors[0].startswith("mml-000")
    by = ds.by_id()
    assert store.latest("stmf_count-000").verdict == "correct"
    assert store.effective(by["stmf_count-000"]).ground_truth == CountTruth(
        **{**by["stmf_count-000"].ground_truth.model_dump(), "value": 6}
    )
    rle = store.latest("rle-000")
    assert rle.verdict == "reject" and rle.reason == "path hidden"
    assert [d.reviewer for d in store.history("srn-000")] == ["bo"]  # not overwritten
    assert store.version("mml-000") == 0


def test_the_commands_write_tasks_and_read_annotations_back(tmp_path):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    kinds_dataset(tmp_path / "ds", copies=1)
    runner = CliRunner()
    tasks = tmp_path / "tasks.json"
    result = runner.invoke(app, ["review", "label-studio-export", str(tmp_path / "ds"), str(tasks)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tasks.label-config.xml").read_text().startswith("<View>")
    (tmp_path / "export.json").write_text(json.dumps(_complete(json.loads(tasks.read_text()))))
    args = ["review", "label-studio-import", str(tmp_path / "ds"), str(tmp_path / "export.json")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "0 in conflict" in result.output, result.output
    result = runner.invoke(app, args)  # again: all in conflict, told, exit 1
    assert result.exit_code == 1 and "conflict: " in result.output
