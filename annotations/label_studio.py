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

Importing a Label Studio export turns each completed annotation (not
cancelled), oldest first, into a decision of the store:

- the verdict chosen, or, where none was chosen, "accept" when the truth is
  the one predicted and "correct" when it was edited;
- the reviewer: the annotator's e-mail, else ``label-studio:<id>``, else
  the ``reviewer`` given;
- made on the version the task was exported with, so a sample decided in
  cartoqa since then is a conflict (``ImportReport.conflicts``), not
  overwritten; importing the same file twice finds every sample changed and
  writes nothing twice.

An annotation whose truth is not valid JSON, or not a truth of the task,
is reported in ``ImportReport.errors`` and the others still go in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError
from cartoqa.stores import Dataset

from .decisions import VERDICTS, DecisionError, DecisionStore, StaleEditError

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
    conflicts: list[str] = field(default_factory=list)
    """Sample ids decided in cartoqa since the tasks were exported (nothing written)."""
    errors: list[str] = field(default_factory=list)
    """Annotations that could not be read, with why."""
    skipped: int = 0
    """Tasks with no completed annotation."""


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


def _field(result: list[dict[str, Any]], name: str, key: str) -> list[str] | None:
    for item in result:
        if item.get("from_name") == name:
            got = (item.get("value") or {}).get(key)
            return [str(x) for x in got] if isinstance(got, list) else None
    return None


def _who(annotation: dict[str, Any], default: str) -> str:
    by = annotation.get("completed_by")
    if isinstance(by, dict):
        return str(by.get("email") or f"label-studio:{by.get('id')}")
    if by is not None:
        return f"label-studio:{by}"
    return default


def read_annotations(
    dataset: Dataset, store: DecisionStore, path: Path, *, reviewer: str = "label-studio"
) -> ImportReport:
    """Store the completed annotations of a Label Studio export (module docstring)."""
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CartoqaError(f"{path} is not a Label Studio JSON export: {exc}") from None
    if not isinstance(tasks, list):
        raise CartoqaError(f"{path} is not a Label Studio JSON export (a list of tasks)")
    by_id = dataset.by_id()
    report = ImportReport()
    for task in tasks:
        data = task.get("data") or {}
        sample = by_id.get(str(data.get("sample_id")))
        if sample is None:
            report.errors.append(f"task {task.get('id')}: sample {data.get('sample_id')!r} is "
                                 "not in this dataset")  # fmt: skip
            continue
        done = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
        if not done:
            report.skipped += 1
            continue
        seen = int(data.get("version", 0))
        predicted = json.loads(
            ((task.get("predictions") or [{}])[0].get("result") or [{}])[0]
            .get("value", {})
            .get("text", ["null"])[0]
        )
        for a in sorted(done, key=lambda a: str(a.get("created_at", ""))):
            result = a.get("result") or []
            verdict = (_field(result, "verdict", "choices") or [""])[0]
            reason = "\n".join(_field(result, "reason", "text") or [])
            try:
                texts = _field(result, "truth", "text")
                truth = json.loads(texts[0]) if texts else predicted
                if verdict not in VERDICTS:
                    verdict = "accept" if truth == predicted else "correct"
                if verdict == "correct" and truth == predicted:
                    verdict = "accept"
                d = store.decide(
                    sample,
                    reviewer=_who(a, reviewer),
                    verdict=verdict,
                    seen=seen,
                    truth=truth if verdict == "correct" else None,
                    reason=reason,
                )
            except StaleEditError:
                report.conflicts.append(sample.id)
                break
            except (ValueError, DecisionError) as exc:
                report.errors.append(f"{sample.id}: {exc}")
                continue
            seen = d.version
            predicted = d.truth_after
            report.decisions += 1
    return report
