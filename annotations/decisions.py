"""The review tool's store of decisions: people accept, correct or reject a sample's ground
truth, one append-only row per decision, in SQLite (issue 17, item 2).

    store = DecisionStore.open(Path("nav/review.sqlite"), dataset)
    d = store.decide(sample, reviewer="ana", verdict="correct", truth=new_truth,
                     reason="wrong road name", seen=store.version(sample.id))
    store.effective(sample)        # the truth a reviewed export writes (None: rejected)

- One file per dataset, in WAL mode, made for the dataset it names (its
  ``samples_sha256``); opened with another dataset it refuses, naming both.
- Rows are never changed or deleted: SQLite triggers refuse both.  A
  sample's **version** is the number of decisions made on it; every decision
  says which version its reviewer saw (``seen``), and one made on an older
  version is refused (``StaleEditError``, holding the decision that came in
  between), never silently written over.  The check and the insert are one
  ``BEGIN IMMEDIATE`` transaction, so two processes deciding on one sample at
  once cannot both win.
- A sample's effective truth is its generated truth, replaced by the latest
  decision: "accept" keeps what was there before it, "correct" writes its
  truth, "reject" drops the sample.
- Several reviewers: each decision names its reviewer.  With
  ``required=2`` a sample counts as reviewed once two reviewers' latest
  decisions agree (same verdict and same truth); reviewers whose latest
  decisions differ are listed by ``disagreements``.
- A correction is checked like any sample (its truth must be a kind the task
  takes) before it is stored; a bad one is refused with the reason.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from cartoqa.errors import CartoqaError
from cartoqa.records import TRUTHS, GroundTruth, Sample

__all__ = [
    "REASONS",
    "VERDICTS",
    "Decision",
    "DecisionError",
    "DecisionStore",
    "StaleEditError",
]

Verdict = Literal["accept", "correct", "reject"]
VERDICTS: tuple[str, ...] = ("accept", "correct", "reject")
#: the short list a reviewer picks a reason from (free text is allowed too)
REASONS: tuple[str, ...] = (
    "truth is right",
    "wrong road or feature name",
    "wrong count",
    "route not the shortest or not legal",
    "label unreadable or hidden on the map",
    "marker or path hard to see",
    "question ambiguous",
    "image broken or blank",
)
SCHEMA = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    reviewer TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'correct', 'reject')),
    at TEXT NOT NULL,
    truth_before TEXT NOT NULL,
    truth_after TEXT,
    reason TEXT NOT NULL,
    UNIQUE (sample_id, version)
);
CREATE INDEX IF NOT EXISTS decisions_by_sample ON decisions (sample_id, version);
CREATE TRIGGER IF NOT EXISTS decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
"""


class DecisionError(CartoqaError):
    """A decision that cannot be stored as given (bad verdict, truth or store)."""


@dataclass(frozen=True)
class Decision:
    """One reviewer's verdict on one sample, as stored."""

    seq: int
    """Its place in the store (increasing)."""
    sample_id: str
    version: int
    """The sample's version it made: 1 for the first decision on the sample."""
    reviewer: str
    verdict: str
    at: str
    """UTC time, ISO 8601."""
    truth_before: dict[str, Any]
    """The effective truth the reviewer saw."""
    truth_after: dict[str, Any] | None
    """The truth after it: the correction, the same truth for "accept", None for "reject"."""
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


class StaleEditError(DecisionError):
    """A decision made on a version of the sample that another has since changed."""

    def __init__(self, message: str, latest: Decision) -> None:
        super().__init__(message)
        self.latest = latest


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _row(r: sqlite3.Row) -> Decision:
    return Decision(
        seq=r["seq"],
        sample_id=r["sample_id"],
        version=r["version"],
        reviewer=r["reviewer"],
        verdict=r["verdict"],
        at=r["at"],
        truth_before=json.loads(r["truth_before"]),
        truth_after=json.loads(r["truth_after"]) if r["truth_after"] is not None else None,
        reason=r["reason"],
    )


