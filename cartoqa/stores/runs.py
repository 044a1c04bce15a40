"""The run store: one JSONL file of responses per (dataset, model, settings).

Each record is one line, written by a single ``write`` on a file opened for
appending, under an exclusive lock.  A process killed at any instant leaves
at worst a last line without its newline; the store drops that torn tail
when it is opened for writing again (and says so), so a resumed run loses no
complete response and writes none twice.  A last line that is a whole record
and lacks only its newline is kept (the newline is added), never dropped.
Several processes may append to one store: each re-reads what the others
wrote before it appends.  Threads of one process may share a store.

A *run* has one writer at a time: ``cartoqa run`` takes the store's writer
lock (``claim_writer``) for its whole length, and a second run of the same
dataset, model and settings is refused at once with a message naming the
first (or waits, with ``--wait``).  Readers (``cartoqa score``) open the
store read-only (``RunStore(path, readonly=True)``) and change nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cartoqa import __version__
from cartoqa.errors import RunStoreError
from cartoqa.records import RunRecord

from ._files import ensure_writable_folder, slug, write_json_atomic
from ._locks import HeldLock, LockBusy, try_lock

__all__ = ["RunInfo", "RunStore", "find_runs", "run_id"]

log = logging.getLogger(__name__)


def run_id(dataset_sha256: str, model: str, settings: Mapping[str, Any]) -> str:
    """A short stable id of (dataset, model, settings): equal inputs give the same store."""
    key = json.dumps(
        {"dataset": dataset_sha256, "model": model, "settings": settings},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


class RunStore:
    """Responses of one model, with one set of settings, to one dataset.

    Open it with ``RunStore.open(runs_dir, dataset_name=..., dataset_sha256=...,
    model=..., settings=...)``; the same arguments find the same file again,
    which is how a run resumes.  ``durable=True`` also fsyncs every line
    (survives power loss, costs a disk flush per response).
    """

    def __init__(self, path: str | Path, *, durable: bool = False, readonly: bool = False) -> None:
        self.path = Path(path)
        self.durable = durable
        self.readonly = readonly
        self.torn_bytes = 0
        """Read-only stores: bytes of an incomplete last line, left as they are."""
        try:
            if readonly:
                self._fd = os.open(self.path, os.O_RDONLY)
            else:
                ensure_writable_folder(self.path.parent, what="run stores", error=RunStoreError)
                self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunStoreError(f"cannot open the run store {self.path}: {exc.strerror}") from None
        # flock excludes other processes; threads of this one share the descriptor's lock
        self._thread_lock = threading.RLock()
        self._records: list[RunRecord] = []
        self._completed: set[str] = set()
        self._first_ok: dict[str, RunRecord] = {}
        self._extra_ok: dict[str, int] = {}
        self._counts: dict[str, int] = {}
        self._offset = 0
        self._lines = 0
        self.repaired_bytes = 0
        """Bytes of a torn last line dropped when the store was opened."""
        if readonly:
            self._read_new()
            self._read_tail()
            return
        with self._locked():
            self._repair_tail()
            self._read_new()

    # ------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        runs_dir: str | Path,
        *,
        dataset_name: str,
        dataset_sha256: str,
        model: str,
        settings: Mapping[str, Any] | None = None,
        durable: bool = False,
    ) -> RunStore:
        """Open (or create) the store for this dataset, model and settings under ``runs_dir``."""
        settings = dict(settings or {})
        rid = run_id(dataset_sha256, model, settings)
        runs_dir = ensure_writable_folder(Path(runs_dir), what="run stores", error=RunStoreError)
        path = runs_dir / f"{slug(dataset_name)}__{slug(model)}__{rid}.jsonl"
        meta_path = path.with_suffix(".meta.json")
        meta = {
            "run_id": rid,
            "dataset": dataset_name,
            "dataset_sha256": dataset_sha256,
            "model": model,
            "settings": settings,
        }
        if meta_path.exists():
            try:
                old = json.loads(meta_path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RunStoreError(
                    f"{meta_path} is not valid JSON ({getattr(exc, 'msg', exc)}); it describes "
                    f"the run in {path.name}: restore it, or delete both to start over"
                ) from None
            if not isinstance(old, dict):
                raise RunStoreError(
                    f"{meta_path} is not a run description (a JSON object); restore it, or "
                    f"delete it and {path.name} to start over"
                )
            mismatch = [k for k in meta if old.get(k) != meta[k]]
            if mismatch:
                raise RunStoreError(
                    f"{meta_path} describes another run (differs in {', '.join(mismatch)}); "
                    "use another runs folder"
                )
        else:
            write_json_atomic(
                meta_path,
                {
                    **meta,
                    "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "cartoqa": __version__,
                },
            )
        return cls(path, durable=durable)

    # ------------------------------------------------------------ reading

    def _locked(self) -> _Lock:
        return _Lock(self._fd, self._thread_lock)

    def _last_newline_end(self, size: int) -> int:
        pos, chunk = size, 65536
        while pos > 0:
            start = max(0, pos - chunk)
            data = os.pread(self._fd, pos - start, start)
            i = data.rfind(b"\n")
            if i >= 0:
                end = start + i + 1
                break
            pos = start
        else:
            end = 0
        return end

    def _tail_record(self, end: int, size: int) -> RunRecord | None:
        """The bytes after the last newline as a record, if they are a whole one."""
        if size - end > 64 << 20:
            return None
        try:
            return RunRecord.model_validate_json(os.pread(self._fd, size - end, end))
        except ValidationError:
            return None

    def _read_tail(self) -> None:
        """Read-only: a last line without its newline counts if it is a whole record."""
        size = os.fstat(self._fd).st_size
        if size <= self._offset:
            return
        rec = self._tail_record(self._offset, size)
        if rec is None:
            self.torn_bytes = size - self._offset
            return
        self._add(rec)

    def _repair_tail(self) -> None:
        size = os.fstat(self._fd).st_size
        if size == self._offset:
            return
        # find the last newline; anything after it is a line cut short by a kill, unless it
        # is a whole record that lacks only its newline (then the newline is added)
        end = self._last_newline_end(size)
        if end < size and self._tail_record(end, size) is not None:
            os.write(self._fd, b"\n")
            log.warning("%s: added the missing newline after the last record", self.path)
            self._read_new()
            return
        if end < size:
            self.repaired_bytes = size - end
            log.warning(
                "%s: dropped a torn last line of %d bytes (a run was killed while writing it)",
                self.path,
                size - end,
            )
            os.ftruncate(self._fd, end)

    def _read_new(self) -> None:
        size = os.fstat(self._fd).st_size
        if size <= self._offset:
            return
        data = os.pread(self._fd, size - self._offset, self._offset)
        cut = data.rfind(b"\n") + 1  # only whole lines; a writer may be mid-way elsewhere
        for raw in data[:cut].splitlines():
            self._lines += 1
            if raw.strip():
                try:
                    rec = RunRecord.model_validate_json(raw)
                except ValidationError as exc:
                    raise RunStoreError(
                        f"{self.path}:{self._lines}: not a run record ({exc.errors()[0]['msg']}); "
                        "the file was edited by hand or by another program"
                    ) from None
                self._add(rec)
        self._offset += cut

    def _add(self, rec: RunRecord) -> None:
        self._records.append(rec)
        self._counts[rec.sample_id] = self._counts.get(rec.sample_id, 0) + 1
        if rec.ok:
            self._completed.add(rec.sample_id)
            if rec.sample_id in self._first_ok:  # never written by cartoqa run: see latest()
                self._extra_ok[rec.sample_id] = self._extra_ok.get(rec.sample_id, 0) + 1
            else:
                self._first_ok[rec.sample_id] = rec

    def refresh(self) -> None:
        """Read records other processes appended since the last look."""
        if self.readonly:
            self._read_new()
            return
        with self._locked():
            self._read_new()

    # ------------------------------------------------------------ one writer per run

    @property
    def lock_path(self) -> Path:
        return self.path.with_suffix(".lock")

    def claim_writer(self, *, wait_s: float = 0.0) -> HeldLock:
        """The run's writer lock, held until released (or the process ends, however it ends).
        Raises ``RunStoreError`` naming the holder when another run has it after ``wait_s``."""
        try:
            try:
                return try_lock(self.lock_path)
            except LockBusy as busy:
                if wait_s <= 0:
                    raise
                log.warning("waiting for the run of %s: %s", self.path.name, busy.holder)
            return try_lock(self.lock_path, wait_s=wait_s)
        except LockBusy as busy:
            raise RunStoreError(
                f"another run is answering into {self.path.name}: {busy.holder}. Two runs of "
                "one dataset, model and settings would send every request twice; wait for it "
                "to finish (or pass --wait), then run again to resume"
            ) from None
        except OSError as exc:
            raise RunStoreError(f"cannot lock {self.lock_path}: {exc.strerror}") from None

    def add_notes(self, notes: list[str]) -> None:
        """Record notes about how the run was made (settings an SDK left out, say) in its
        meta.json, each once."""
        meta_path = self.path.with_suffix(".meta.json")
        if not notes or not meta_path.exists():
            return
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        known = list(meta.get("notes", []))
        new = [n for n in notes if n not in known]
        if new:
            meta["notes"] = known + new
            write_json_atomic(meta_path, meta)

    @property
    def records(self) -> list[RunRecord]:
        """Every record in file order, failed attempts included."""
        return list(self._records)

    def __iter__(self) -> Iterator[RunRecord]:
        return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)

    def completed_ids(self) -> set[str]:
        """Samples with a successful response: a resumed run skips these."""
        return set(self._completed)

    def latest(self) -> dict[str, RunRecord]:
        """The record that counts for each sample: its first successful response, else its
        latest error.

        A sample has one successful record: ``append`` refuses a second.  A store with more
        (lines copied in by hand, two stores joined) keeps its first answer, the one a run
        would have resumed past; ``duplicates`` names the samples, and ``cartoqa score``
        says so."""
        out: dict[str, RunRecord] = {}
        for rec in self._records:
            if rec.sample_id in self._completed:
                continue
            out[rec.sample_id] = rec
        out.update(self._first_ok)
        return {rec.sample_id: out[rec.sample_id] for rec in self._records if rec.sample_id in out}

    def duplicates(self) -> dict[str, int]:
        """Samples with more than one successful record, and how many they have; only the
        first counts (``latest``)."""
        return {sid: n + 1 for sid, n in self._extra_ok.items()}

    def attempts(self, sample_id: str) -> int:
        """How many records this sample has (failed tries and the success)."""
        return self._counts.get(sample_id, 0)

    # ------------------------------------------------------------ writing

    def append(self, record: RunRecord) -> bool:
        """Append one record atomically; returns False (and writes nothing) when the
        sample already has a successful response, from this process or another."""
        if self.readonly:
            raise RunStoreError(f"{self.path} was opened read-only")
        line = (record.model_dump_json() + "\n").encode("utf-8")
        with self._locked():
            self._read_new()
            self._repair_tail()  # under the lock, a line without its newline is a dead writer's
            if record.sample_id in self._completed:
                return False
            written = 0
            while written < len(line):
                written += os.write(self._fd, line[written:])
            if self.durable:
                os.fsync(self._fd)
            self._offset += len(line)
            self._lines += 1
            self._add(record)
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.close()


@dataclass(frozen=True)
class RunInfo:
    """A run store found on disk, from its meta.json."""

    path: Path
    """The store (JSONL)."""
    meta: dict[str, Any]
    """Its meta.json: run_id, dataset, dataset_sha256, model, settings, notes."""

    @property
    def run_id(self) -> str:
        return str(self.meta.get("run_id", ""))

    @property
    def model(self) -> str:
        return str(self.meta.get("model", ""))

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self.meta.get("settings") or {})

    def open(self) -> RunStore:
        """The store, read-only."""
        return RunStore(self.path, readonly=True)


def find_runs(
    runs_dir: str | Path, *, dataset_sha256: str | None = None
) -> tuple[list[RunInfo], list[str]]:
    """The run stores under ``runs_dir`` (of one dataset, when its hash is given), and a
    message for each meta.json that cannot be read (the rest are still found)."""
    found: list[RunInfo] = []
    problems: list[str] = []
    folder = Path(runs_dir)
    if not folder.is_dir():
        return found, problems
    for meta_path in sorted(folder.glob("*.meta.json")):
        store = meta_path.with_name(meta_path.name.removesuffix(".meta.json") + ".jsonl")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if not isinstance(meta, dict) or "model" not in meta:
                raise ValueError("not a run description")
        except (OSError, ValueError) as exc:
            problems.append(
                f"{meta_path} cannot be read ({str(exc)[:80]}); the run in {store.name} is "
                "left out: restore the file, or delete both"
            )
            continue
        if dataset_sha256 is not None and meta.get("dataset_sha256") != dataset_sha256:
            continue
        if store.exists():
            found.append(RunInfo(store, meta))
    return found, problems


class _Lock:
    def __init__(self, fd: int, thread_lock: threading.RLock) -> None:
        self.fd = fd
        self.thread_lock = thread_lock

    def __enter__(self) -> None:
        self.thread_lock.acquire()
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            self.thread_lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            self.thread_lock.release()
