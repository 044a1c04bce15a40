"""Checked cache files (``cartoqa.stores.cache_files``, issue 27 items 1, 7 and 10): which
temporary files count as stale, and what a bad entry looks like to a reader."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time

import pytest

from cartoqa.stores.cache_files import (
    clean_stale_tmp,
    digest_path,
    read_cache_file,
    write_cache_file,
)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporary_files_are_those_of_gone_writers_or_abandoned(tmp_path):
    dead, live, now = _dead_pid(), os.getpid(), time.time()
    cases = {  # name: (seconds since last written, removed?)
        f".a.png.{dead}.0a1b2c3d.tmp": (600, True),  # its writer is gone
        f".b.png.{dead}.0a1b2c3d.tmp": (5, False),  # just written: maybe another machine's
        f".c.png.{live}.0a1b2c3d.tmp": (600, False),  # its writer runs
        f".d.png.{live}.0a1b2c3d.tmp": (7200, True),  # untouched for two hours
        f"legend-x.tmp-{dead}-0a1b2c3d": (600, True),  # a folder of a killed legend build
        "clean.tmp.osm.pbf": (600, False),  # no pid: only once abandoned
        "graph-v4.tmp": (7200, True),
        "tile.png": (7200, False),  # not a temporary file at all
    }
    for name, (age, _) in cases.items():
        p = tmp_path / "z" / name
        p.parent.mkdir(exist_ok=True)
        if name.startswith("legend-"):
            p.mkdir()
            (p / "inside.png").write_bytes(b"x")
        else:
            p.write_bytes(b"x")
        os.utime(p, (now - age, now - age))
    assert clean_stale_tmp(tmp_path, now=now) == sum(gone for _, gone in cases.values())
    left = {p.name for p in (tmp_path / "z").iterdir()}
    assert left == {name for name, (_, gone) in cases.items() if not gone}


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(p.read_bytes()[:3]),
        lambda p: p.write_bytes(b""),
        lambda p: p.write_bytes(b"other bytes"),
        lambda p: digest_path(p).unlink(),
    ],
    ids=["truncated", "zero-length", "wrong bytes", "no digest"],
)
def test_a_bad_entry_is_dropped_with_a_warning_naming_it(tmp_path, damage, caplog):
    p = tmp_path / "entry.bin"
    write_cache_file(p, b"some bytes")
    assert read_cache_file(p, what="thing") == b"some bytes"
    damage(p)
    caplog.set_level(logging.WARNING)
    assert read_cache_file(p, what="thing", drop=False) is None
    assert p.exists() and caplog.text == ""  # only answered
    assert read_cache_file(p, what="thing") is None
    assert f"the cached thing {p} is bad" in caplog.text
    assert not p.exists() and not digest_path(p).exists()
    assert [q.name for q in tmp_path.iterdir()] == []
