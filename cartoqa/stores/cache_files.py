"""Checked cache files: written whole with their SHA-256 beside them, read back only when they
check out (issue 27, items 1, 7 and 10).

    write_cache_file(path, data)                         # path.sha256 first, then path
    data = read_cache_file(path, what="map tile", check=png_check((256, 256)))
    if data is None: ...                                 # missing, or bad: dropped with a warning

A cache entry is its file plus ``<file>.sha256`` (the hex digest of its bytes), each written
under a temporary sibling and renamed into place, the digest first: a reader
that finds the file finds the digest that goes with it, and an entry whose writer died between
the two reads as bad. A read checks the bytes against the digest and then with ``check`` (a PNG
decodes at its size, a pickle loads, JSON parses); an entry that fails is *bad*: it is logged as
a warning naming the file and what was wrong, removed with its digest, and the caller makes it
again. An entry without a digest (written before these checks) is bad too.

Temporary files left by a writer that was killed or met a full disk are removed by
``clean_stale_tmp`` when the cache is next opened: a ``*.tmp`` (or ``*.tmp.*``) file or folder
is stale when it was not modified for ``STALE_TMP_S`` seconds and the process named in it (the
pid the writers put in the name) is not running, or, whatever its name says, when it was
not modified for ``ABANDONED_TMP_S`` seconds.  A live writer's file is never touched: its
process runs, and it was written moments ago.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cartoqa.stores._files import sha256_file

__all__ = [
    "ABANDONED_TMP_S",
    "STALE_TMP_S",
    "BadCacheEntry",
    "cache_file_ok",
    "clean_stale_tmp",
    "commit_cache_file",
    "decoded_png",
    "digest_path",
    "drop_cache_file",
    "load_cache_file",
    "png_check",
    "read_cache_file",
    "write_cache_file",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: a temporary file whose writer is gone and that was not touched for this long is stale
STALE_TMP_S = 60.0
#: a temporary file not touched for this long is stale, whatever its name says
ABANDONED_TMP_S = 3600.0


class BadCacheEntry(ValueError):  # noqa: N818 - a reason, raised by checks and caught here
    """What a check raises when a cache entry's bytes are not what they should be."""


def digest_path(path: Path) -> Path:
    """Where the SHA-256 of ``path`` is kept: ``<path>.sha256``."""
    return path.with_name(path.name + ".sha256")


def write_cache_file(path: Path, data: bytes) -> None:
    """Write a cache entry: its digest, then its bytes, each atomically (module docstring)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_whole(digest_path(path), hashlib.sha256(data).hexdigest().encode() + b"\n")
    _write_whole(path, data)


def _write_whole(path: Path, data: bytes) -> None:
    """``write_atomic`` without the fsync: a cache entry torn by a power cut fails its digest
    and is made again, so tiles need not wait for the disk; the temporary file is removed
    when writing fails (a full disk)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def commit_cache_file(tmp: Path, path: Path) -> None:
    """Make the whole file ``tmp`` (written by another tool, beside ``path``) the cache entry
    ``path``: its digest first, then the file renamed into place."""
    _write_whole(digest_path(path), sha256_file(tmp).encode() + b"\n")
    os.replace(tmp, path)


def _stored_digest(path: Path) -> str | None:
    try:
        text = digest_path(path).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return text if re.fullmatch(r"[0-9a-f]{64}", text) else None


def drop_cache_file(path: Path, *, what: str, why: str) -> None:
    """Warn that the cache entry ``path`` is bad (``why``) and remove it with its digest."""
    log.warning("the cached %s %s is bad (%s): dropped; it is made again", what, path, why)
    for p in (path, digest_path(path)):
        with contextlib.suppress(OSError):
            p.unlink()


