"""A Label Studio round trip for teams that review there (issue 17, item 4).

    write_tasks(dataset, store, Path("tasks.json"))      # then import it into Label Studio
    report = read_annotations(dataset, store, Path("export.json"), reviewer="lab")

Tasks are Label Studio's JSON: ``data`` holds the image (``image``, served
by Label Studio's local files: ``/data/local-files/?d=<dataset>/images/...``
with ``LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT`` set to the dataset's parent
folder), the question as the model sees it, the sample's id, task and the
store version the task was made from; its one prediction is the current
truth as JSON in the ``truth`` text area, model version
``cartoqa-generated``.  ``LABEL_CONFIG`` is the labelling interface to paste
into the project: the image, the question, the truth to edit, a verdict
(accept, correct, reject) and a reason.

Importing a Label Studio export reads the forms Label Studio 1.23 writes:
"JSON" (each task with its ``annotations``; its ``predictions`` as ids, the
annotator as a user id), "JSON_MIN" (one flat record per annotation: the
task's data, each control's value by its name, the ``annotator``) and the
older form with full prediction objects and the annotator as an object.  The
truth each task was made from is read from the store (the version the task
carries), not from its prediction.  Each completed annotation (not
cancelled), oldest first, becomes a decision of the store, checked as the
review tool checks a form:

- the verdict chosen, or, where none was chosen, "accept" when the truth is
  the one predicted and "correct" when it was edited; "correct" with nothing
  edited, "accept" over an edit and "reject" with no reason are refused
  (``ImportReport.errors``), as the review tool refuses them;
- the reviewer: the annotator's e-mail, else ``label-studio:<user id>``, else
  the ``reviewer`` given (names normalised as the store does);
- made on the version the task was exported with, so a sample decided in
  cartoqa since then is a conflict (``ImportReport.conflicts``), not
  overwritten; an annotation already in the store (the same file imported
  again) is counted in ``ImportReport.already`` and written nothing twice.

The whole file is read and checked first, and stored in one transaction: all
of it, or nothing.  Every task that cannot be read (not an object, its truth
not JSON or not a truth of the task, a version that is not a whole number, a
sample not in the dataset) is named in ``ImportReport.errors``, and then
nothing is stored (``ImportReport.stored`` is False): fix or drop those tasks
and import the file again.  A conflict is no error of the file: it is left
as it is and the others go in.  A file nested too deeply to parse is refused
with a ``CartoqaError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cartoqa.errors import CartoqaError, ReviewError, StaleEditError
from cartoqa.records import TRUTHS
from cartoqa.stores import Dataset

from .checks import correction_warnings
from .decisions import (
    VERDICTS,
    Decision,
    DecisionStore,
    normalise_reviewer,
)

__all__ = ["LABEL_CONFIG", "MODEL_VERSION", "ImportReport", "read_annotations", "write_tasks"]

MODEL_VERSION = "cartoqa-generated"
LABEL_CONFIG = """<View>
  <Image name="image" value="$image" zoom="true"/>
  <Text name="question" value="$question"/>
  <Header value="Ground truth (JSON): edit it to correct"/>
  <TextArea name="truth" toName="question" editable="true" maxSubmissions="1" rows="8"/>
  <Choices name="verdict" toName="question" choice="single" showInline="true">
    <Choice value="accept"/>
    <Choice value="correct"/>
    <Choice value="reject"/>
  </Choices>
  <TextArea name="reason" toName="question" maxSubmissions="1" placeholder="reason"/>
</View>
"""


@dataclass
class ImportReport:
    """What an import stored, and what it did not."""

    decisions: int = 0
    already: int = 0
    """Annotations already in the store (the same export imported before): not written again."""
    conflicts: list[str] = field(default_factory=list)
    """Sample ids decided in cartoqa since the tasks were exported (nothing written)."""
    errors: list[str] = field(default_factory=list)
    """Annotations that could not be read or were refused, with why."""
    skipped: int = 0
    """Tasks with no completed annotation."""
    warnings: list[str] = field(default_factory=list)
    """Decisions stored with something to check (a corrected route the map's roads do not
    connect)."""
    stored: bool = True
    """False when some tasks were bad (``errors``): then nothing of the file was stored."""


@dataclass(frozen=True)
class _Annotation:
    """One completed annotation, whatever form the export wrote it in."""

    created_at: str
    who: Any
    truth: str | None
    """The truth's text as edited (None: the control was left out, the truth predicted)."""
    verdict: str
    reason: str


@dataclass
class _Task:
    label: str
    data: dict[str, Any]
    annotations: list[_Annotation] = field(default_factory=list)
    problem: str = ""
    """What makes the task unreadable (empty: nothing)."""


def _truth_text(truth: dict[str, Any] | None) -> str:
    return json.dumps(truth, ensure_ascii=False, sort_keys=True, indent=1)


