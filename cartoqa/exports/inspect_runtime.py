"""The runtime of the inspect_ai export (``cartoqa.exports.inspect_ai``): the dataset, the
scorer and the metric that the exported ``cartoqa_tasks.py`` imports.

The exported module holds only what is particular to its export (the dataset's name, the
cartoqa that exported it, the hash of its ``samples.jsonl``, the credits, its tasks:
``InspectExport``) and one ``@task`` function per cartoqa task, which inspect finds by
name; everything those tasks do is here, so that the folder holds no copy of cartoqa's
logic.  inspect therefore needs cartoqa installed next to it.

``InspectExport.task`` builds an inspect ``Task`` from the export's samples: each sample's
input is a user message with its maps (``ContentImage``) and question (``ContentText``),
after the task's system prompt where the sample has one; its target is the answer written
as the task asks; its metadata is the sample's metadata and, under ``cartoqa_sample``, the
sample's JSON.  ``cartoqa_scorer`` rebuilds the ``cartoqa.records.Sample`` and scores the
model's answer with ``cartoqa.scoring.score_sample``; ``cartoqa_metrics`` reduces those
scores with the task's own ``TaskSpec`` (``cartoqa.scoring.tables_from_scores``), so inspect
reports the numbers ``cartoqa score`` prints for the same answers.

inspect_ai is imported only when a task is built (``InspectExport.task``) or its scorer or
metric is made: importing this module needs no inspect_ai.  The scorer and the metric are
registered with inspect on first use, as ``cartoqa_scorer`` and ``cartoqa_metrics`` (in the
``cartoqa`` namespace: cartoqa is an installed package); the metric's one logged argument
is the task, as the exported modules' own metric had.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cartoqa
from cartoqa.records import Sample as CartoqaSample
from cartoqa.records import SampleScore as CartoqaScore
from cartoqa.scoring import score_sample, tables_from_scores

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value
    from inspect_ai.solver import TaskState

__all__ = [
    "SAMPLES_FILE",
    "InspectExport",
    "cartoqa_metrics",
    "cartoqa_scorer",
    "exported_lines",
]

#: the export's samples, one JSON object a line, beside its task module
SAMPLES_FILE = "samples.jsonl"


@cache
def exported_lines(samples: Path, samples_sha256: str) -> tuple[dict[str, Any], ...]:
    """The exported samples, checked against the hash the module was written with (read
    once a process: ``exported_lines.cache_clear()`` forgets them)."""
    data = samples.read_bytes()
    if hashlib.sha256(data).hexdigest() != samples_sha256:
        raise RuntimeError(
            f"{samples} is not the file these tasks were exported with (it was changed "
            "since); export the dataset again with 'cartoqa export --to inspect'"
        )
    return tuple(json.loads(line) for line in data.decode("utf-8").splitlines() if line)


@cache
def _positions(samples: Path, samples_sha256: str) -> dict[str, int]:
    """Sample id -> its place in the dataset: the metrics reduce in the dataset's order,
    as cartoqa does."""
    return {line["id"]: i for i, line in enumerate(exported_lines(samples, samples_sha256))}


def _inspect_sample(folder: Path, line: dict[str, Any]) -> Sample:
    from inspect_ai.dataset import Sample as InspectSample
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageSystem,
        ChatMessageUser,
        Content,
        ContentImage,
        ContentText,
    )

    content: list[Content] = [ContentImage(image=str(folder / p)) for p in line["images"]]
    content.append(ContentText(text=line["question"]))
    messages: list[ChatMessage] = []
    if line["system"] is not None:
        messages.append(ChatMessageSystem(content=line["system"]))
    messages.append(ChatMessageUser(content=content))
    metadata = dict(line["metadata"])
    metadata["cartoqa_sample"] = json.dumps(line["sample"], ensure_ascii=False)
    return InspectSample(id=line["id"], input=messages, target=line["target"], metadata=metadata)


def _cartoqa_sample(metadata: dict[str, Any] | None) -> CartoqaSample:
    if not metadata or "cartoqa_sample" not in metadata:
        raise ValueError(
            "the sample has no cartoqa_sample metadata: these tasks score only samples "
            "from their own samples.jsonl"
        )
    return CartoqaSample.model_validate_json(metadata["cartoqa_sample"])


def _scorer() -> Scorer:
    """The answer scored by cartoqa's scorer of its task (``cartoqa.scoring.score_sample``)."""
    from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score

    async def score(state: TaskState, target: Target) -> Score:
        sample = _cartoqa_sample(state.metadata)
        response = state.output.completion if state.output.choices else None
        result = score_sample(sample, response)
        verdict = CORRECT if result.correct else INCORRECT
        value = NOANSWER if result.correct is None else verdict
        metadata: dict[str, Any] = dict(result.values)
        metadata["cartoqa_score"] = result.model_dump(mode="json")
        return Score(value=value, answer=result.parsed, explanation=result.why, metadata=metadata)

    return score


