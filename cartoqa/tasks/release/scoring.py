"""A model's responses in the release's layout, scored both ways, item by item.

"original": the published evaluator's arithmetic over the records as stored (the parsed
``Answer``/``Result`` the published ``get_response_*.py`` saved), quirks, crashes and random
fall-backs included (``evaluators.published``; the draws from a named seed, and counted).
"cartoqa": each item's question as a cartoqa sample, its raw ``Response`` read and scored by
the task's own scorer, reduced by the task's own table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError
from cartoqa.records import Sample, SampleScore
from cartoqa.tasks.spec import Table, get_task

from .form import Reply
from .forms import form_for, release_forms

__all__ = ["ReleaseScores", "score_release"]


@dataclass
class ReleaseScores:
    """One release task's responses scored both ways."""

    release_task: str
    """"MFS", "STMF presence", ..., "SRN"."""
    task: str
    """The cartoqa task its questions are."""
    original: Table
    """The published arithmetic's table."""
    cartoqa: Table
    """cartoqa's table of the same replies."""
    items: list[dict[str, Any]] = field(default_factory=list)
    """Per item: key, original (values), crashed, drawn, cartoqa (values), why."""
    notes: list[str] = field(default_factory=list)
    """Where the published run as a whole would crash or do something odd."""

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "original": self.original,
            "cartoqa": self.cartoqa,
            "items": self.items,
            "notes": self.notes,
        }


def _model_folders(responses: Path, model: str | None) -> list[Path]:
    """The model folders to score: RESPONSES itself, or RESPONSES/<TASK>/<model> for every
    task folder the release layout has there (``Responses/`` given with ``model``)."""
    names = {f.folder for f in release_forms()}
    tasks_here = sorted(p for p in responses.iterdir() if p.is_dir() and p.name in names)
    if not tasks_here:
        return [responses]
    if model is None:
        models = sorted({m.name for t in tasks_here for m in t.iterdir() if m.is_dir()})
        raise DatasetError(
            f"{responses} holds the responses of every task; say whose with --model "
            f"({', '.join(models) or 'no model folder found'})"
        )
    found = [t / model for t in tasks_here if (t / model).is_dir()]
    if not found:
        raise DatasetError(f"no folder {model!r} under any task folder of {responses}")
    return found


def score_release(
    responses: Path,
    *,
    release: Path | None = None,
    model: str | None = None,
    seed: int = 0,
) -> dict[str, ReleaseScores]:
    """Release task -> its scores, for a model's response folder (``Responses/<TASK>/<model>``)
    or ``Responses/`` with ``model``.  ``release``: the release root (SRN reads its road
    tables there); ``seed``: the published random fall-backs' draws."""
    responses = Path(responses)
    if not responses.is_dir():
        raise DatasetError(
            f"{responses} is not a folder; give Responses/<TASK>/<model>/ of the release's "
            "layout (or Responses/ with --model)"
        )
    out: dict[str, ReleaseScores] = {}
    for folder in _model_folders(responses, model):
        form = form_for(folder)
        replies = form.read_replies(folder, release)
        if not replies:
            raise DatasetError(f"{folder} holds no response file of {form.folder}")
        by_key = {r.key: r for r in replies}
        for ev in form.evaluate(replies, seed):
            mine = [by_key[i.key] for i in ev.items if i.key in by_key]
            task = mine[0].sample.task if mine else form.tasks[0]
            scored = _cartoqa_scores(mine)
            spec = get_task(task)
            rows = [(r.sample, scored[r.key]) for r in mine]
            table = spec.scores_table(rows) if spec is not None and rows else {}
            items = [
                {
                    "key": i.key,
                    "original": i.values,
                    "crashed": i.crashed,
                    "drawn": i.drawn,
                    "why (original)": i.why,
                    "cartoqa": dict(scored[i.key].values) if i.key in scored else None,
                    "correct": scored[i.key].correct if i.key in scored else None,
                    "why": scored[i.key].why if i.key in scored else None,
                }
                for i in ev.items
            ]
            out[ev.release_task] = ReleaseScores(
                release_task=ev.release_task,
                task=task,
                original=ev.table,
                cartoqa=table,
                items=items,
                notes=list(ev.notes),
            )
    return out


def _cartoqa_scores(replies: list[Reply]) -> Mapping[str, SampleScore]:
    out: dict[str, SampleScore] = {}
    for r in replies:
        sample: Sample = r.sample
        spec = get_task(sample.task)
        if spec is not None:
            out[r.key] = spec.score(sample, r.response)
    return out
