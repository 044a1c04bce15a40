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
    # the same file again: every annotation is already in; nothing is written twice
    again = read_annotations(ds, store, tmp_path / "export.json")
    assert (again.decisions, again.already, again.conflicts) == (0, len(ds), [])
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

    export = _complete(tasks, edit=edit)
    (tmp_path / "export.json").write_text(json.dumps(export))
    # meanwhile, someone decides on one sample in cartoqa
    srn = ds.by_id()["srn-000"]
    store.decide(srn, reviewer="bo", verdict="reject", seen=0)
    report = read_annotations(ds, store, tmp_path / "export.json")
    assert report.conflicts == ["srn-000"]
    assert len(report.errors) == 1 and report.errors[0].startswith("mml-000")
    # a bad task: nothing of the file is stored (issue 27, item 9); without it, all goes in
    assert not report.stored and [d.sample_id for d in store.all()] == ["srn-000"]
    export = [t for t in export if t["data"]["sample_id"] != "mml-000"]
    (tmp_path / "export.json").write_text(json.dumps(export))
    report = read_annotations(ds, store, tmp_path / "export.json")
    assert report.stored and report.conflicts == ["srn-000"] and report.errors == []
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
    result = runner.invoke(app, args)  # again: all already in, told, nothing twice
    assert (
        result.exit_code == 0 and f"{len(load_dataset(tmp_path / 'ds'))} already" in result.output
    )


# ---------------------------------------------------------------- issue 26, finding 14
# Label Studio 1.23's own export shapes.  The standard "JSON" export serialises a task's
# predictions as their ids and an annotation's annotator as a user id; "JSON_MIN" writes one
# flat record per annotation (the task's data, each control's value by its name, the
# annotator's id); older versions (and the API) give full prediction objects and the user
# as an object.


def _ls_result(name: str, kind: str, value: dict, origin: str = "manual") -> dict:
    return {
        "value": value,
        "id": f"r-{name}",
        "from_name": name,
        "to_name": "question",
        "type": kind,
        "origin": origin,
    }


def _ls_standard(tasks, annotate, *, user=1):
    """Label Studio 1.23's JSON export of the imported ``tasks``, each annotated by
    ``annotate(sample_id, predicted_text)`` -> (truth text or None, verdict or None, reason)
    (None: the task was left unannotated)."""
    out = []
    for n, t in enumerate(tasks, 1):
        text = t["predictions"][0]["result"][0]["value"]["text"][0]
        got = annotate(t["data"]["sample_id"], text)
        annotations = []
        if got is not None:
            truth, verdict, reason = got
            result = []
            if truth is not None:
                origin = "prediction" if truth == text else "prediction-changed"
                result.append(_ls_result("truth", "textarea", {"text": [truth]}, origin))
            if verdict:
                result.append(_ls_result("verdict", "choices", {"choices": [verdict]}))
            if reason:
                result.append(_ls_result("reason", "textarea", {"text": [reason]}))
            annotations.append(
                {
                    "id": 500 + n,
                    "completed_by": user,
                    "result": result,
                    "was_cancelled": False,
                    "ground_truth": False,
                    "created_at": f"2026-12-02T09:{n:02d}:00.000000Z",
                    "updated_at": f"2026-12-02T09:{n:02d}:00.000000Z",
                    "draft_created_at": None,
                    "lead_time": 12.5,
                    "prediction": {},
                    "result_count": len(result),
                    "unique_id": f"0c0d{n:04d}-uuid",
                    "import_id": None,
                    "last_action": None,
                    "bulk_created": False,
                    "task": 200 + n,
                    "project": 3,
                    "updated_by": user,
                    "parent_prediction": 40 + n,
                    "parent_annotation": None,
                    "last_created_by": None,
                }
            )
        out.append(
            {
                "id": 200 + n,
                "annotations": annotations,
                "file_upload": "9f1b2c3d-tasks.json",
                "drafts": [],
                "predictions": [40 + n],
                "data": t["data"],
                "meta": {},
                "created_at": "2026-12-02T08:00:00.000000Z",
                "updated_at": "2026-12-02T09:30:00.000000Z",
                "inner_id": n,
                "total_annotations": len(annotations),
                "cancelled_annotations": 0,
                "total_predictions": 1,
                "comment_count": 0,
                "unresolved_comment_count": 0,
                "last_comment_updated_at": None,
                "project": 3,
                "updated_by": user,
                "comment_authors": [],
            }
        )
    return out


def _ls_min(standard):
    """The same export as Label Studio's JSON_MIN writes it."""
    out = []
    for task in standard:
        for a in task["annotations"]:
            record = {**task["data"], "id": task["id"]}
            for r in a["result"]:
                value = r["value"].get("text") or r["value"].get("choices")
                record[r["from_name"]] = value[0] if len(value) == 1 else value
            record.update(
                annotator=a["completed_by"],
                annotation_id=a["id"],
                created_at=a["created_at"],
                updated_at=a["updated_at"],
                lead_time=a["lead_time"],
            )
            out.append(record)
    return out


def _ls_objects(standard, tasks):
    """The older form: full prediction objects and the annotator as an object."""
    out = copy.deepcopy(standard)
    for t, task in zip(out, tasks, strict=True):
        t["predictions"] = [
            {"id": t["predictions"][0], "model_version": "cartoqa-generated", "score": None,
             "result": task["predictions"][0]["result"], "task": t["id"]}
        ]  # fmt: skip
        for a in t["annotations"]:
            a["completed_by"] = {"id": a["completed_by"], "email": "ana@example.org",
                                 "first_name": "", "last_name": ""}  # fmt: skip
    return out