def _line_part(line: dict[str, Any]) -> str:
    """The name of the inspect task an exported sample belongs to: its cartoqa task, or its
    task and variant (``cartoqa.exports.folder.Part.name``)."""
    from cartoqa.exports.folder import Part

    metadata = line.get("metadata") or {}
    variant = metadata.get("variant")
    if not variant:
        return str(line["task"])
    return Part(str(line["task"]), str(variant), metadata.get("answerable") is False).name


def _metrics(task: str, samples: Path, samples_sha256: str) -> Metric:
    """The task's metrics as ``cartoqa score`` computes them: the overall row by name, each
    breakdown row as "GROUP/METRIC" (``samples``: the export's samples.jsonl, whose order
    the scores are reduced in).  ``task`` is a score key: a paired variant's ("srn@text",
    "stmf_names@nolabels/unanswerable") reduces that variant's samples, and scores of
    another key are refused (they never mix)."""

    def compute(scores: list[SampleScore]) -> Value:
        positions = _positions(samples, samples_sha256)
        rows = []
        for s in scores:
            if s.score.metadata is None or "cartoqa_score" not in s.score.metadata:
                raise ValueError(
                    f"sample {s.sample_id} was not scored by cartoqa_scorer; "
                    "cartoqa_metrics reduces only its scores"
                )
            sample = _cartoqa_sample(s.sample_metadata)
            rows.append(
                (
                    positions.get(sample.id, len(positions)),
                    sample,
                    CartoqaScore.model_validate(s.score.metadata["cartoqa_score"]),
                )
            )
        rows.sort(key=lambda row: row[0])
        from cartoqa.exports.folder import part_of

        keys = sorted({part_of(r[1]).key for r in rows})
        if keys and keys != [task]:
            raise ValueError(
                f"cartoqa_metrics({task!r}) was given samples of {', '.join(keys)}; cartoqa "
                "scores a task's base samples and each variant's apart: evaluate each "
                "exported task on its own"
            )
        own = task.partition("@")[0]
        table = tables_from_scores({own: [(r[1], r[2]) for r in rows]}, [], {}).get(task, {})
        flat: dict[str, float | int] = {}
        for group, values in table.items():
            for name, number in values.items():
                # no number (NaN: r2 of one sample) is left out: inspect's metrics
                # are numbers, and its logs would write NaN, which strict JSON refuses
                if number is None or (isinstance(number, float) and not math.isfinite(number)):
                    continue
                flat[name if group == "all" else f"{group}/{name}"] = number
        return flat

    # inspect tells a metric's signature by its type hints, which it reads at run time: the
    # real types (this module names inspect_ai's types only for type checkers)
    from inspect_ai.scorer import SampleScore, Value

    compute.__annotations__ = {"scores": list[SampleScore], "return": Value}
    return compute


@cache
def _registered_scorer() -> Callable[[], Scorer]:
    """The scorer, registered with inspect (once a process)."""
    from inspect_ai.scorer import scorer

    return scorer(metrics=[], name="cartoqa_scorer")(_scorer)


@cache
def _registered_metrics(samples: Path, samples_sha256: str) -> Callable[[str], Metric]:
    """The metric of the export whose samples are ``samples``, registered with inspect
    (once a process an export): its one argument, the task, is what inspect logs."""
    from inspect_ai.scorer import metric

    def cartoqa_metrics(task: str) -> Metric:
        return _metrics(task, samples, samples_sha256)

    return metric(name="cartoqa_metrics", scores="unreduced")(cartoqa_metrics)


