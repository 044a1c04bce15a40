"""Per-sample scores stored beside a run store, so reports read them instead of scoring again.

``cartoqa score`` writes each run's scores to ``<store stem>.scores-<key>.jsonl``
beside its store: a header line (what the scores were made by and from), then
one line per sample (``sample_id``, ``task`` and the ``SampleScore`` fields).
The key (``scoring_key``) hashes cartoqa's version, the scoring mode and each
task's scorer version (``TaskSpec.version``, which the caller reads off the
registry: ``cartoqa.scoring.task_versions``; stores know no task); the header records the key, the
mode, the dataset's hash and the run store's size and SHA-256.  ``read_scores``
gives the stored scores only while all of these still hold, else None (the
caller scores afresh and writes them again).

Every line is strict JSON (readers such as jq and JavaScript refuse ``NaN``): a
per-sample value that is not finite is written as null and named in the line's
``nonfinite``, and read back as it was.  Files are written whole to a
temporary sibling and swapped in with one ``os.replace``: a reader sees the
old file or the new one, never half of either, and two writers at once leave
one of their (equal) files whole.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.records import Sample, SampleScore
from cartoqa.records.scores import SCORE_SCHEMA_VERSION

from ._files import json_text, write_atomic

__all__ = [
    "SCORES_FORMAT",
    "Fingerprint",
    "StoreState",
    "fingerprint",
    "read_scores",
    "scores_path",
    "scoring_key",
    "store_state",
    "write_scores",
]

SCORES_FORMAT = 2
"""Version of the scores file's layout (its header's ``cartoqa_scores``).  2: strict JSON, a
value that is not finite written as null and named in the line's ``nonfinite``."""

Scored = dict[str, list[tuple[Sample, SampleScore]]]
"""Task -> (sample, score), as ``cartoqa.scoring.score_samples`` gives them."""


