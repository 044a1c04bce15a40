"""A review store that is damaged or on a read-only mount (issue 27, item 8): `review
serve` and `review export` end with a message naming the file, the problem and the fix, never
an sqlite3 traceback; a store that can be read is exported from a read-only mount."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from annotations.decisions import DecisionStore
from cartoqa.stores import load_dataset
from tests.cartoqa.model_data import kinds_dataset
from tests.cartoqa.read_only import read_only_mount

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARTOQA_TEST")}
    r = subprocess.run(
        [sys.executable, "-m", "cartoqa", *args],
        capture_output=True,
        text=True,
        timeout=120,  # a serve that started on a damaged store would hang: killed, failed
        cwd=ROOT,
        env=env,
    )
    return r.returncode, " ".join((r.stdout + r.stderr).split())


def _reviewed(folder: Path, n: int = 1) -> Path:
    """A dataset with ``n`` rounds of decisions on every sample, in one transaction."""
    kinds_dataset(folder, copies=1)
    ds = load_dataset(folder)
    with DecisionStore.open(folder / "review.sqlite", ds) as store, store.transaction():
        for i in range(n):
            for s in ds.samples:
                store.decide(
                    s, reviewer=f"r{i}", verdict="accept", seen=store.version(s.id), reason="x" * 80
                )
    return folder / "review.sqlite"


def _damaged(kind: str, folder: Path) -> Path:
    path = _reviewed(folder, n=20)
    data = bytearray(path.read_bytes())
    assert len(data) > 16 * 4096, len(data)  # many pages: the damage is not in the header
    if kind == "garbage":
        path.write_bytes(b"not a database at all " * 500)
    elif kind == "truncated":
        path.write_bytes(bytes(data[: len(data) * 2 // 3]))
    elif kind == "middle":
        mid = len(data) // 2
        data[mid : mid + 3 * 4096] = b"\xff" * (3 * 4096)
        path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("kind", ["garbage", "truncated", "middle"])
def test_a_damaged_store_is_named_with_the_fix_by_serve_and_export(tmp_path, kind):
    path = _damaged(kind, tmp_path / "ds")
    for args in (
        ["review", "export", str(tmp_path / "ds"), str(tmp_path / "out")],
        ["review", "serve", str(tmp_path / "ds"), "--port", "0"],
    ):
        code, said = _cli(*args)
        assert code == 2, said
        assert "Traceback" not in said and "sqlite3." not in said, said
        assert str(path) in said and "damaged" in said and "restore it" in said.lower(), said
    assert not (tmp_path / "out").exists()


def _live_copy(tmp_path: Path) -> Path:
    """A dataset folder copied while the review tool had it open: its last decisions still
    in review.sqlite-wal (not yet copied into the file), -shm beside it."""
    kinds_dataset(tmp_path / "live", copies=1)
    ds = load_dataset(tmp_path / "live")
    store = DecisionStore.open(tmp_path / "live" / "review.sqlite", ds)
    for s in ds.samples[:3]:
        store.decide(s, reviewer="ana", verdict="reject", seen=0, reason="blank map")
    shutil.copytree(tmp_path / "live", tmp_path / "src")
    store.close()
    wal = tmp_path / "src" / "review.sqlite-wal"
    assert wal.stat().st_size > 0 and wal.with_name("review.sqlite-shm").exists()
    return tmp_path / "src"


@pytest.fixture
def read_only(tmp_path):
    """The live copy, seen through a folder this process cannot write."""
    src = _live_copy(tmp_path)
    view = tmp_path / "ro"
    view.mkdir()
    if os.geteuid() != 0:
        for p in src.rglob("*"):
            p.chmod(0o555 if p.is_dir() else 0o444)
        src.chmod(0o555)
        view.rmdir()
        view.symlink_to(src)
        yield view
        src.chmod(0o755)
        return
    with read_only_mount(src, view):
        yield view


def test_a_store_on_a_read_only_mount_is_exported_and_serve_says_why_not(read_only, tmp_path):
    store = read_only / "review.sqlite"
    code, said = _cli("review", "export", str(read_only), str(tmp_path / "out"))
    assert code == 0, said
    out = load_dataset(tmp_path / "out")
    assert len(out) == 14 - 3  # the three rejections that were only in the -wal
    code, said = _cli("review", "serve", str(read_only), "--port", "0")
    assert code == 2 and "Traceback" not in said, said
    assert str(store) in said and "read-only" in said, said
    if os.geteuid() == 0:  # a mount: chmod cannot help, the message says what can
        assert "chmod" not in said and "copy" in said, said
