"""People in a report: how the human runs score, agree and dispute the truth.

A person's answers are an ordinary run of model "human:NAME" (``cartoqa answer``), so each
person already has a row in every task's table.  ``people_summary`` adds, per score key
(a task, or a paired variant's "srn@text"):

- ``pooled``: the headline metric over every human answer together, with a 95 % bootstrap
  interval over *items* (an item's answers resampled together, so two people answering one
  item count as one item, not two independent ones), and how many items each person
  answered;
- agreement among people on the items at least two of them answered: Fleiss' kappa
  (``fleiss_kappa``, Fleiss 1971, with the number of raters allowed to vary by item) where
  the answers are categorical (everything but numbers: every right answer is one category,
  a wrong one's is what the scorer read, ``SampleScore.parsed``, or where it keeps none its
  words as a set, ``_category``; an empty answer is a category of its own),
  else (numbers) pairwise agreement: the share of pairs of people on one item whose
  answers lie within the task's own tolerance of each other (``NumberTruth.tolerance``,
  exact to 1e-9 without one); "not enough overlap" where no item has two people;
- ``disputed``: items answered by at least two people of whom most (more than half) were
  scored wrong against the truth: the likeliest truth defects (``disputed_ids``: their
  sample ids, for a review filter).

A run set without human runs gives no summary (``people_summary`` returns None), and the
report is then byte for byte what it was before people were counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from cartoqa.records import Sample, SampleScore
from cartoqa.tasks.spec import TaskSpec, get_task

from .collect import ScoredRun
from .tables import _reduce_at, headline, key_order, run_label, task_of

__all__ = [
    "HUMAN_PREFIX",
    "PeopleSummary",
    "PeopleTask",
    "disputed_ids",
    "fleiss_kappa",
    "is_human",
    "pairwise_agreement",
    "people_summary",
]

HUMAN_PREFIX = "human:"
"""How the model name of a person's run begins ("human:alice")."""

Row = tuple[Sample, SampleScore]


def is_human(run: ScoredRun) -> bool:
    """Whether ``run`` holds a person's answers (model "human:NAME")."""
    return run.model.startswith(HUMAN_PREFIX)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa of a table of ``counts[item][category]`` (how many raters put the
    item in the category); items may have different numbers of raters (each at least 2;
    items with fewer are left out).  With n_i raters on item i: P_i = (Σ_j n_ij² − n_i) /
    (n_i (n_i − 1)), P̄ their mean, p_j = Σ_i n_ij / Σ_i n_i, P_e = Σ_j p_j², and kappa =
    (P̄ − P_e) / (1 − P_e).  NaN without items, or where every answer falls in one
    category (P_e = 1: agreement is not defined beyond chance)."""
    rows = [[int(c) for c in r] for r in counts if sum(r) >= 2]
    if not rows:
        return float("nan")
    width = max(len(r) for r in rows)
    table = np.array([r + [0] * (width - len(r)) for r in rows], dtype=float)
    n_i = table.sum(axis=1)
    p_i = ((table**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    if p_e >= 1.0 - 1e-12:
        return float("nan")
    return round((p_bar - p_e) / (1.0 - p_e), 12) + 0.0  # no "-0.000" from rounding error


def pairwise_agreement(values: Sequence[Sequence[float | None]], agree: Any) -> tuple[float, int]:
    """(share of agreeing pairs, pairs): over every item (its people's values, None for an
    unreadable answer: it agrees with nothing), every pair of its people, ``agree(a, b)``."""
    good = total = 0
    for item in values:
        for a, b in combinations(item, 2):
            total += 1
            good += a is not None and b is not None and bool(agree(a, b))
    return (good / total if total else float("nan")), total


@dataclass
class Disputed:
    """An item most of its people (at least two) answered wrong against the truth."""

    task: str
    sample_id: str
    truth: str
    answers: dict[str, str]
    """Person ("human:alice") -> what they answered (their response)."""
    wrong: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "sample_id": self.sample_id,
            "truth": self.truth,
            "answers": self.answers,
            "wrong": self.wrong,
        }


@dataclass
class PeopleTask:
    """One score key's people: pooled score, agreement, answered counts."""

    task: str
    row: str
    metric: str
    people: dict[str, int]
    """Person's label -> items answered."""
    pooled: float
    interval: tuple[float, float]
    answers: int
    measure: str
    """"fleiss kappa", "pairwise agreement" or "not enough overlap"."""
    agreement: float
    overlap: int
    """Items at least two people answered (the agreement is over them)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "row": self.row,
            "metric": self.metric,
            "people": self.people,
            "pooled": self.pooled,
            "interval": list(self.interval),
            "answers": self.answers,
            "measure": self.measure,
            "agreement": self.agreement,
            "overlap_items": self.overlap,
        }


@dataclass
class PeopleSummary:
    tasks: list[PeopleTask] = field(default_factory=list)
    disputed: list[Disputed] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tasks": [t.as_dict() for t in self.tasks],
            "disputed": [d.as_dict() for d in self.disputed],
        }


def _number(truth: Any, response: str | None) -> float | None:
    """A number answer read as the scorer reads it, in the truth's unit; None if unreadable."""
    from evaluators.answers import CODECS
    from evaluators.numeric import UNITS, in_unit

    if response is None:
        return None
    try:
        parsed = CODECS["number"].read(response, None)
        if truth.unit in UNITS:
            return float(in_unit(parsed, truth.unit))
        return float(parsed.value)
    except Exception:  # any unreadable answer: it agrees with nothing
        return None


