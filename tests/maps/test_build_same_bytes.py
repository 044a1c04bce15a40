"""A build makes the same bytes as the reference builds recorded before the speed work (issue 31).

``golden/golden.json`` holds, per small build (a clean extract with every map task made from
views, a clipped one, a busy city centre), each sample line's and each image's SHA-256 as the
code of the commit it names made them (``golden/record.py``).  Making a build faster (one
render serving tiles, boxes and the label check; stripped coded styles; checks moved before
the renders; workers) may change how many candidates the manifest says were rejected for
which reason, but never a sample or an image.

Recorded first at 007390a; recorded again after the paired variants' prompt templates
joined the wording set (issue 32), which changes every sample's ``prompts_sha256`` and
nothing else: every sample line with the old hash put back, and every image, was the
007390a reference's.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import extract_path

GOLDEN = Path(__file__).resolve().parent / "golden" / "golden.json"
BUILDS: dict[str, dict] = json.loads(GOLDEN.read_text())["builds"]


def first_difference(kind: str, want: dict[str, str], got: dict[str, str]) -> str | None:
    """The first (by name) ``kind`` whose digest differs, is missing or is new; None when
    all match."""
    for name in sorted(set(want) | set(got)):
        if name not in got:
            return f"{kind} {name} was not made (the reference has it)"
        if name not in want:
            return f"{kind} {name} was made but the reference has no such {kind}"
        if want[name] != got[name]:
            return (
                f"{kind} {name} differs from the reference ({got[name][:12]} != {want[name][:12]})"
            )
    return None


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_a_build_makes_the_reference_bytes(name, engine_for, cluster, cache, carto_files, tmp_path):
    # the build runs as a command in a process of its own, as the reference was made: in
    # this long test process, after other tests have rendered, a map's SVG icons came out
    # differently (147 pixels of helsinki-srn's srn-0002.png, the same way twice); what
    # process state carries over is not yet known (see the issue 31 note)
    ref = BUILDS[name]
    engine_for(ref["extract"])  # imported into the session's cluster once
    folder = tmp_path / name
    dsn = f"host={cluster.socket_dir} port={cluster.port} user={cluster.user}"
    cmd = [
        sys.executable, "-m", "cartoqa", "build", str(folder),
        "--extract", str(extract_path(ref["extract"])), "--tasks", ",".join(ref["tasks"]),
        "--per-task", str(ref["per_task"]), "--seed", str(ref["seed"]), "--dsn", dsn,
        "--no-progress",
    ]  # fmt: skip
    # and with a cache of its own: tiles another test of this session rendered in the long
    # test process (where the icons can come out otherwise) must not stand in for its own (CI
    # of issue 32: after the lang:sv build had drawn Helsinki, srn-0002.png differed)
    own = tmp_path / "cache"
    env = {**os.environ, "CARTOQA_CACHE": str(own), "CARTOQA_CARTO_FILES": str(carto_files)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = (folder / "samples.jsonl").read_bytes().splitlines()
    samples = {json.loads(line)["id"]: hashlib.sha256(line).hexdigest() for line in lines}
    images = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((folder / "images").glob("*.png"))
    }
    # samples first: a sample that differs says more than its image
    problem = first_difference("sample", ref["samples"], samples) or first_difference(
        "image", ref["images"], images
    )
    assert problem is None, f"{name} (seed {ref['seed']}, {ref['extract']}): {problem}"


def test_a_difference_is_named():
    assert first_difference("sample", {"a": "1", "b": "2"}, {"a": "1", "b": "2"}) is None
    found = first_difference("sample", {"a": "1", "b": "2"}, {"a": "1", "b": "3"})
    assert found is not None and found.startswith("sample b differs")
    assert "image c.png was not made" in first_difference("image", {"c.png": "1"}, {})
    assert "was made but" in first_difference("image", {}, {"d.png": "1"})