def write_tasks(dataset: Dataset, store: DecisionStore, out: Path) -> int:
    """Write the Label Studio tasks of every sample not rejected to ``out``; returns how
    many."""
    tasks = []
    for n, sample in enumerate(dataset.samples, 1):
        truth = store.effective_truth(sample)
        if truth is None:
            continue
        image = sample.prompt.images[0] if sample.prompt.images else ""
        tasks.append(
            {
                "id": n,
                "data": {
                    "image": f"/data/local-files/?d={dataset.path.name}/{image}" if image else "",
                    "question": sample.prompt.text,
                    "sample_id": sample.id,
                    "task": sample.task,
                    "version": store.version(sample.id),
                },
                "predictions": [
                    {
                        "model_version": MODEL_VERSION,
                        "result": [
                            {
                                "from_name": "truth",
                                "to_name": "question",
                                "type": "textarea",
                                "value": {"text": [_truth_text(truth)]},
                            }
                        ],
                    }
                ],
            }
        )
    out.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
    return len(tasks)


def _texts(value: Any) -> list[str]:
    """A control's value as a list of strings (JSON_MIN writes one value bare)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(x) for x in value]
    return [str(value)]


def _field(result: list[Any], name: str, key: str) -> list[str] | None:
    for item in result:
        if isinstance(item, dict) and item.get("from_name") == name:
            value = item.get("value")
            if value is None:
                return []
            if not isinstance(value, dict):
                raise ValueError(
                    f"the {name!r} result's value is {type(value).__name__}, not an object: "
                    "export the project again from Label Studio"
                )
            return _texts(value.get(key))
    return None


#: the keys JSON_MIN adds to a task's data, besides one per control
_MIN_KEYS = ("id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time")


def _tasks(items: list[Any]) -> list[_Task]:
    """The export's tasks with their completed annotations, from any of its forms."""
    out: list[_Task] = []
    by_id: dict[Any, _Task] = {}
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            out.append(
                _Task(f"item {n}", {}, problem=f"is {_kind(item)}, not a task (a JSON object)")
            )
            continue
        try:
            _read_item(item, n, out, by_id)
        except (ValueError, TypeError, AttributeError) as exc:
            label = f"task {item.get('id')}" if "id" in item else f"item {n}"
            out.append(_Task(label, {}, problem=f"cannot be read ({exc})"))
    return out


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _read_item(item: dict[str, Any], n: int, out: list[_Task], by_id: dict[Any, _Task]) -> None:
    """Add one item of the export to ``out`` (a task, or one annotation of a JSON_MIN task)."""
    if "data" not in item and "annotations" not in item:  # JSON_MIN: one annotation
        key = item.get("id", f"item {n}")
        task = by_id.get(key) if isinstance(key, int | str) else None
        if task is None:
            task = _Task(f"task {key}", {k: v for k, v in item.items() if k not in _MIN_KEYS})
            out.append(task)
            if isinstance(key, int | str):
                by_id[key] = task
        texts = _texts(item.get("truth"))
        task.annotations.append(
            _Annotation(
                created_at=str(item.get("created_at", "")),
                who=item.get("annotator"),
                truth=texts[0] if texts else None,
                verdict=(_texts(item.get("verdict")) or [""])[0],
                reason="\n".join(_texts(item.get("reason"))),
            )
        )
        return
    given = item.get("data")
    task = _Task(f"task {item.get('id')}", given if isinstance(given, dict) else {})
    if not isinstance(given, dict):
        task.problem = f"its data is {_kind(given)}, not an object with the sample's id"
    out.append(task)
    annotations = item.get("annotations") or []
    if not isinstance(annotations, list):
        task.problem = f"its annotations are {_kind(annotations)}, not a list"
        return
    read: list[_Annotation] = []
    for a in annotations:
        if not isinstance(a, dict) or a.get("was_cancelled"):
            continue
        result = a.get("result") or []
        if not isinstance(result, list):
            task.problem = f"an annotation's result is {_kind(result)}, not a list"
            return
        try:
            edited = _field(result, "truth", "text")
            verdict = (_field(result, "verdict", "choices") or [""])[0]
            reason = "\n".join(_field(result, "reason", "text") or [])
        except ValueError as exc:
            task.problem = str(exc)
            return
        read.append(
            _Annotation(
                created_at=str(a.get("created_at", "")),
                who=a.get("completed_by"),
                truth=edited[0] if edited else None,
                verdict=verdict,
                reason=reason,
            )
        )
    task.annotations = read


def _who(by: Any, default: str) -> str:
    if isinstance(by, dict):
        return str(by.get("email") or f"label-studio:{by.get('id')}")
    if isinstance(by, bool) or by is None or by == "":
        return default
    if isinstance(by, int):
        return f"label-studio:{by}"
    return str(by)


def _version(data: dict[str, Any]) -> int:
    v = data.get("version", 0)
    if isinstance(v, bool):
        raise ValueError(f"version {v!r} is not a whole number")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    raise ValueError(
        f"version {v!r} is not a whole number: import the tasks cartoqa wrote, unedited"
    )


def _normal(truth: Any) -> Any:
    """A truth as the store writes it (defaults in), for comparing; as given when invalid."""
    try:
        return TRUTHS.validate_python(truth).model_dump(mode="json")
    except ValidationError:
        return truth


