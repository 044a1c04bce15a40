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
- Reviewers' names are normalised before they are stored or compared
  (``normalise_reviewer``: NFKC, no format or control characters, single
  spaces), so "ana" and "ana\u200b" are one reviewer and "\u202etoor" is "toor".
- Samples that ask one quantity of one map in two units (RLE's ``-m`` and
  ``-ft``) are twins: a correction of one corrects the other in the same
  transaction, its value converted, so the pair never disagrees.
- Each thread has its own connection (the review tool's handlers run in a
  thread pool), and a store another process holds is waited for
  ``busy_timeout_s`` only, then refused (``StoreBusyError``).
- ``read_only=True`` opens a store for reading only (the reviewed export and
  the Label Studio tasks): nothing is written beside it, so a read-only file
  or folder works; a store that cannot be written names the file or folder
  that is in the way (a read-only mount named as one), and a damaged store
  (checked when opened) is named as damaged, with the fix.
- A rebuild of the dataset (``DatasetWriter`` with ``overwrite``) carries
  the store into the new folder.  Opened with the rebuilt dataset, a store
  in the dataset's own folder takes it: each sample whose generated truth
  changed gets a truth change (``truth_changes``), which takes a version of
  its own, so its earlier decisions stay but no longer apply and its status
  is "truth changed" until someone decides on the new truth.  The copy left
  in the old folder takes no more decisions.
- ``transaction()`` makes several decisions one transaction (the Label
  Studio import: all or nothing); ``snapshot()`` makes several reads one
  (the reviewed export).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from pydantic import ValidationError

from cartoqa.errors import ReviewError, StaleEditError, StoreBusyError
from cartoqa.records import TRUTHS, GroundTruth, Sample
from cartoqa.stores.dataset import CARRIED_MARK