def read_cache_file(
    path: Path,
    *,
    what: str,
    check: Callable[[bytes], Any] | None = None,
    drop: bool = True,
) -> bytes | None:
    """The bytes of the cache entry ``path`` when they match their digest and pass ``check``;
    None when there is no entry, or when it is bad: then (with ``drop``) it is logged as a
    warning and removed. ``drop=False`` only answers (for a reader outside the writers' lock,
    which checks again under it before dropping what a writer may be replacing)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = f"unreadable: {exc.strerror}"
    else:
        bad = _why_bad(path, data, check)
        if bad is None:
            return data
        why = bad
    if drop:
        drop_cache_file(path, what=what, why=why)
    return None


def load_cache_file(path: Path, load: Callable[[bytes], T], *, what: str) -> T | None:
    """``load(bytes)`` of the cache entry ``path`` (a pickle, JSON, npz): None when there is
    none, or when it is bad (its digest does not match, or ``load`` raises anything): then it
    is logged as a warning and removed, for the caller to make again."""
    result: list[T] = []

    def check(data: bytes) -> None:
        result.append(load(data))

    if read_cache_file(path, what=what, check=check) is None:
        return None
    return result[0]


def cache_file_ok(path: Path, *, what: str) -> bool:
    """Whether the cache file ``path`` (a big one, hashed as it is read) matches its digest;
    a file that does not is logged as a warning and removed (False); no file: False."""
    if not path.is_file():
        return False
    stored = _stored_digest(path)
    if stored is None:
        drop_cache_file(path, what=what, why="no SHA-256 beside it")
        return False
    try:
        actual = sha256_file(path)
    except OSError as exc:
        drop_cache_file(path, what=what, why=f"unreadable: {exc.strerror}")
        return False
    if actual != stored:
        drop_cache_file(path, what=what, why=_mismatch(path.stat().st_size))
        return False
    return True


def _mismatch(size: int) -> str:
    if size == 0:
        return "zero-length; its SHA-256 does not match the one written beside it"
    return f"{size} bytes whose SHA-256 does not match the one written beside it"


def _why_bad(path: Path, data: bytes, check: Callable[[bytes], Any] | None) -> str | None:
    stored = _stored_digest(path)
    if stored is None:
        return "no SHA-256 beside it"
    if hashlib.sha256(data).hexdigest() != stored:
        return _mismatch(len(data))
    if check is not None:
        try:
            check(data)
        except Exception as exc:  # any failure to load it makes it bad (pickle: anything)
            return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def png_check(size: tuple[int, int] | None = None) -> Callable[[bytes], None]:
    """A check that the bytes are a PNG that decodes whole (of ``size`` (width, height) when
    given); raises ``BadCacheEntry`` saying what is wrong."""

    def check(data: bytes) -> None:
        decoded_png(data, size=size)

    return check


def decoded_png(data: bytes, *, size: tuple[int, int] | None = None) -> tuple[int, int]:
    """The (width, height) of PNG ``data`` after decoding every pixel; ``BadCacheEntry`` when
    it is empty, not a PNG, cut short or damaged, or not of ``size``."""
    from PIL import Image

    from cartoqa.stores.image_bytes import cut_short

    if not data:
        raise BadCacheEntry("zero-length, not a PNG")
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise BadCacheEntry("not a PNG (no PNG signature)")
    problem = cut_short(data)  # PIL may be set to decode truncated images silently
    if problem:
        raise BadCacheEntry(problem)
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            got = im.size
    except Exception as exc:  # PIL raises OSError, SyntaxError, ValueError on damaged data
        raise BadCacheEntry(f"the PNG does not decode: {exc}") from None
    if size is not None and got != tuple(size):
        raise BadCacheEntry(f"a {got[0]}x{got[1]} PNG where {size[0]}x{size[1]} is expected")
    return got


#: the writer's pid in a temporary name: ``.<name>.<pid>.<hex>.tmp`` (``write_atomic``; a
#: suffix may follow, ``.tmp.osm``), ``<name>.tmp-<pid>-<hex>`` (folders), ``<name>.tmp<pid>``
_PID_IN_NAME = re.compile(r"\.(\d+)\.[0-9a-f]+\.tmp(?:\.|$)|\.tmp-(\d+)-|\.tmp(\d+)$")


def _pid_of(name: str) -> int | None:
    m = _PID_IN_NAME.search(name)
    if m is None:
        return None
    return int(next(g for g in m.groups() if g is not None))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone (or a number no pid can be)
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _is_tmp(name: str) -> bool:
    return (
        name.endswith(".tmp")
        or ".tmp." in name
        or ".tmp-" in name
        or bool(re.search(r"\.tmp\d+$", name))
    )


def clean_stale_tmp(folder: Path, *, recursive: bool = True, now: float | None = None) -> int:
    """Remove the stale temporary files and folders under ``folder`` (module docstring: not
    modified for ``STALE_TMP_S`` and their writer is not running, or not modified for
    ``ABANDONED_TMP_S``); returns how many. A folder that is not there holds none."""
    now = time.time() if now is None else now
    removed = 0
    if not folder.is_dir():
        return 0
    walker = os.walk(folder) if recursive else [(str(folder), *_split(folder))]
    for root, dirs, files in walker:
        for name in [*files, *dirs]:
            if not _is_tmp(name):
                continue
            p = Path(root) / name
            try:
                age = now - p.lstat().st_mtime
            except OSError:
                continue
            pid = _pid_of(name)
            stale = age > ABANDONED_TMP_S or (
                pid is not None and age > STALE_TMP_S and not _running(pid)
            )
            if not stale:
                continue
            if name in dirs:
                dirs.remove(name)
                shutil.rmtree(p, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    p.unlink()
            removed += 1
            log.info("removed %s, a temporary file a writer left behind", p)
    if removed:
        log.warning(
            "removed %d temporary file(s) left in the cache %s by writers that were killed or "
            "met a full disk",
            removed,
            folder,
        )
    return removed


def _split(folder: Path) -> tuple[list[str], list[str]]:
    dirs: list[str] = []
    files: list[str] = []
    with os.scandir(folder) as it:
        for e in it:
            (dirs if e.is_dir(follow_symlinks=False) else files).append(e.name)
    return dirs, files