def scoring_key(versions: Mapping[str, str], mode: str) -> str:
    """A short hash of what a scoring depends on besides the responses and samples:
    cartoqa's version, the mode ("cartoqa" or "original") and each task's (name, scorer
    version) in ``versions`` (``cartoqa.scoring.scoring_versions``), with the layout of a
    ``SampleScore``."""
    blob = json.dumps(
        {
            "cartoqa": __version__,
            "mode": mode,
            "tasks": sorted(versions.items()),
            "score_schema": SCORE_SCHEMA_VERSION,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def scores_path(store_path: str | Path, key: str) -> Path:
    """Where a run store's scores of ``key`` are kept: ``<store stem>.scores-<key>.jsonl``."""
    store_path = Path(store_path)
    return store_path.with_name(f"{store_path.stem}.scores-{key}.jsonl")


# ------------------------------------------------------------------ what the scores came from


@dataclass(frozen=True)
class StoreState:
    """A cheap look at a file (inode, size, modification time): unequal looks mean it
    changed in between."""

    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> StoreState:
        return cls(st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class Fingerprint:
    """A run store's bytes as the scores were made from them."""

    size: int
    sha256: str


def store_state(path: str | Path) -> StoreState | None:
    """The file's state now; None when it cannot be looked at."""
    try:
        return StoreState.of(os.stat(path))
    except OSError:
        return None


def fingerprint(path: str | Path, *, since: StoreState | None = None) -> Fingerprint | None:
    """The file's size and SHA-256; None when it cannot be read, when it changed while it
    was hashed, or when it is no longer as it was at ``since`` (a state taken before its
    records were read: then the hash may not be of the bytes those records came from)."""
    h = hashlib.sha256()
    n = 0
    try:
        with open(path, "rb") as f:
            first = StoreState.of(os.fstat(f.fileno()))
            if since is not None and first != since:
                return None
            while block := f.read(1 << 20):
                h.update(block)
                n += len(block)
            if StoreState.of(os.fstat(f.fileno())) != first or n != first.size:
                return None
    except OSError:
        return None
    return Fingerprint(n, h.hexdigest())


# ------------------------------------------------------------------ writing and reading


def write_scores(
    store_path: str | Path,
    key: str,
    scored: Mapping[str, Sequence[tuple[Sample, SampleScore]]],
    *,
    mode: str,
    versions: Mapping[str, str],
    store: Fingerprint,
    dataset_sha256: str,
) -> Path:
    """Write the scores of one run beside its store, atomically; returns the file.
    ``versions``: the scored tasks' scorer versions (``cartoqa.scoring.task_versions``),
    recorded in the header.  Raises ``OSError`` when the folder cannot be written
    (read-only, full): nothing is left behind."""
    path = scores_path(store_path, key)
    rows = [row for task in scored for row in scored[task]]
    header = {
        "cartoqa_scores": SCORES_FORMAT,
        "key": key,
        "mode": mode,
        "cartoqa": __version__,
        "tasks": dict(versions),
        "dataset_sha256": dataset_sha256,
        "store": {"name": Path(store_path).name, "size": store.size, "sha256": store.sha256},
        "samples": len(rows),
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    lines = [_dumps(header)]
    lines += [_score_line(sample, score) for sample, score in rows]
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path


def read_scores(
    store_path: str | Path,
    key: str,
    samples: Sequence[Sample],
    *,
    store: Fingerprint,
    dataset_sha256: str,
) -> Scored | None:
    """The stored scores of ``samples`` (task -> (sample, score), in the samples' order, as
    ``score_samples`` gives them), or None when there are none to trust: no file, another
    key, another dataset, a run store that is not the one they were made from (``store``:
    its fingerprint now), not one score for each sample, or a file that does not read."""
    path = scores_path(store_path, key)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    try:
        header = json.loads(lines[0]) if lines else None
        if not isinstance(header, dict):
            return None
        made_from = header.get("store") or {}
        if (
            header.get("cartoqa_scores") != SCORES_FORMAT
            or header.get("key") != key
            or header.get("dataset_sha256") != dataset_sha256
            or made_from.get("size") != store.size
            or made_from.get("sha256") != store.sha256
            or header.get("samples") != len(lines) - 1
        ):
            return None
        by_id: dict[str, tuple[str, SampleScore]] = {}
        for line in lines[1:]:
            rec = json.loads(line)
            sample_id, task = rec.pop("sample_id"), rec.pop("task")
            for name, value in (rec.pop("nonfinite", None) or {}).items():
                rec["values"][name] = float(_NONFINITE[value])
            if sample_id in by_id:
                return None
            by_id[sample_id] = (task, SampleScore.model_validate(rec))
    except (ValueError, TypeError, KeyError, AttributeError):  # pydantic's errors are ValueErrors
        return None
    if len(by_id) != len(samples):
        return None
    out: Scored = {}
    for s in samples:
        task, score = by_id.get(s.id, (None, None))
        if score is None or task != s.task:
            return None
        out.setdefault(s.task, []).append((s, score))
    return out


_NONFINITE = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}


def _nonfinite_name(x: float) -> str:
    return "NaN" if math.isnan(x) else "Infinity" if x > 0 else "-Infinity"


def _score_line(sample: Sample, score: SampleScore) -> str:
    """One sample's score as strict JSON: a value that is not finite is null in ``values``
    (what strict readers take) and named in ``nonfinite`` ("NaN", "Infinity", "-Infinity"),
    so that it reads back as it was."""
    rec: dict[str, Any] = {"sample_id": sample.id, "task": sample.task, **score.model_dump()}
    odd = {
        k: _nonfinite_name(v)
        for k, v in score.values.items()
        if isinstance(v, float) and not math.isfinite(v)
    }
    if odd:
        rec["nonfinite"] = odd
    return _dumps(rec)


def _dumps(obj: Any) -> str:
    # strict JSON (no NaN): floats round-trip; non-finite ones are null (see _score_line)
    return json_text(obj, indent=None, separators=(",", ":"))
