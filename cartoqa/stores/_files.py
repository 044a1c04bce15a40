"""Small file helpers shared by the stores."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half;
    each writer (process or thread) has its own temporary sibling, removed if writing fails,
    so two writers at once leave one whole file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_files_atomic(files: Mapping[Path, bytes]) -> None:
    """Write several files so that each one is the old file or the new one, never half, and
    the set is all old or all new: every file is first written whole (and synced) to a
    temporary sibling, so a full disk fails there with nothing replaced and the temporaries
    removed; only then is each swapped in with ``os.replace``."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items():
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            staged.append((tmp, path))
            with open(tmp, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def strict_json(obj: Any) -> Any:
    """``obj`` with every float that is not finite (NaN, +-inf) replaced by ``None``, walking
    dicts, lists and tuples; strict JSON readers (JavaScript, jq) refuse ``NaN``, so every JSON
    file cartoqa writes goes through this and ``json.dumps(..., allow_nan=False)``."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_json(v) for v in obj]
    return obj


def json_text(obj: Any, *, indent: int | None = 2, **kwargs: Any) -> str:
    """Strict JSON text of ``obj``: non-finite floats written as ``null`` (see ``strict_json``);
    ``allow_nan=False`` so anything else that is not JSON fails here, not in a reader."""
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(strict_json(obj), indent=indent, allow_nan=False, **kwargs)


def write_json_atomic(path: Path, obj: Any) -> None:
    write_atomic(path, (json_text(obj) + "\n").encode("utf-8"))


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def slug(text: str, max_len: int = 60) -> str:
    """A file-name-safe version of ``text`` ("openai:gpt-4o@http://x" -> "openai-gpt-4o-http-x")."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return (s or "x")[:max_len]


def ensure_writable_folder(
    folder: Path, *, what: str, error: type[CartoqaError] = CartoqaError
) -> Path:
    """Make ``folder`` (and its parents) if needed and check this user can write there;
    ``error`` names the folder, what it was for and the fix (a file in the way, no
    permission, a read-only disk) instead of an ``OSError`` traceback."""
    folder = Path(folder)
    for p in (folder, *folder.parents):
        if p.exists():
            if not p.is_dir():
                raise error(
                    f"cannot write {what} in {folder}: {p} is a file, not a folder; "
                    "choose another folder"
                )
            if not os.access(p, os.W_OK | os.X_OK):
                raise error(
                    f"cannot write {what} in {folder}: {p} is not writable by this user; "
                    "choose a folder you can write to"
                )
            break
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise error(
            f"cannot write {what} in {folder}: {exc.strerror}; choose another folder"
        ) from None
    return folder