class DecisionStore:
    """The decisions on one dataset's samples (module docstring)."""

    def __init__(self, path: Path, dataset_sha256: str, *, required: int = 1) -> None:
        if required < 1:
            raise DecisionError(f"required={required}: a sample needs at least one review")
        self.path = Path(path)
        self.required = required
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise DecisionError(f"cannot open the review store {self.path}: {exc}") from None
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a decision acknowledged is on disk
        try:
            self._db.executescript(_DDL)  # idempotent: IF NOT EXISTS throughout
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                [("schema", str(SCHEMA)), ("dataset_sha256", dataset_sha256)],
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self._db.close()
            raise DecisionError(f"the review store {self.path} is unusable: {exc}") from None
        got = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        if got.get("dataset_sha256") != dataset_sha256:
            self._db.close()
            raise DecisionError(
                f"{self.path} holds decisions on another dataset (samples sha256 "
                f"{str(got.get('dataset_sha256'))[:16]}…, this one {dataset_sha256[:16]}…); "
                "give each dataset its own review store"
            )

    @classmethod
    def open(cls, path: Path, dataset: Any, *, required: int = 1) -> DecisionStore:
        """The store at ``path`` for a loaded ``cartoqa.stores.Dataset``."""
        return cls(path, dataset.manifest.samples_sha256, required=required)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    def history(self, sample_id: str) -> list[Decision]:
        """Every decision on the sample, oldest first."""
        rows = self._db.execute(
            "SELECT * FROM decisions WHERE sample_id = ? ORDER BY version", (sample_id,)
        ).fetchall()
        return [_row(r) for r in rows]

    def all(self) -> list[Decision]:
        """Every decision in the store, in the order made."""
        return [_row(r) for r in self._db.execute("SELECT * FROM decisions ORDER BY seq")]

    def latest(self, sample_id: str) -> Decision | None:
        r = self._db.execute(
            "SELECT * FROM decisions WHERE sample_id = ? ORDER BY version DESC LIMIT 1",
            (sample_id,),
        ).fetchone()
        return _row(r) if r is not None else None

    def version(self, sample_id: str) -> int:
        """The number of decisions made on the sample (0: none yet)."""
        r = self._db.execute(
            "SELECT COALESCE(MAX(version), 0) FROM decisions WHERE sample_id = ?", (sample_id,)
        ).fetchone()
        return int(r[0])

    def effective_truth(self, sample: Sample) -> dict[str, Any] | None:
        """The truth as reviewed, as JSON: the generated one, or the latest decision's after
        (None: rejected)."""
        last = self.latest(sample.id)
        if last is None:
            return sample.ground_truth.model_dump(mode="json")
        return last.truth_after

    def shown_truth(self, sample: Sample) -> dict[str, Any]:
        """The truth a reviewer is shown and an "accept" keeps: the effective truth, or for
        a rejected sample the truth its rejection dropped."""
        return self.shown_at(sample, self.version(sample.id))

    def shown_at(self, sample: Sample, version: int) -> dict[str, Any]:
        """The truth a reviewer was shown at ``version`` of the sample (0: the generated
        one): what a decision made on that version was made on."""
        shown = sample.ground_truth.model_dump(mode="json")
        for d in self.history(sample.id)[: max(0, version)]:
            if d.truth_after is not None:
                shown = d.truth_after
        return shown

    def effective(self, sample: Sample) -> Sample | None:
        """The sample with its reviewed truth, or None when rejected."""
        truth = self.effective_truth(sample)
        if truth is None:
            return None
        return sample.model_copy(update={"ground_truth": TRUTHS.validate_python(truth)})

    def reviewers_latest(self, sample_id: str) -> dict[str, Decision]:
        """Each reviewer's latest decision on the sample."""
        out: dict[str, Decision] = {}
        for d in self.history(sample_id):
            out[d.reviewer] = d
        return out

    def status(self, sample_id: str) -> str:
        """ "unreviewed", "accepted", "corrected", "rejected" (as the latest decision, once
        ``required`` reviewers agree), "needs another review" or "disputed"."""
        return self._status_of(self.history(sample_id))

    def statuses(self) -> dict[str, tuple[str, int, list[str]]]:
        """For every sample with a decision, in one read that decodes no truth: (status,
        version, reviewers in the order they first decided).  Samples missing are
        unreviewed, version 0."""
        by: dict[str, list[tuple[str, str, str]]] = {}
        rows = self._db.execute(
            "SELECT sample_id, reviewer, verdict, truth_after FROM decisions "
            "ORDER BY sample_id, version"
        )
        for sid, reviewer, verdict, after in rows:
            key = "reject" if verdict == "reject" else after  # stored with sorted keys
            by.setdefault(sid, []).append((reviewer, verdict, key))
        out = {}
        for sid, history in by.items():
            who = list(dict.fromkeys(r for r, _, _ in history))
            out[sid] = (self._status_from(history), len(history), who)
        return out

    def _status_of(self, history: list[Decision]) -> str:
        """The status of a sample with these decisions (oldest first)."""
        return self._status_from([(d.reviewer, d.verdict, _agreement_key(d)) for d in history])

    def _status_from(self, history: list[tuple[str, str, str]]) -> str:
        """The status from (reviewer, verdict, agreement key) per decision, oldest first."""
        if not history:
            return "unreviewed"
        if self.required == 1:
            return _PAST[history[-1][1]]
        latest = {reviewer: (verdict, key) for reviewer, verdict, key in history}
        groups: dict[str, list[str]] = {}
        for verdict, key in latest.values():
            groups.setdefault(key, []).append(verdict)
        if len(groups) > 1:
            return "disputed"
        (agreeing,) = groups.values()
        if len(agreeing) >= self.required:
            return _PAST[agreeing[0]]
        return "needs another review"

    def disagreements(self) -> list[tuple[str, list[Decision]]]:
        """(sample id, each reviewer's latest decision) for every sample where they differ."""
        ids = [r[0] for r in self._db.execute("SELECT DISTINCT sample_id FROM decisions")]
        out = []
        for sid in sorted(ids):
            latest = self.reviewers_latest(sid)
            if len({_agreement_key(d) for d in latest.values()}) > 1:
                out.append((sid, list(latest.values())))
        return out

    def stats(self, sample_ids: Iterable[str]) -> dict[str, Any]:
        """Counts of statuses over ``sample_ids``, and the reviewers' agreement: the share
        of samples reviewed by two or more whose reviewers' latest decisions agree."""
        counts = dict.fromkeys(
            (
                "reviewed",
                "accepted",
                "corrected",
                "rejected",
                "unreviewed",
                "needs another review",
                "disputed",
            ),
            0,
        )
        pairs = agree = 0
        ids = list(sample_ids)
        for sid in ids:
            status = self.status(sid)
            counts[status] += 1
            if status != "unreviewed":
                counts["reviewed"] += 1
            latest = self.reviewers_latest(sid)
            if len(latest) >= 2:
                pairs += 1
                agree += len({_agreement_key(d) for d in latest.values()}) == 1
        return {
            "samples": len(ids),
            **counts,
            "decisions": int(self._db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]),
            "reviewers": sorted(r[0] for r in self._db.execute(_REVIEWERS)),
            "agreement": (agree / pairs) if pairs else None,
            "required_reviews": self.required,
        }

    # ------------------------------------------------------------------ writing

    def decide(
        self,
        sample: Sample,
        *,
        reviewer: str,
        verdict: str,
        seen: int,
        truth: GroundTruth | dict[str, Any] | None = None,
        reason: str = "",
    ) -> Decision:
        """Store one decision on ``sample``, made on version ``seen`` (``version()`` when
        the reviewer loaded it).  "correct" needs ``truth``; "accept" and "reject" take
        none.  ``StaleEditError`` when another decision came in since ``seen``."""
        reviewer = reviewer.strip()
        if not reviewer:
            raise DecisionError("a decision needs its reviewer's name")
        if verdict not in VERDICTS:
            raise DecisionError(f"verdict {verdict!r}: use one of {', '.join(VERDICTS)}")
        if (verdict == "correct") != (truth is not None):
            raise DecisionError(
                "a correction gives the corrected truth"
                if verdict == "correct"
                else f"'{verdict}' takes no truth (a changed truth is a 'correct')"
            )
        after: dict[str, Any] | None = None
        if truth is not None:
            after = self._checked(sample, truth)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = self.version(sample.id)
            if seen < 0 or seen > version:
                raise DecisionError(
                    f"{sample.id} has no version {seen} (it is at version {version}): "
                    "reload the sample"
                )
            if version != seen:
                latest = self.latest(sample.id)
                assert latest is not None  # seen < version: a decision came in between
                self._db.execute("ROLLBACK")
                raise StaleEditError(
                    f"{sample.id} was changed while you looked at version {seen}: "
                    f"{latest.reviewer} made it '{latest.verdict}' at {latest.at} "
                    f"(version {latest.version}); your decision was not stored, look again",
                    latest,
                )
            before = self.effective_truth(sample)
            if verdict == "accept":  # of a rejected sample: the truth it dropped comes back
                after = self.shown_truth(sample)
            if before is None:
                before = {}
            d = (
                sample.id,
                version + 1,
                reviewer,
                verdict,
                _now(),
                json.dumps(before, ensure_ascii=False, sort_keys=True),
                None if after is None else json.dumps(after, ensure_ascii=False, sort_keys=True),
                reason.strip(),
            )
            cur = self._db.execute(
                "INSERT INTO decisions (sample_id, version, reviewer, verdict, at, "
                "truth_before, truth_after, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                d,
            )
            self._db.execute("COMMIT")
        except StaleEditError:
            raise
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        r = self._db.execute("SELECT * FROM decisions WHERE seq = ?", (cur.lastrowid,)).fetchone()
        return _row(r)

    @staticmethod
    def _checked(sample: Sample, truth: GroundTruth | dict[str, Any]) -> dict[str, Any]:
        """The corrected truth as JSON, once a sample with it validates."""
        try:
            parsed = TRUTHS.validate_python(
                truth if isinstance(truth, dict) else truth.model_dump(mode="json")
            )
            Sample.model_validate({**sample.model_dump(mode="json"), "ground_truth": parsed})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise DecisionError(
                f"{sample.id}: the corrected truth is not valid for task {sample.task!r} "
                f"({where}: {first.get('msg')})"
            ) from None
        return parsed.model_dump(mode="json")


_PAST = {"accept": "accepted", "correct": "corrected", "reject": "rejected"}
_REVIEWERS = "SELECT DISTINCT reviewer FROM decisions"


def _agreement_key(d: Decision) -> str:
    """Two decisions agree when their verdict and the truth after them are the same."""
    if d.verdict == "reject":
        return "reject"
    return json.dumps(d.truth_after, sort_keys=True)