def _count_edit(sid, text, value=6):
    if sid != "stmf_count-000":
        return text, None, ""
    return json.dumps({**json.loads(text), "value": value}), None, ""


def test_label_studio_1_23_standard_min_and_object_exports_all_import(tmp_path):
    ds, store = _setup(tmp_path)
    write_tasks(ds, store, tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    standard = _ls_standard(tasks, _count_edit)
    shapes = {
        "standard": standard,
        "min": _ls_min(standard),
        "objects": _ls_objects(standard, tasks),
    }
    for form, export in shapes.items():
        (tmp_path / f"{form}.json").write_text(json.dumps(export))
        with DecisionStore.open(tmp_path / f"{form}.sqlite", ds) as s:
            report = read_annotations(ds, s, tmp_path / f"{form}.json")
            assert (report.decisions, report.conflicts, report.errors) == (len(ds), [], []), form
            count = s.latest("stmf_count-000")
            assert count.verdict == "correct" and count.truth_after["value"] == 6, form
            assert {d.verdict for d in s.all() if d.sample_id != "stmf_count-000"} == {"accept"}
            who = {d.reviewer for d in s.all()}
            assert who == ({"ana@example.org"} if form == "objects" else {"label-studio:1"}), form


def test_label_studio_import_refuses_what_the_review_tool_refuses(tmp_path):
    ds, store = _setup(tmp_path)
    write_tasks(ds, store, tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())

    def annotate(sid, text):
        if sid == "stmf_count-000":  # "correct" chosen, nothing edited
            return text, "correct", ""
        if sid == "rle-000":  # a rejection that says nothing
            return text, "reject", ""
        if sid == "mml-000":  # "accept" chosen over an edit
            return json.dumps({**json.loads(text), "road_1": "Rue X"}), "accept", ""
        if sid == "srn-000":
            return text, "reject", "path hidden"
        return None

    (tmp_path / "export.json").write_text(json.dumps(_ls_standard(tasks, annotate)))
    report = read_annotations(ds, store, tmp_path / "export.json")
    assert report.decisions == 0 and store.all() == []  # all or nothing (issue 27, item 9)
    errors = " | ".join(report.errors)
    assert "stmf_count-000" in errors and "nothing was edited" in errors
    assert "rle-000" in errors and "reason" in errors
    assert "mml-000" in errors and "edited" in errors
    assert "srn-000" not in errors


def test_label_studio_import_survives_bad_versions_predictions_and_markup_ids(tmp_path):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    ds, store = _setup(tmp_path)
    write_tasks(ds, store, tmp_path / "tasks.json")
    store.close()
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    objects = _ls_objects(_ls_standard(tasks, lambda sid, text: (text, "accept", "")), tasks)
    by = {t["data"]["sample_id"]: t for t in objects}
    by["stmf_count-000"]["data"]["version"] = "one"
    by["rle-000"]["data"]["version"] = 1.5
    by["mml-000"]["predictions"][0]["result"][0]["value"]["text"] = ["{not json"]
    by["srn-000"]["data"]["sample_id"] = "[/bold]"
    (tmp_path / "export.json").write_text(json.dumps(objects))
    args = ["review", "label-studio-import", str(tmp_path / "ds"), str(tmp_path / "export.json")]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    out = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "nothing was stored" in out and "3 unreadable" in out, out  # issue 27, item 9
    assert "'one'" in out and "1.5" in out and "[/bold]" in out, out
    good = [t for t in objects if t["data"]["sample_id"] not in ("stmf_count-000", "rle-000")]
    good = [t for t in good if t["data"]["sample_id"] != "[/bold]"]
    (tmp_path / "export.json").write_text(json.dumps(good))
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    out = " ".join(result.output.split())
    assert result.exit_code == 0 and f"{len(ds) - 3} decisions stored" in out, out
    with DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds) as s:
        assert s.latest("mml-000").verdict == "accept"  # the prediction is not needed
        assert s.version("stmf_count-000") == 0 and s.version("srn-000") == 0


def test_a_second_import_of_the_same_file_is_already_in_not_a_conflict(tmp_path):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    ds, store = _setup(tmp_path)
    write_tasks(ds, store, tmp_path / "tasks.json")
    store.close()
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    (tmp_path / "export.json").write_text(json.dumps(_ls_standard(tasks, _count_edit)))
    args = ["review", "label-studio-import", str(tmp_path / "ds"), str(tmp_path / "export.json")]
    runner = CliRunner()
    first = runner.invoke(app, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, args, catch_exceptions=False)
    said = " ".join(again.output.split())
    assert again.exit_code == 0 and "0 in conflict" in said, again.output
    assert f"{len(ds)} already imported" in said, again.output
    with DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds) as s:
        assert len(s.all()) == len(ds)
    # a sample decided in cartoqa since the export is still a conflict
    with DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds) as s:
        s.decide(ds.by_id()["mml-000"], reviewer="bo", verdict="reject", seen=1, reason="x")
    edited = _ls_standard(tasks, lambda sid, text: _count_edit(sid, text, 7))
    (tmp_path / "export.json").write_text(json.dumps(edited))
    third = runner.invoke(app, args, catch_exceptions=False)
    said = " ".join(third.output.split())
    assert third.exit_code == 1 and "conflict: stmf_count-000" in said, third.output


def test_the_printed_set_up_names_the_local_files_storage(tmp_path):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    kinds_dataset(tmp_path / "ds", copies=1)
    tasks = tmp_path / "tasks.json"
    result = CliRunner().invoke(
        app, ["review", "label-studio-export", str(tmp_path / "ds"), str(tasks)]
    )
    said = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED=true" in said
    assert f"LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT={tmp_path.resolve()}" in said
    assert "Local files" in said and str((tmp_path / "ds" / "images").resolve()) in said