def _same_decision(d: Decision, reviewer: str, verdict: str, after: Any, reason: str) -> bool:
    return (
        normalise_reviewer(d.reviewer) == reviewer
        and d.verdict == verdict
        and d.reason == reason.strip()
        and (verdict != "correct" or _normal(d.truth_after) == _normal(after))
    )


def read_annotations(
    dataset: Dataset, store: DecisionStore, path: Path, *, reviewer: str = "label-studio"
) -> ImportReport:
    """Store the completed annotations of a Label Studio export (module docstring)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise CartoqaError(
            f"{path} is nested too deeply to be a Label Studio export (brackets inside "
            "brackets beyond what any export holds): export the project again as JSON or "
            "JSON_MIN"
        ) from None
    except (OSError, ValueError) as exc:
        raise CartoqaError(f"{path} is not a Label Studio JSON export: {exc}") from None
    if not isinstance(items, list):
        raise CartoqaError(
            f"{path} is not a Label Studio JSON export (a list of tasks): export the project "
            "as JSON or JSON_MIN"
        )
    tasks = _tasks(items)
    report = ImportReport()
    try:
        with store.transaction():  # all stored, or none
            _import_all(dataset, store, tasks, reviewer, report)
            if report.errors:
                raise _RefusedError
    except _RefusedError:
        report.decisions = report.already = 0
        report.warnings = []
        report.stored = False
    return report


class _RefusedError(Exception):
    """Some tasks are bad: nothing of the file is stored."""


def _import_all(
    dataset: Dataset, store: DecisionStore, tasks: list[_Task], reviewer: str, report: ImportReport
) -> None:
    by_id = dataset.by_id()
    for task in tasks:
        sid = task.data.get("sample_id")
        sample = by_id.get(sid) if isinstance(sid, str) else None
        named = f"{sid} ({task.label})" if sample is not None else task.label
        if task.problem:
            report.errors.append(f"{named}: {task.problem}")
            continue
        if sample is None:
            report.errors.append(f"{task.label}: sample {sid!r} is not in this dataset")
            continue
        if not task.annotations:
            report.skipped += 1
            continue
        try:
            seen = _version(task.data)
            if not 0 <= seen <= store.version(sample.id):
                raise ValueError(
                    f"version {seen} was never a version of {sample.id} in {store.path} "
                    f"(it is at {store.version(sample.id)}): tasks of another review store?"
                )
        except ValueError as exc:
            report.errors.append(f"{named}: {exc}")
            continue
        for a in sorted(task.annotations, key=lambda a: a.created_at):
            try:
                stored = _import_one(sample, store, a, seen, reviewer, report)
            except StaleEditError:
                report.conflicts.append(sample.id)
                break
            except (ValueError, ReviewError) as exc:
                report.errors.append(f"{sample.id}: {exc}")
                break  # the annotations after it were made on it
            if stored is None:
                report.conflicts.append(sample.id)
                break
            seen = stored


def _import_one(
    sample: Any,
    store: DecisionStore,
    a: _Annotation,
    seen: int,
    default: str,
    report: ImportReport,
) -> int | None:
    """Store one annotation made on version ``seen``; the version it made (or found already
    made), None when another decision came first."""
    predicted = store.shown_at(sample, seen)
    truth: Any = predicted
    if a.truth is not None:
        try:
            truth = json.loads(a.truth)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"the truth is not valid JSON ({exc})") from None
        if not isinstance(truth, dict):
            raise ValueError("the truth is not a JSON object ({...})")
    edited = _normal(truth) != _normal(predicted)
    verdict = a.verdict.strip().lower()
    if verdict and verdict not in VERDICTS:
        raise ValueError(f"verdict {a.verdict!r}: choose one of {', '.join(VERDICTS)}")
    if not verdict:
        verdict = "correct" if edited else "accept"
    if verdict == "correct" and not edited:
        raise ValueError(
            "the verdict is 'correct' but nothing was edited: edit the truth, or choose accept"
        )
    if verdict == "accept" and edited:
        raise ValueError(
            "the truth was edited but the verdict is 'accept': choose correct to store the edit"
        )
    if verdict == "reject" and not a.reason.strip():
        raise ValueError("rejected without a reason: write one in 'reason'")
    name = normalise_reviewer(_who(a.who, default))
    if store.version(sample.id) > seen:  # decided since the export: this annotation, or not
        made = store.decision_at(sample.id, seen + 1)  # None: a rebuild changed the truth
        if made is not None and _same_decision(made, name, verdict, truth, a.reason):
            report.already += 1
            return seen + 1
        return None
    d = store.decide(
        sample,
        reviewer=name,
        verdict=verdict,
        seen=seen,
        truth=truth if verdict == "correct" else None,
        reason=a.reason,
    )
    report.decisions += 1
    if d.truth_after is not None and verdict == "correct":
        report.warnings.extend(f"{sample.id}: {w}" for w in correction_warnings(d.truth_after))
    return d.version
