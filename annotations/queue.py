"""What the review tool lists: samples with their status, filtered by task, status, city,
zoom and reviewer, the progress, and the next and previous sample under a filter.

    q = ReviewQueue(dataset, store)
    rows = q.rows(Filters(task="srn", status="unreviewed"))
    q.progress()               # reviewed / total, overall and per task
    q.neighbours("srn-0003", filters)   # (previous id, next id) in dataset order

Everything is read from the store at each call (one query), so two servers, or
the Label Studio import, writing the same store are seen at once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from typing import Any

from cartoqa.records import Sample
from cartoqa.stores import Dataset

from .decisions import DecisionStore, normalise_reviewer

__all__ = ["STATUSES", "Filters", "ReviewQueue", "Row"]

STATUSES = (
    "unreviewed",
    "accepted",
    "corrected",
    "rejected",
    "needs another review",
    "disputed",
    "truth changed",
)

FINAL = ("accepted", "corrected", "rejected")


@dataclass(frozen=True)
class Filters:
    """The list's filters; an empty one matches every sample."""

    task: str = ""
    status: str = ""
    city: str = ""
    zoom: str = ""
    reviewer: str = ""
    """Samples this reviewer decided on."""
    not_reviewer: str = ""
    """Samples this reviewer has not decided on."""
    disputed: str = ""
    """"1": only the samples people disputed (most of at least two answered them wrong,
    ``cartoqa.reports.people.disputed_ids``), where the tool was started with runs."""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Filters:
        got = {f.name: str(query.get(f.name, "")).strip() for f in fields(cls)}
        for name in ("reviewer", "not_reviewer"):  # names as the store compares them
            got[name] = normalise_reviewer(got[name])
        return cls(**got)

    def query(self) -> dict[str, str]:
        """The filters set, as query parameters."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


@dataclass(frozen=True)
class Row:
    sample: Sample
    status: str
    version: int
    reviewers: list[str]

    @property
    def city(self) -> str:
        return self.sample.metadata.city or ""

    @property
    def zoom(self) -> str:
        z = self.sample.metadata.zoom
        return "" if z is None else str(z)


class ReviewQueue:
    """A dataset's samples as the review tool lists them (module docstring)."""

    def __init__(
        self, dataset: Dataset, store: DecisionStore, disputed: Collection[str] = ()
    ) -> None:
        self.dataset = dataset
        self.disputed = frozenset(disputed)
        """The sample ids people disputed (the ``disputed`` filter keeps these)."""
        self.store = store
        self.by_id = dataset.by_id()
        self.tasks = sorted({s.task for s in dataset})
        self.cities = sorted({s.metadata.city for s in dataset if s.metadata.city})
        self.zooms = sorted({s.metadata.zoom for s in dataset if s.metadata.zoom is not None})

    def all_rows(self) -> list[Row]:
        known = self.store.statuses()
        return [Row(s, *known.get(s.id, ("unreviewed", 0, []))) for s in self.dataset.samples]

    def matches(self, row: Row, f: Filters) -> bool:
        if f.disputed and row.sample.id not in self.disputed:
            return False
        if f.task and row.sample.task != f.task:
            return False
        if f.status and row.status != f.status:
            return False
        if f.city and row.city != f.city:
            return False
        if f.zoom and row.zoom != f.zoom:
            return False
        if f.reviewer and f.reviewer not in row.reviewers:
            return False
        return not (f.not_reviewer and f.not_reviewer in row.reviewers)

    def rows(self, f: Filters, every: list[Row] | None = None) -> list[Row]:
        """The rows matching ``f``, of ``every`` row (default: read now)."""
        return [r for r in (every or self.all_rows()) if self.matches(r, f)]

    def neighbours(
        self, sample_id: str, f: Filters, every: list[Row] | None = None
    ) -> tuple[str | None, str | None]:
        """The matching samples before and after ``sample_id`` in dataset order (the sample
        itself need not match: after a decision it may no longer)."""
        rows = every or self.all_rows()
        at = next(i for i, r in enumerate(rows) if r.sample.id == sample_id)
        before = next((r.sample.id for r in reversed(rows[:at]) if self.matches(r, f)), None)
        after = next((r.sample.id for r in rows[at + 1 :] if self.matches(r, f)), None)
        return before, after

    def progress(self, every: list[Row] | None = None) -> dict[str, Any]:
        """{"done", "total", "tasks": {task: (done, total)}, "statuses": counts}: a sample is
        done once accepted, corrected or rejected by the reviews it needs (``required``)."""
        rows = every or self.all_rows()
        tasks: dict[str, list[int]] = {t: [0, 0] for t in self.tasks}
        statuses = dict.fromkeys(STATUSES, 0)
        for r in rows:
            done = r.status in FINAL
            tasks[r.sample.task][0] += done
            tasks[r.sample.task][1] += 1
            statuses[r.status] = statuses.get(r.status, 0) + 1
        return {
            "done": sum(v[0] for v in tasks.values()),
            "total": len(rows),
            "tasks": {t: tuple(v) for t, v in tasks.items()},
            "statuses": statuses,
        }

    def reviewers(self, every: list[Row] | None = None) -> list[str]:
        return sorted({name for r in (every or self.all_rows()) for name in r.reviewers})

    @staticmethod
    def start(rows: list[Row], reviewer: str) -> Row | None:
        """Where a reviewer starts: the first row not done that they have not decided, else
        the first not done, else the first."""
        open_ = [r for r in rows if r.status not in FINAL]
        reviewer = normalise_reviewer(reviewer)
        return next(
            (r for r in open_ if reviewer not in r.reviewers),
            open_[0] if open_ else (rows[0] if rows else None),
        )
