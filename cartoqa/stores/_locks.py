"""Exclusive, non-blocking locks that say who holds them.

A lock is an ``flock`` on a small file; the holder writes its pid, command
line and start time into it, so a second process can be refused with a
message that names the holder.  The kernel drops the lock when its holder
exits, even by SIGKILL, so a dead holder never blocks anyone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["HeldLock", "LockBusy", "describe_holder", "try_lock"]


class LockBusy(Exception):  # noqa: N818 - a state, caught at once
    """The lock is held by another process; ``holder`` describes it."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.path = path
        self.holder = holder


class HeldLock:
    """A lock this process holds; ``release`` (or the context's end) lets it go."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = -1

    def __enter__(self) -> HeldLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.release()


def describe_holder(text: str) -> str:
    """A readable description of what a holder wrote into its lock file."""
    try:
        info = json.loads(text)
    except json.JSONDecodeError:
        return "another process"
    if not isinstance(info, dict):
        return "another process"
    where = "" if info.get("host") == socket.gethostname() else f" on {info.get('host')}"
    return (
        f"process {info.get('pid')}{where} ({info.get('command', '?')!s:.120}), "
        f"since {info.get('since', '?')}"
    )


def try_lock(path: Path, *, wait_s: float = 0.0) -> HeldLock:
    """Take the lock at ``path`` (created if needed), waiting up to ``wait_s`` seconds
    (``float('inf')``: as long as it takes); raises ``LockBusy`` naming the holder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = describe_holder(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
                os.close(fd)
                raise LockBusy(path, holder) from None
            time.sleep(0.1)
        except BaseException:
            os.close(fd)
            raise
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "?",
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
    return HeldLock(path, fd)