__all__ = [
    "REASONS",
    "VERDICTS",
    "Decision",
    "DecisionStore",
    "check_reviewer",
    "normalise_reviewer",
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
#: the longest reviewer's name, once normalised
MAX_REVIEWER = 200
#: how long a store another process holds is waited for (the review tool uses less)
BUSY_TIMEOUT_S = 30.0
#: exact factors between the units twin samples ask in (1 ft = 0.3048 m, 1 mi = 1.609344 km)
UNIT_FACTORS: dict[tuple[str, str], float] = {
    ("m", "ft"): 1 / 0.3048,
    ("ft", "m"): 0.3048,
    ("km", "mi"): 1 / 1.609344,
    ("mi", "km"): 1.609344,
}

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
CREATE TABLE IF NOT EXISTS truth_changes (
    sample_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    at TEXT NOT NULL,
    truth_before TEXT NOT NULL,
    truth_after TEXT NOT NULL,
    dataset_sha256 TEXT NOT NULL,
    PRIMARY KEY (sample_id, version)
);
CREATE TRIGGER IF NOT EXISTS truth_changes_no_update BEFORE UPDATE ON truth_changes
BEGIN SELECT RAISE(ABORT, 'truth changes are append-only'); END;
CREATE TRIGGER IF NOT EXISTS truth_changes_no_delete BEFORE DELETE ON truth_changes
BEGIN SELECT RAISE(ABORT, 'truth changes are append-only'); END;
"""


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


def normalise_reviewer(name: str) -> str:
    """A reviewer's name as stored and compared: NFKC, format characters (Unicode Cf: zero
    widths, bidi controls) and control characters removed, white space runs made one space,
    the ends stripped."""
    s = unicodedata.normalize("NFKC", str(name))
    kept = []
    for ch in s:
        if ch.isspace():
            kept.append(" ")
        elif unicodedata.category(ch) not in ("Cf", "Cc", "Cs", "Co", "Cn"):
            kept.append(ch)
    return unicodedata.normalize("NFKC", " ".join("".join(kept).split()))


def check_reviewer(name: str) -> str:
    """The normalised name, or ``ReviewError`` saying what is wrong with it."""
    got = normalise_reviewer(name)
    if not got:
        raise ReviewError(
            "a decision needs its reviewer's name (nothing is left of "
            f"{name!r} once invisible characters are removed): write your name"
        )
    if len(got) > MAX_REVIEWER:
        raise ReviewError(f"a reviewer's name is at most {MAX_REVIEWER} characters")
    if not any(ch.isalnum() for ch in got):
        raise ReviewError(f"{got!r} is not a name: use letters or digits")
    return got


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _row(r: sqlite3.Row) -> Decision:
    return Decision(
        seq=r["seq"],
        sample_id=r["sample_id"],
        version=r["version"],
        reviewer=normalise_reviewer(r["reviewer"]),  # as stored since; older rows too
        verdict=r["verdict"],
        at=r["at"],
        truth_before=json.loads(r["truth_before"]),
        truth_after=json.loads(r["truth_after"]) if r["truth_after"] is not None else None,
        reason=r["reason"],
    )


class DecisionStore:
    """The decisions on one dataset's samples (module docstring)."""

    def __init__(
        self,
        path: Path,
        dataset_sha256: str,
        *,
        required: int = 1,
        read_only: bool = False,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        twins: dict[str, list[Sample]] | None = None,
        samples: list[Sample] | None = None,
        home: Path | None = None,
    ) -> None:
        if required < 1:
            raise ReviewError(f"required={required}: a sample needs at least one review")
        self.path = Path(path)
        self.required = required
        self.read_only = read_only
        self.busy_timeout_s = busy_timeout_s
        self._twins = twins or {}
        self._local = threading.local()
        self._open: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._immutable = False
        if read_only:
            self._check_readable()
        else:
            self._check_writable()
        try:
            db = self._db
        except sqlite3.Error as exc:
            raise self._explain(exc, "cannot be opened") from None
        try:
            if not read_only:
                db.executescript(_DDL)  # idempotent: IF NOT EXISTS throughout
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                    [("schema", str(SCHEMA)), ("dataset_sha256", dataset_sha256)],
                )
                db.execute("COMMIT")
            got = dict(db.execute("SELECT key, value FROM meta").fetchall())
            problems = [r[0] for r in db.execute("PRAGMA quick_check(5)").fetchall()]
            if problems != ["ok"]:  # pages that cannot be read: found now, not mid-export
                raise sqlite3.DatabaseError(
                    "database disk image is malformed: " + "; ".join(problems[:2])[:200]
                )
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self.close()
            raise self._explain(exc, "is unusable") from None
        self._file_id = _file_id(self.path)
        self._changes = self._read_changes()
        was = got.get("dataset_sha256")
        inside = home is not None and self.path.parent.resolve() == Path(home).resolve()
        if was != dataset_sha256 and samples is not None and inside:
            self._rebind(samples, str(was), dataset_sha256)  # the dataset rebuilt around it
        elif was != dataset_sha256:
            self.close()
            raise ReviewError(
                f"{self.path} holds decisions on another dataset (samples sha256 "
                f"{str(got.get('dataset_sha256'))[:16]}…, this one {dataset_sha256[:16]}…); "
                "give each dataset its own review store"
            )

    @classmethod
    def open(
        cls,
        path: Path,
        dataset: Any,
        *,
        required: int = 1,
        read_only: bool = False,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> DecisionStore:
        """The store at ``path`` for a loaded ``cartoqa.stores.Dataset`` (its twin samples
        known, so a correction of one corrects the other)."""
        return cls(
            path,
            dataset.manifest.samples_sha256,
            required=required,
            read_only=read_only,
            busy_timeout_s=busy_timeout_s,
            twins=find_twins(dataset.samples),
            samples=dataset.samples,
            home=dataset.path,
        )

    # ------------------------------------------------------------------ a rebuilt dataset

    def _read_changes(self) -> dict[str, list[dict[str, Any]]]:
        """Every truth change, by sample, oldest first (none in a store older than them)."""
        try:
            rows = self._db.execute(
                "SELECT * FROM truth_changes ORDER BY sample_id, version"
            ).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return {}
            raise self._explain(exc, "cannot be read") from None
        out: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            out.setdefault(r["sample_id"], []).append(
                {
                    "version": r["version"],
                    "at": r["at"],
                    "truth_before": json.loads(r["truth_before"]),
                    "truth_after": json.loads(r["truth_after"]),
                    "dataset_sha256": r["dataset_sha256"],
                }
            )
        return out

    def _base(self, sample_id: str) -> dict[str, Any] | None:
        """The generated truth the sample's current decisions were made about (None: it has
        neither decisions nor a truth change)."""
        changes = self._changes.get(sample_id)
        if changes:
            return changes[-1]["truth_after"]
        first = self._db.execute(
            "SELECT truth_before FROM decisions WHERE sample_id = ? ORDER BY version LIMIT 1",
            (sample_id,),
        ).fetchone()
        return json.loads(first[0]) if first is not None else None

    def _rebind(self, samples: list[Sample], was: str, now: str) -> None:
        """Take this store (in the dataset's own folder, carried by a rebuild) for the rebuilt
        dataset ``now``: each sample whose generated truth is no longer the one its decisions
        were made about gets a truth change, a version of its own, so its old decisions are
        kept but no longer applied (status "truth changed") and a reviewer's view of the old
        truth is stale.  Read-only, the changes are worked out and not stored."""
        db = self._db
        try:
            if not self.read_only:
                db.execute("BEGIN IMMEDIATE")
                self._changes = self._read_changes()  # as of the lock
            at = _now()
            for sample in samples:
                generated = sample.ground_truth.model_dump(mode="json")
                base = self._base(sample.id)
                if base is None or _same_truth(base, generated):
                    continue
                change = {
                    "version": self.version(sample.id) + 1,
                    "at": at,
                    "truth_before": base,
                    "truth_after": generated,
                    "dataset_sha256": now,
                }
                if not self.read_only:
                    db.execute(
                        "INSERT INTO truth_changes VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            sample.id,
                            change["version"],
                            at,
                            json.dumps(base, ensure_ascii=False, sort_keys=True),
                            json.dumps(generated, ensure_ascii=False, sort_keys=True),
                            now,
                        ),
                    )
                self._changes.setdefault(sample.id, []).append(change)
            if not self.read_only:
                db.executemany(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    [("dataset_sha256", now), ("rebuilt_from", was)],
                )
                db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self.close()
            raise self._explain(exc, "cannot be brought to the rebuilt dataset") from None

    def truth_changes(self, sample_id: str) -> list[dict[str, Any]]:
        """The rebuilds that changed the sample's generated truth: each with the ``version``
        it took, ``at``, ``truth_before`` (the truth the decisions before it were about),
        ``truth_after`` and the rebuilt dataset's ``dataset_sha256``."""
        return [dict(c) for c in self._changes.get(sample_id, [])]

    def _since(self, sample_id: str) -> int:
        """The version of the sample's last truth change (0: none): decisions after it are
        the ones that count."""
        changes = self._changes.get(sample_id)
        return changes[-1]["version"] if changes else 0

    # ------------------------------------------------------------------ the file

    @property
    def _db(self) -> sqlite3.Connection:
        """This thread's connection (made on first use)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._connect()
            self._local.db = db
            with self._guard:
                self._open.append(db)
        return db

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            uri = "file:" + quote(str(self.path.absolute())) + "?mode=ro"
            if self._immutable:
                uri += "&immutable=1"
            db = sqlite3.connect(
                uri,
                uri=True,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
        else:
            db = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
        db.row_factory = sqlite3.Row
        try:
            if not self.read_only:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")  # a decision acknowledged is on disk
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _beside(self) -> list[Path]:
        return [self.path.with_name(self.path.name + s) for s in ("-wal", "-shm")]

    def _check_readable(self) -> None:
        """A store to read: it must be there; read as it is (immutable) when this process may
        not write it, so no -shm is left beside it."""
        if not self.path.is_file():
            raise ReviewError(f"no review store at {self.path}: review the dataset first")
        if not os.access(self.path, os.R_OK):
            raise ReviewError(f"the review store {self.path} cannot be read (permissions)")
        wal, shm = self._beside()
        unwritten = wal.is_file() and wal.stat().st_size > 0
        if os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK | os.X_OK):
            return  # read-only by choice: SQLite's own read-only mode, sharing the -shm
        if unwritten and shm.is_file() and os.access(shm, os.R_OK):
            return  # SQLite reads the -wal through a -shm it may not write (a read-only mount)
        if unwritten:
            raise ReviewError(
                f"{wal} holds decisions not yet copied into {self.path}, and this process "
                "may not write there to read them: run as the store's owner, or make "
                f"{self.path.parent} writable, then try again"
            )
        self._immutable = True

    def _check_writable(self) -> None:
        """Name the file or folder that stops the store being written, before SQLite leaves
        a -shm beside a file it cannot write."""
        folder = self.path.parent
        if not folder.is_dir():
            raise ReviewError(f"cannot make the review store {self.path}: no folder {folder}")
        if self.path.exists() and not os.access(self.path, os.W_OK):
            if _read_only_mount(folder):
                raise ReviewError(
                    f"the review store {self.path} is read-only: {folder} is on a read-only "
                    "file system (mount). 'cartoqa review export' and 'label-studio-export' "
                    "read it as it is; to review, remount it read-write, or copy the dataset "
                    "folder (with its review.sqlite) somewhere writable and review the copy"
                )
            raise ReviewError(
                f"the review store {self.path} is read-only: 'cartoqa review export' and "
                "'label-studio-export' read it as it is; to review, make it writable "
                f"(chmod u+w {self.path})"
            )
        for extra in self._beside():
            if extra.exists() and not os.access(extra, os.W_OK):
                raise ReviewError(
                    f"{extra} is read-only (left by a process that could not write the "
                    f"store): with no review tool open on {self.path.name}, delete {extra} "
                    "(it holds no decisions) or make it writable"
                )
        if not os.access(folder, os.W_OK | os.X_OK):
            if _read_only_mount(folder):
                raise ReviewError(
                    f"cannot write the review store {self.path}: {folder} is on a read-only "
                    "file system (mount); remount it read-write, copy the dataset folder "
                    "somewhere writable, or give --store a file in a folder you may write"
                )
            raise ReviewError(
                f"cannot write in {folder}, where the review store {self.path.name} keeps "
                f"its -wal and -shm files: make the folder writable, or give --store a file "
                "in a folder you may write"
            )

    def _explain(self, exc: sqlite3.Error, what: str) -> ReviewError:
        """An SQLite error as a ``ReviewError`` naming the file that is in the way."""
        text = str(exc)
        damaged = ("malformed", "not a database", "encrypted", "disk i/o error", "corrupt")
        if any(d in text.lower() for d in damaged):
            return ReviewError(
                f"the review store {self.path} is damaged ({text}): its decisions cannot "
                "be read. Restore it from a backup (a reviewed export keeps every decision "
                f"in review.jsonl), or rescue what is left with 'sqlite3 {self.path} "
                ".recover | sqlite3 rescued.sqlite'; to start the review over, move the "
                "file away (its decisions are then lost to the tool)"
            )
        if "locked" in text or "busy" in text:
            return StoreBusyError(
                f"the review store {self.path} is busy (another process is writing it): try again"
            )
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            for f in [self.path, *self._beside()]:
                if f.exists() and not os.access(f, os.W_OK):
                    return ReviewError(f"the review store {what}: {f} is read-only ({text})")
            if not os.access(self.path.parent, os.W_OK | os.X_OK):
                return ReviewError(
                    f"the review store {self.path} {what}: its folder {self.path.parent} "
                    f"is not writable ({text})"
                )
        return ReviewError(f"the review store {self.path} {what}: {text}")

    def _check_current(self) -> None:
        """Refuse to write a store that is no longer the file at ``path``: the dataset was
        rebuilt (``cartoqa build --overwrite`` carries the store into the new folder), and
        a decision written here would go to the old, deleted copy."""
        moved = self._db.execute("PRAGMA user_version").fetchone()[0] == CARRIED_MARK
        if moved or _file_id(self.path) != self._file_id:
            raise ReviewError(
                f"the dataset of {self.path} was rebuilt or replaced while this review store "
                "was open, and its decisions were carried into the new one: nothing was "
                "stored here; restart the review tool (or the command) on the dataset"
            )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction for several decisions (``decide`` inside it is a savepoint
        of it): all of them are stored, or none when the block raises."""
        if self.read_only:
            raise ReviewError(f"the review store {self.path} was opened to read only")
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._explain(exc, "cannot be written") from None
        try:
            self._check_current()
            yield
            db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise self._explain(exc, "cannot be written") from None
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read in the block sees the store as it was at its start (one read
        transaction: decisions made meanwhile by others are not seen, none half)."""
        db = self._db
        if db.in_transaction:
            yield
            return
        try:
            db.execute("BEGIN")
            db.execute("SELECT COUNT(*) FROM decisions").fetchone()  # the snapshot starts here
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise self._explain(exc, "cannot be read") from None
        try:
            yield
        finally:
            if db.in_transaction:
                db.execute("ROLLBACK")

    def close(self) -> None:
        with self._guard:
            dbs, self._open = self._open, []
        for db in dbs:
            db.close()
        self._local = threading.local()

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _q(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """One read, an SQLite error named as ``_explain`` does."""
        try:
            return self._db.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise self._explain(exc, "cannot be read") from None

    def twins_of(self, sample_id: str) -> list[str]:
        """The samples asking the same quantity of the same map in another unit."""
        return [t.id for t in self._twins.get(sample_id, [])]

    # ------------------------------------------------------------------ reading

    def history(self, sample_id: str) -> list[Decision]:
        """Every decision on the sample, oldest first."""
        rows = self._q(
            "SELECT * FROM decisions WHERE sample_id = ? ORDER BY version", (sample_id,)
        ).fetchall()
        return [_row(r) for r in rows]

    def all(self) -> list[Decision]:
        """Every decision in the store, in the order made."""
        return [_row(r) for r in self._q("SELECT * FROM decisions ORDER BY seq")]

    def latest(self, sample_id: str) -> Decision | None:
        """The latest decision that counts (made since the sample's last truth change)."""
        r = self._q(
            "SELECT * FROM decisions WHERE sample_id = ? AND version > ? "
            "ORDER BY version DESC LIMIT 1",
            (sample_id, self._since(sample_id)),
        ).fetchone()
        return _row(r) if r is not None else None

    def decision_at(self, sample_id: str, version: int) -> Decision | None:
        """The decision that made ``version`` of the sample (None: none did, or a truth
        change did)."""
        r = self._q(
            "SELECT * FROM decisions WHERE sample_id = ? AND version = ?", (sample_id, version)
        ).fetchone()
        return _row(r) if r is not None else None

    def current(self, sample_id: str) -> list[Decision]:
        """The decisions that count: those made since the sample's last truth change."""
        since = self._since(sample_id)
        return [d for d in self.history(sample_id) if d.version > since]

    def version(self, sample_id: str) -> int:
        """The number of decisions made on the sample, and of truth changes a rebuild made
        to it (0: none yet)."""
        r = self._q(
            "SELECT COALESCE(MAX(version), 0) FROM decisions WHERE sample_id = ?", (sample_id,)
        ).fetchone()
        return max(int(r[0]), self._since(sample_id))

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
        start = 0
        changes = self._changes.get(sample.id, [])
        if changes:  # the truth generated then: the one the decisions of that stretch were about
            before = [c for c in changes if c["version"] <= version]
            shown = before[-1]["truth_after"] if before else changes[0]["truth_before"]
            start = before[-1]["version"] if before else 0
        for d in self.history(sample.id):
            if start < d.version <= version and d.truth_after is not None:
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
        for d in self.current(sample_id):
            out[normalise_reviewer(d.reviewer)] = d
        return out

    def status(self, sample_id: str) -> str:
        """ "unreviewed", "accepted", "corrected", "rejected" (as the latest decision, once
        ``required`` reviewers agree), "needs another review", "disputed", or "truth changed"
        (a rebuild changed its generated truth and nobody has decided on the new one)."""
        current = self.current(sample_id)
        if not current and self._since(sample_id):
            return "truth changed"
        return self._status_of(current)

    def statuses(self) -> dict[str, tuple[str, int, list[str]]]:
        """For every sample with a decision, in one read that decodes no truth: (status,
        version, reviewers in the order they first decided).  Samples missing are
        unreviewed, version 0."""
        by: dict[str, list[tuple[str, str, str]]] = {}
        versions: dict[str, int] = {}
        rows = self._q(
            "SELECT sample_id, reviewer, verdict, truth_after, version FROM decisions "
            "ORDER BY sample_id, version"
        )
        for sid, reviewer, verdict, after, version in rows:
            versions[sid] = version
            if version <= self._since(sid):
                continue  # about a truth a rebuild changed
            key = "reject" if verdict == "reject" else after  # stored with sorted keys
            by.setdefault(sid, []).append((normalise_reviewer(reviewer), verdict, key))
        out = {}
        for sid in {*versions, *self._changes}:
            history = by.get(sid, [])
            version = max(versions.get(sid, 0), self._since(sid))
            who = list(dict.fromkeys(r for r, _, _ in history))
            status = self._status_from(history) if history else "truth changed"
            out[sid] = (status, version, who)
        return out

    def _status_of(self, history: list[Decision]) -> str:
        """The status of a sample with these decisions (oldest first)."""
        return self._status_from(
            [(normalise_reviewer(d.reviewer), d.verdict, _agreement_key(d)) for d in history]
        )

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
        ids = [r[0] for r in self._q("SELECT DISTINCT sample_id FROM decisions")]
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
                "truth changed",
            ),
            0,
        )
        pairs = agree = 0
        ids = list(sample_ids)
        for sid in ids:
            status = self.status(sid)
            counts[status] += 1
            if status not in ("unreviewed", "truth changed"):
                counts["reviewed"] += 1
            latest = self.reviewers_latest(sid)
            if len(latest) >= 2:
                pairs += 1
                agree += len({_agreement_key(d) for d in latest.values()}) == 1
        return {
            "samples": len(ids),
            **counts,
            "decisions": int(self._q("SELECT COUNT(*) FROM decisions").fetchone()[0]),
            "reviewers": sorted({normalise_reviewer(r[0]) for r in self._q(_REVIEWERS)}),
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
        none.  ``StaleEditError`` when another decision came in since ``seen``.  A
        correction of a sample with twins corrects them too, in the same transaction."""
        if self.read_only:
            raise ReviewError(f"the review store {self.path} was opened to read only")
        reviewer = check_reviewer(reviewer)
        if verdict not in VERDICTS:
            raise ReviewError(f"verdict {verdict!r}: use one of {', '.join(VERDICTS)}")
        if (verdict == "correct") != (truth is not None):
            raise ReviewError(
                "a correction gives the corrected truth"
                if verdict == "correct"
                else f"'{verdict}' takes no truth (a changed truth is a 'correct')"
            )
        after: dict[str, Any] | None = None
        if truth is not None:
            after = self._checked(sample, truth)
        db = self._db
        outer = db.in_transaction  # inside ``transaction()``: a savepoint of it
        begin, commit, rollback = (
            ("SAVEPOINT decide", "RELEASE decide", "ROLLBACK TO decide; RELEASE decide")
            if outer
            else ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
        )

        def undo() -> None:
            if db.in_transaction:
                for stmt in rollback.split("; "):
                    db.execute(stmt)

        try:
            db.execute(begin)
        except sqlite3.OperationalError as exc:
            raise self._explain(exc, "cannot be written") from None
        try:
            self._check_current()
            version = self.version(sample.id)
            if seen < 0 or seen > version:
                raise ReviewError(
                    f"{sample.id} has no version {seen} (it is at version {version}): "
                    "reload the sample"
                )
            if version != seen:
                latest = self.latest(sample.id)
                assert latest is not None  # seen < version: a decision came in between
                undo()
                raise StaleEditError(
                    f"{sample.id} was changed while you looked at version {seen}: "
                    f"{latest.reviewer} made it '{latest.verdict}' at {latest.at} "
                    f"(version {latest.version}); your decision was not stored, look again",
                    latest,
                )
            at = _now()
            if verdict == "accept":  # of a rejected sample: the truth it dropped comes back
                after = self.shown_truth(sample)
            follow: list[tuple[Sample, dict[str, Any]]] = []
            if verdict == "correct" and after is not None:
                after, follow = self._twin_corrections(sample, after)
            cur = self._insert(sample, version + 1, reviewer, verdict, at, after, reason)
            for twin, twin_after in follow:
                self._insert(
                    twin,
                    self.version(twin.id) + 1,
                    reviewer,
                    "correct",
                    at,
                    twin_after,
                    f"follows the correction of {sample.id}"
                    + (f" ({reason.strip()})" if reason.strip() else ""),
                )
            db.execute(commit)
        except StaleEditError:
            raise
        except sqlite3.DatabaseError as exc:
            undo()
            raise self._explain(exc, "cannot be written") from None
        except BaseException:
            undo()
            raise
        r = db.execute("SELECT * FROM decisions WHERE seq = ?", (cur.lastrowid,)).fetchone()
        return _row(r)

    def _insert(
        self,
        sample: Sample,
        version: int,
        reviewer: str,
        verdict: str,
        at: str,
        after: dict[str, Any] | None,
        reason: str,
    ) -> sqlite3.Cursor:
        before = self.effective_truth(sample)
        row = (
            sample.id,
            version,
            reviewer,
            verdict,
            at,
            json.dumps({} if before is None else before, ensure_ascii=False, sort_keys=True),
            None if after is None else json.dumps(after, ensure_ascii=False, sort_keys=True),
            reason.strip(),
        )
        return self._db.execute(
            "INSERT INTO decisions (sample_id, version, reviewer, verdict, at, "
            "truth_before, truth_after, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )

    def _twin_corrections(
        self, sample: Sample, after: dict[str, Any]
    ) -> tuple[dict[str, Any], list[tuple[Sample, dict[str, Any]]]]:
        """The correction with its twins' units made consistent, and each twin not rejected
        whose value it changes, with its own truth converted."""
        follow = []
        for twin in self._twins.get(sample.id, []):
            mine = after.get("unit")
            current = self.effective_truth(twin)
            if current is None or current.get("kind") != "number":
                continue  # rejected, or no longer a number: left as it is
            theirs = current.get("unit")
            factor = UNIT_FACTORS.get((str(mine), str(theirs)))
            if factor is None:
                continue
            value = round(float(after["value"]) * factor, 2)
            after = {**after, "equivalents": {**after.get("equivalents", {}), theirs: value}}
            if current.get("value") == value:
                continue
            scaled = {
                k: round(float(v) * value / float(current["value"]), 6)
                for k, v in current.get("equivalents", {}).items()
                if k != mine and float(current["value"]) != 0
            }
            twin_after = {
                **current,
                "value": value,
                "equivalents": {**scaled, mine: after["value"]},
            }
            follow.append((twin, self._checked(twin, twin_after)))
        return after, follow

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
            raise ReviewError(
                f"{sample.id}: the corrected truth is not valid for task {sample.task!r} "
                f"({where}: {first.get('msg')})"
            ) from None
        return parsed.model_dump(mode="json")


def _read_only_mount(folder: Path) -> bool:
    """Whether ``folder`` is on a file system mounted read-only."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _same_truth(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two truths as JSON are the same (compared as the store writes them)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _file_id(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` (device, inode), None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def find_twins(samples: Iterable[Sample]) -> dict[str, list[Sample]]:
    """Samples of one task and one map whose truths are one number in two units (each
    listing the other's unit among its equivalents): RLE's ``-m`` and ``-ft``."""
    groups: dict[tuple[str, str], list[Sample]] = {}
    for s in samples:
        t = s.ground_truth
        if getattr(t, "kind", None) == "number" and s.prompt.images and getattr(t, "unit", None):
            groups.setdefault((s.task, s.prompt.images[0]), []).append(s)
    out: dict[str, list[Sample]] = {}
    for group in groups.values():
        for a in group:
            for b in group:
                ua, ub = (
                    getattr(a.ground_truth, "unit", None),
                    getattr(b.ground_truth, "unit", None),
                )
                ea = getattr(a.ground_truth, "equivalents", {})
                eb = getattr(b.ground_truth, "equivalents", {})
                if a.id != b.id and ua != ub and ub in ea and ua in eb:
                    out.setdefault(a.id, []).append(b)
    return out


_PAST = {"accept": "accepted", "correct": "corrected", "reject": "rejected"}
_REVIEWERS = "SELECT DISTINCT reviewer FROM decisions"


def _agreement_key(d: Decision) -> str:
    """Two decisions agree when their verdict and the truth after them are the same."""
    if d.verdict == "reject":
        return "reject"
    return json.dumps(d.truth_after, sort_keys=True)