def cartoqa_scorer() -> Scorer:
    """The answer scored by cartoqa's scorer of its task (``cartoqa.scoring.score_sample``):
    the score's value is C or I (the verdict; N where the task gives none), its answer what
    the scorer read, its explanation why it is not right, its metadata the per-sample values
    and the full cartoqa score (``cartoqa_score``)."""
    return _registered_scorer()()


def cartoqa_metrics(task: str, samples: Path, samples_sha256: str) -> Metric:
    """The metrics of cartoqa's ``task`` as ``cartoqa score`` computes them: the overall row
    by name ("SR2", "mape"), each breakdown row as "GROUP/METRIC" ("zoom=18/SR2"), a value
    with no number (NaN) left out; the scores are reduced in the order of the export's
    ``samples`` (its samples.jsonl, checked against ``samples_sha256``)."""
    return _registered_metrics(samples, samples_sha256)(task)


@dataclass(frozen=True)
class InspectExport:
    """What is particular to one inspect export (the constants its task module records);
    ``task`` builds its inspect tasks.  Made where the module is imported, it warns when the
    installed cartoqa is not the one that exported it."""

    folder: Path
    """The export folder: samples.jsonl and images/ lie in it."""
    dataset: str
    """The name of the cartoqa dataset exported."""
    exported_by: str
    """The version of the cartoqa that exported it."""
    samples_sha256: str
    """The SHA-256 of samples.jsonl as exported."""
    attribution: list[str]
    """The credits the data requires, in every log's task metadata."""
    tasks: dict[str, dict[str, Any]]
    """Task -> whether its scorer gives a verdict (right or wrong), and its samples by
    split: ``{"verdict": True, "splits": {"test": 3}}``; a paired variant's task
    ("srn__text") names its cartoqa task, variant and whether it holds the unanswerable
    samples: ``{..., "task": "srn", "variant": "text", "unanswerable": False}``."""

    def __post_init__(self) -> None:
        if cartoqa.__version__ != self.exported_by:
            warnings.warn(
                f"these tasks were exported by cartoqa {self.exported_by} and are scored by "
                f"the installed cartoqa {cartoqa.__version__}; a scorer that changed between "
                "the two gives other numbers (export the dataset again with this cartoqa to "
                "be sure)",
                stacklevel=3,  # the task module's line that made it
            )

    @property
    def samples(self) -> Path:
        """The export's samples.jsonl."""
        return self.folder / SAMPLES_FILE

    def task(self, name: str, split: str | None = None) -> Task:
        """The inspect task of one cartoqa task (``split``: only its samples of that split)."""
        from inspect_ai import Task
        from inspect_ai.dataset import MemoryDataset
        from inspect_ai.scorer import accuracy, stderr
        from inspect_ai.solver import generate

        from cartoqa.exports.folder import Part

        info = self.tasks[name]
        part = Part(info.get("task", name), info.get("variant"), info.get("unanswerable", False))
        lines = [
            line
            for line in exported_lines(self.samples, self.samples_sha256)
            if _line_part(line) == name
        ]
        if split is not None:
            lines = [line for line in lines if line["split"] == split]
            if not lines:
                raise ValueError(
                    f"task {name} has no {split!r} samples; its splits: "
                    + ", ".join(sorted(info["splits"]))
                )
        own = cartoqa_metrics(part.key, self.samples, self.samples_sha256)
        return Task(
            dataset=MemoryDataset(
                [_inspect_sample(self.folder, line) for line in lines],
                name=f"cartoqa-{self.dataset}-{name}",
                location=str(self.samples),
            ),
            solver=generate(),
            scorer=cartoqa_scorer(),
            metrics=[accuracy(), stderr(), own] if info["verdict"] else [own],
            metadata={
                "cartoqa": cartoqa.__version__,
                "dataset": self.dataset,
                "task": part.task,
                **(
                    {"variant": part.variant, "answerable": not part.unanswerable}
                    if part.variant is not None
                    else {}
                ),
                "attribution": self.attribution,
            },
        )
