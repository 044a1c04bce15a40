"""What a person who knows the truth types into ``cartoqa answer``'s forms, and samples of
every registered task for the answer tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from annotations.answer_forms import ACTIONS
from cartoqa.records import Metadata, NumberTruth, Prompt, Sample, TextTruth
from cartoqa.stores import RunStore
from cartoqa.tasks.spec import registered_tasks
from tests.annotations.review_server import Server, cartoqa_server
from tests.cartoqa.model_data import CASES, PROV

FINAL = "FINAL ANSWER:"
#: truths the model tests' cases do not fit: (task, kind) -> truth
OWN_TRUTHS = {
    ("bearing", "number"): NumberTruth(value=45.0, unit="deg"),
    ("missing_data", "number"): NumberTruth(value=12.5, unit="deg"),
    ("format_conversion", "text"): TextTruth(answer="48.8566, 2.3522"),
    ("format_conversion_lenient", "text"): TextTruth(answer="48.8566, 2.3522"),
}


def typed(sample: Sample) -> dict[str, Any]:
    """The form fields (name -> value) a person fills in to give ``sample``'s truth."""
    t: Any = sample.ground_truth
    if t.kind == "choice":
        return {"choice": t.answer}
    if t.kind == "boolean":
        return {"yesno": "yes" if t.value else "no"}
    if t.kind in ("count", "number"):
        return {"number": repr(t.value) if t.kind == "number" else str(t.value)}
    if t.kind == "names":
        return {"names": "\n".join(t.names)}
    if t.kind == "road_pair":
        return {"road_1": t.road_1, "road_2": t.road_2}
    if t.kind == "route":
        inner = t.steps[1:-1]
        out: dict[str, Any] = {}
        for i in range(0, len(inner), 2):
            out[f"action_{i // 2}"] = inner[i]
            out[f"road_{i // 2}"] = inner[i + 1] if i + 1 < len(inner) else ""
        return out
    if t.kind == "feature_table":
        out = {}
        for i, fc in enumerate(t.features.values()):
            out[f"count_{i}"] = str(fc.count)
            out[f"names_{i}"] = "\n".join(fc.names)
        return out
    spec = registered_tasks()[sample.task]
    text = spec.answer_format(sample) if spec.answer_format else t.answer_text()
    text = text.strip()
    if text.upper().startswith(FINAL):
        text = text[len(FINAL) :].strip()
    return {"text": text}


def every_task_samples() -> list[Sample]:
    """A sample of each registered task for each kind of truth it allows, the truths taken
    from the model tests' cases."""
    by_kind = {}
    for _task, truth, _q in CASES:
        by_kind.setdefault(truth.kind, truth)
    out = []
    for name, spec in registered_tasks().items():
        for kind in sorted(spec.truth_kinds):
            truth = next((t for task, t, _ in CASES if task == name and t.kind == kind), None)
            truth = OWN_TRUTHS.get((name, kind)) or truth or by_kind[kind]
            out.append(
                Sample(
                    id=f"{name}-{kind}",
                    task=name,
                    prompt=Prompt(text=f"[{name}] What is the answer?"),
                    ground_truth=truth,
                    metadata=Metadata(difficulty="easy"),
                    provenance=PROV,
                )
            )
    return out


@contextmanager
def answer_server(dataset: Path, runs: Path, name: str, *args: str) -> Iterator[Server]:
    """``cartoqa answer DATASET --as NAME --port 0`` in its own process (a real uvicorn
    server), its address read from what it prints; stopped (or killed) at the end."""
    argv = ["answer", str(dataset), "--as", name, "--port", "0", "--runs-dir", str(runs), *args]
    with cartoqa_server(argv, "answer") as server:
        yield server


def human_store(runs: Path) -> RunStore:
    """The one run store under ``runs`` (read-only)."""
    [path] = sorted(runs.glob("*.jsonl"))
    return RunStore(path, readonly=True)


def truth_strings(sample: Sample) -> list[str]:
    """The truth's distinctive strings that its question does not name: what no answer
    page may show."""
    t: Any = sample.ground_truth
    words: list[str] = []
    if t.kind == "names":
        words += t.names
    elif t.kind == "road_pair":
        words += [t.road_1, t.road_2]
    elif t.kind == "route":
        words += [s for s in t.steps[1:-1] if s not in ACTIONS]
    elif t.kind == "text":
        words += [t.answer, *t.accepted]
    elif t.kind == "feature_table":
        words += [n for fc in t.features.values() for n in fc.names]
    elif t.kind == "grouping":
        words += [n for g in t.groups.values() for n in g]
    # what the question itself names (a grouping's places) is the question's, not the truth's
    return [w for w in words if len(w) > 3 and w not in sample.prompt.text]
