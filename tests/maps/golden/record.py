"""Record the bytes of reference builds: ``python tests/maps/golden/record.py``.

Run at a commit whose output is the reference (``golden.json`` says which); the test
``tests/maps/test_build_same_bytes.py`` builds the same datasets with the code of the day
and compares sample by sample and image by image.  A build change that must keep bytes
(speed, workers, Ray) is checked against a file recorded before it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SHARED = ROOT.parent / "shared"

#: (name, extract, tasks, per_task, seed): small builds that touch every map task made from
#: an extract's views, on a clean extract and a clipped one
BUILDS = [
    (
        "monaco-all",
        "monaco.osm.pbf",
        ["srn", "rle", "mml", "stmf_presence", "stmf_count", "stmf_names", "mtmf"],
        2,
        5,
    ),
    ("sydney-nav", "sydney-cbd.osm.pbf", ["srn", "mml"], 3, 11),
    ("helsinki-srn", "helsinki-centre.osm.pbf", ["srn"], 2, 2),
]


def digest(folder: Path) -> dict[str, object]:
    """What a reference keeps of a built dataset: each sample line's and image's SHA-256."""
    lines = (folder / "samples.jsonl").read_bytes().splitlines()
    samples = {json.loads(line)["id"]: hashlib.sha256(line).hexdigest() for line in lines}
    images = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((folder / "images").glob("*.png"))
    }
    return {"samples": samples, "images": images}


def main() -> None:
    from cartoqa.tasks import build_dataset

    carto = Path(os.environ.get("CARTOQA_CARTO_FILES", SHARED / "carto-5.7.0"))
    out: dict[str, object] = {
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
        "builds": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, extract, tasks, per_task, seed in BUILDS:
            folder = Path(tmp) / name
            build_dataset(
                folder,
                extract=SHARED / "data" / "osm" / extract,
                tasks=tasks,
                per_task=per_task,
                seed=seed,
                carto_files=carto,
                cache=Path(tmp) / "cache",
                progress=False,
            )
            entry = {"extract": extract, "tasks": tasks, "per_task": per_task, "seed": seed}
            out["builds"][name] = entry | digest(folder)  # type: ignore[index]
            print(name, len(entry), file=sys.stderr)
    (HERE / "golden.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
