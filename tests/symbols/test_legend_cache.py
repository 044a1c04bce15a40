"""The legend's cache (``symbols.store``, issue 16 item 6) under faults: a build killed while
drawing leaves nothing a later build reads, two builds at once agree, and a build in a
fresh cache draws the same bytes.  Real processes, killed and raced."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ONLY = [
    "symbol:amenity=bank",
    "symbol:amenity=cafe",
    "symbol:shop=bakery",
    "line:highway=residential",
    "line:waterway=river",
    "area:landuse=grass",
    "area:natural=water",
]
ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import json, sys
from pathlib import Path
from symbols.store import load_legend
lg = load_legend(cache=Path(sys.argv[1]), carto_files=Path(sys.argv[2]), dsn=sys.argv[3],
                 only=json.loads(sys.argv[4]))
print(json.dumps({"folder": str(lg.folder), "built": lg.built,
                  "images": {k: str(p) for k, p in lg.images.items()}}))
"""


@pytest.fixture
def dsn(legend_dsn):
    return legend_dsn


def _child(cache: Path, carto_files: Path, dsn: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(cache), str(carto_files), dsn, json.dumps(ONLY)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _bytes(images: dict[str, str]) -> dict[str, bytes]:
    return {k: Path(p).read_bytes() for k, p in images.items()}


def test_a_build_killed_while_drawing_leaves_nothing_a_later_build_reads(
    tmp_path, carto_files, dsn
):
    from symbols.store import load_legend

    cache = tmp_path / "cache"
    child = _child(cache, carto_files, dsn)
    deadline = time.monotonic() + 120
    tmp = None
    while time.monotonic() < deadline and child.poll() is None:
        drawing = [p for p in (cache / "symbols").glob("legend-*.tmp-*/*/*.png")]
        if drawing:
            tmp = drawing[0].parents[1]
            break
        time.sleep(0.02)
    assert tmp is not None, f"the child never drew: {child.communicate()[1][-2000:]}"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    finals = [p for p in (cache / "symbols").glob("legend-*") if ".tmp-" not in p.name]
    assert finals == []  # only the killed build's temporary folder
    assert tmp.is_dir()
    legend = load_legend(cache=cache, carto_files=carto_files, dsn=dsn, only=ONLY)
    assert legend.built and sorted(legend.images) == sorted(ONLY)
    assert not tmp.exists()  # the dead build's leftovers are cleared
    assert not list((cache / "symbols").glob("*.tmp-*"))
    again = load_legend(cache=cache, carto_files=carto_files, dsn=dsn, only=ONLY)
    assert not again.built and again.folder == legend.folder


def test_two_builds_at_once_agree_and_a_fresh_cache_draws_the_same_bytes(
    tmp_path, carto_files, dsn
):
    cache = tmp_path / "cache"
    children = [_child(cache, carto_files, dsn) for _ in range(2)]
    results = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0]["folder"] == results[1]["folder"]
    assert sorted(r["built"] for r in results) in ([False, True], [True, True])
    finals = [p for p in (cache / "symbols").glob("legend-*") if ".tmp-" not in p.name]
    assert len(finals) == 1 and not list((cache / "symbols").glob("*.tmp-*"))
    # another cache, drawn afresh from the same pinned inputs: the same key, the same bytes
    other = _child(tmp_path / "other", carto_files, dsn)
    out, err = other.communicate(timeout=300)
    assert other.returncode == 0, err[-2000:]
    fresh = json.loads(out.strip().splitlines()[-1])
    assert fresh["built"] and Path(fresh["folder"]).name == Path(results[0]["folder"]).name
    assert _bytes(fresh["images"]) == _bytes(results[0]["images"])