def _category(score: SampleScore, response: str | None) -> str:
    """The category of a categorical answer: the truth for every right one; else the answer
    as the scorer read it (``parsed``), or, where the scorer keeps none (road pairs), the
    response's words after ``normalise_name``, as a set (so "A and B" is "B and A")."""
    from evaluators.answers import normalise_name

    if score.correct:
        return "(the truth)"
    if score.parsed is not None:
        return "parsed:" + score.parsed.strip().casefold()
    words = sorted(set(normalise_name(response or "").split()) - {"and", "&"})
    return "words:" + " ".join(words) if words else "(unreadable)"


def _numbers_agree(truth: Any) -> Any:
    tol = getattr(truth, "tolerance", None)

    def agree(a: float, b: float) -> bool:
        if tol is not None:
            return bool(tol.allows(a, b) or tol.allows(b, a))
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b))

    return agree


def _item_bootstrap(
    groups: list[list[Row]], spec: TaskSpec | None, row: str, metric: str, n: int, seed: int
) -> tuple[float, float]:
    """95 % interval of the metric, items (with all their answers) resampled ``n`` times."""
    if len(groups) < 2 or n < 1:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n):
        pick = rng.integers(0, len(groups), len(groups))
        v = _reduce_at(spec, [r for i in pick for r in groups[i]], row, metric)
        if not math.isnan(v):
            values.append(v)
    if not values:
        return float("nan"), float("nan")
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo) + 0.0, float(hi) + 0.0


def people_summary(
    runs: Sequence[ScoredRun], *, n_boot: int = 1000, seed: int = 0
) -> PeopleSummary | None:
    """The people's summary (module docstring); None where no run is a person's."""
    humans = [r for r in runs if is_human(r)]
    if not humans:
        return None
    out = PeopleSummary()
    keys = sorted({k for r in humans for k in r.scored}, key=key_order)
    for key in keys:
        spec = get_task(task_of(key))
        by_item: dict[str, list[tuple[str, ScoredRun, Sample, SampleScore]]] = {}
        people: dict[str, int] = {}
        for run in humans:
            rows = run.scored.get(key, [])
            # what this person answered: a sitting answers part of the dataset (--n), and
            # each scorer words a missing answer its own way, so the records decide
            answered = [
                (s, sc)
                for s, sc in rows
                if s.id in run.records and run.records[s.id].response is not None
            ]
            if not answered:
                continue
            label = run_label(run, runs)
            people[label] = len(answered)
            for s, sc in answered:
                by_item.setdefault(s.id, []).append((label, run, s, sc))
        if not by_item:
            continue
        first = next(r for r in humans if key in r.scored)
        row, metric = headline(key, first.scores.get(key) or {})[0]
        groups = [[(s, sc) for _, _, s, sc in v] for v in by_item.values()]
        pooled = _reduce_at(spec, [x for g in groups for x in g], row, metric)
        interval = _item_bootstrap(groups, spec, row, metric, n_boot, seed)
        shared = {sid: v for sid, v in by_item.items() if len(v) >= 2}
        if not shared:
            measure, agreement = "not enough overlap", float("nan")
        elif next(iter(shared.values()))[0][2].ground_truth.kind == "number":
            truth = next(iter(shared.values()))[0][2].ground_truth
            values = []
            for v in shared.values():
                truth = v[0][2].ground_truth
                values.append([_number(truth, r.records[s.id].response) for _, r, s, _ in v])
            agreement, _ = pairwise_agreement(values, _numbers_agree(truth))
            measure = "pairwise agreement"
        else:
            cats: dict[str, int] = {}
            counts = []
            for v in shared.values():
                c: dict[int, int] = {}
                for _, r, s, sc in v:
                    name = _category(sc, r.records[s.id].response)
                    j = cats.setdefault(name, len(cats))
                    c[j] = c.get(j, 0) + 1
                counts.append(c)
            agreement = fleiss_kappa([[c.get(j, 0) for j in range(len(cats))] for c in counts])
            measure = "fleiss kappa"
        n_answers = sum(len(g) for g in groups)
        out.tasks.append(
            PeopleTask(
                key,
                row,
                metric,
                people,
                pooled,
                interval,
                n_answers,
                measure,
                agreement,
                len(shared),
            )
        )
        for sid, v in shared.items():
            wrong = sum(1 for _, _, _, sc in v if not sc.correct)
            if wrong * 2 > len(v):
                sample = v[0][2]
                out.disputed.append(
                    Disputed(
                        key,
                        sid,
                        sample.ground_truth.answer_text(),
                        {lab: r.records[sid].response or "" for lab, r, _, _ in v},
                        wrong,
                    )
                )
    return out


def disputed_ids(runs: Sequence[ScoredRun]) -> set[str]:
    """The sample ids people disputed (most of at least two answered wrong)."""
    summary = people_summary(runs, n_boot=0)
    return {d.sample_id for d in summary.disputed} if summary else set()
