"""A truly read-only view of a folder for tests: root writes through permission bits, so as
root the view is a read-only bind mount (the test is skipped where mounting is not
allowed)."""

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only_mount(src: Path, view: Path) -> Iterator[Path]:
    """Bind ``src`` at the existing folder ``view``, read-only, for the block; unmounted
    after.  For root only (others use permission bits)."""
    if shutil.which("mount") is None:
        pytest.skip("root without mount(8): cannot make a read-only folder")
    ok = subprocess.run(["mount", "--bind", str(src), str(view)], capture_output=True)
    if ok.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {ok.stderr.decode().strip()}")
    try:
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True)
        if ro.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {ro.stderr.decode().strip()}")
        yield view
    finally:
        subprocess.run(["umount", str(view)], capture_output=True)
