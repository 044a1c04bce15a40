"""The report's numbers: per task, models side by side on its headline metrics with a 95 %
bootstrap interval, its breakdowns, how answers failed, and what the runs used.

- ``headline(key)``: (row, metric) the task is summed up by: its spec's ``headline``
  or first metric, on each overall row (RLE has one per unit: "all m", "all ft").  Runs
  hold scores by score key (``ScoredRun.scored``): a paired variant's under
  "<task>@<variant>" ("srn@text"), looked up as its task's (``task_of``).
- ``bootstrap(rows, spec, row, metric, n, seed)``: the 2.5 and 97.5 percentiles of the
  metric over ``n`` resamples of the scored samples with replacement (numpy's
  ``default_rng(seed)``: the same seed, the same interval).
- ``outcomes(rows)``: right, wrong, unreadable (the scorer could not read the answer)
  and unanswered (no response), counted apart.
- ``usage(run)``: answers, input and output tokens, mean latency; cost where the
  records carry one (none do yet: "not recorded").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cartoqa.records import Sample, SampleScore
from cartoqa.tasks.spec import TaskSpec, get_task
from cartoqa.tasks.variants import VARIANT_NAMES, split_key

from .collect import ScoredRun

__all__ = [
    "LOWER_IS_BETTER",
    "ModelRow",
    "TaskReport",
    "bootstrap",
    "headline",
    "key_order",
    "outcomes",
    "run_label",
    "task_of",
    "task_reports",
    "usage",
]

Rows = Sequence[tuple[Sample, SampleScore]]
#: metrics where less is better (the rest: more is better)
LOWER_IS_BETTER = frozenset({"rmse", "mae", "mape", "unanswered"})


def task_of(key: str) -> str:
    """The task of a score key ("srn@text" -> "srn"; a task's own name -> itself)."""
    return split_key(key)[0]


def key_order(key: str) -> tuple[int, str, int, str, bool]:
    """How a report orders score keys: map tasks before GPS ones, by task, then the task's
    own key before its variants' (in ``VARIANT_NAMES``' order), a variant's unanswerable
    items right after it."""
    task, variant, unanswerable = split_key(key)
    spec = get_task(task)
    family = 1 if spec is not None and spec.family == "gps" else 0
    if variant is None:
        return (family, task, -1, "", False)
    name = "lang:XX" if variant.startswith("lang:") else variant
    rank = VARIANT_NAMES.index(name) if name in VARIANT_NAMES else len(VARIANT_NAMES)
    return (family, task, rank, variant, unanswerable)


def headline(task: str, table: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """The (row, metric) pairs a task (or a score key: its task's) is summed up by: its
    spec's ``headline`` (else its first metric) on each overall row ("all", or one per
    unit: "all m", "all ft")."""
    spec = get_task(task_of(task))
    metric = (spec.headline or spec.metrics[0]) if spec else "exact match"
    rows = [row for row in table if row == "all" or row.startswith("all ")]
    return [(row, metric) for row in rows or ["all"]]


def _reduce_at(spec: TaskSpec | None, rows: Rows, row: str, metric: str) -> float:
    if spec is None:
        return float("nan")
    if spec.table is None and row == "all":
        value = spec.reduce(rows).get(metric)
    else:
        value = spec.scores_table(rows).get(row, {}).get(metric)
    return float(value) if isinstance(value, int | float) else float("nan")


def bootstrap(
    rows: Rows, spec: TaskSpec | None, row: str, metric: str, *, n: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """95 % percentile interval of ``metric`` at ``row`` over ``n`` resamples (module
    docstring); (nan, nan) with fewer than two samples."""
    if len(rows) < 2 or n < 1:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n):
        pick = rng.integers(0, len(rows), len(rows))
        v = _reduce_at(spec, [rows[i] for i in pick], row, metric)
        if not math.isnan(v):
            values.append(v)
    if not values:
        return float("nan"), float("nan")
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def outcomes(rows: Rows) -> dict[str, int]:
    """How the answers came out: right, wrong, unreadable, unanswered (and n)."""
    out = {"n": len(rows), "right": 0, "wrong": 0, "unreadable": 0, "unanswered": 0}
    for _, score in rows:
        why = score.why or ""
        if score.correct:
            out["right"] += 1
        elif why == "no response":
            out["unanswered"] += 1
        elif why.startswith("unreadable"):
            out["unreadable"] += 1
        else:
            out["wrong"] += 1
    return out


def usage(run: ScoredRun) -> dict[str, Any]:
    """Answers, tokens and latency of a run (None where no record says)."""
    recs = list(run.records.values())

    def total(name: str) -> int | None:
        got = [getattr(r, name) for r in recs if getattr(r, name) is not None]
        return sum(got) if got else None

    lat = [r.latency_s for r in recs if r.latency_s is not None]
    return {
        "answers": sum(r.response is not None for r in recs),
        "input_tokens": total("input_tokens"),
        "output_tokens": total("output_tokens"),
        "mean_latency_s": (sum(lat) / len(lat)) if lat else None,
        "cost": None,  # no adapter records a price yet
    }


@dataclass
class ModelRow:
    """One run's line in a task's table."""

    label: str
    """The model spec, with the run id where one model has several runs."""
    values: dict[str, float]
    """"row · metric" -> value, for the headline pairs and every overall metric."""
    intervals: dict[str, tuple[float, float]]
    """"row · metric" -> 95 % interval of the headline pairs."""
    outcomes: dict[str, int]
    breakdowns: dict[str, dict[str, float]]
    """Group key -> value ("zoom=17") -> the first headline metric."""


@dataclass
class TaskReport:
    task: str
    """The score key: a task ("srn"), or a paired variant's ("srn@text")."""
    family: str
    track: str
    heads: list[tuple[str, str]]
    metrics: list[str]
    rows: list[ModelRow] = field(default_factory=list)


def run_label(run: ScoredRun, runs: Sequence[ScoredRun]) -> str:
    """The model spec, with the run id where the model has several runs of one dataset."""
    same = [r for r in runs if r.model == run.model and r.dataset_sha256 == run.dataset_sha256]
    return run.model if len(same) == 1 else f"{run.model} ({run.run_id[:8]})"


def task_reports(
    runs: Sequence[ScoredRun], *, n_boot: int = 1000, seed: int = 0
) -> list[TaskReport]:
    """One ``TaskReport`` per score key the runs scored (a task's, and each paired
    variant's apart: "srn@text"), its rows one per run."""
    tasks = sorted({t for r in runs for t in r.scored}, key=key_order)
    out = []
    for task in tasks:
        spec = get_task(task_of(task))
        first = next(r for r in runs if task in r.scored)
        table = first.scores[task]
        heads = headline(task, table)
        overall = [m for m in table.get(heads[0][0], {}) if not m.startswith("n")]
        rep = TaskReport(
            task,
            spec.family if spec else "map",
            spec.track if spec else "",
            heads,
            overall,
        )
        for run in runs:
            if task not in run.scored:
                continue
            rows = run.scored[task]
            t = run.scores[task]
            values: dict[str, float] = {}
            intervals = {}
            for row, metric in heads:
                key = f"{row} · {metric}"
                intervals[key] = bootstrap(rows, spec, row, metric, n=n_boot, seed=seed)
                for m in overall:
                    values[f"{row} · {m}"] = _num(t.get(row, {}).get(m))
            breakdowns: dict[str, dict[str, float]] = {}
            metric0 = heads[0][1]
            for group, vals in t.items():
                if "=" not in group:
                    continue
                key, _, value = group.partition("=")
                breakdowns.setdefault(key, {})[value] = _num(vals.get(metric0))
            rep.rows.append(
                ModelRow(run_label(run, runs), values, intervals, outcomes(rows), breakdowns)
            )
        out.append(rep)
    return out


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) else float("nan")
