"""What two builds of the same seed are compared by: each sample line's and each image's SHA-256,
and the first difference between two builds, named; and the single-process reference build of
the worker tests (made once per session)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: the build the worker and Ray tests compare: small, three tasks in three view groups
REFERENCE = {"extract": "monaco.osm.pbf", "tasks": ["srn", "rle", "mml"], "per_task": 2, "seed": 3}

_MADE: dict[str, Path] = {}


def digests(folder: Path) -> dict[str, str]:
    """Name -> SHA-256 of each sample line (by id, in file order) and image of a dataset."""
    out: dict[str, str] = {}
    for n, line in enumerate((folder / "samples.jsonl").read_bytes().splitlines()):
        out[f"sample {n:03d} {json.loads(line)['id']}"] = hashlib.sha256(line).hexdigest()
    for p in sorted((folder / "images").glob("*.png")):
        out[f"image {p.name}"] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def first_difference(want: Path, got: Path) -> str | None:
    """The first sample line or image (samples first) that differs between two datasets, is
    missing or is new; None when they hold the same bytes."""
    a, b = digests(want), digests(got)
    for name in sorted(set(a) | set(b)):
        if name not in b:
            return f"{name} is missing from {got}"
        if name not in a:
            return f"{name} is in {got} but not in {want}"
        if a[name] != b[name]:
            return f"{name} differs ({b[name][:12]} != {a[name][:12]})"
    return None


def build(folder: Path, engine, cache: Path, carto_files: Path, **options):
    from cartoqa.tasks import build_dataset

    return build_dataset(
        folder,
        engine=engine,
        cache=cache,
        carto_files=carto_files,
        tasks=REFERENCE["tasks"],
        per_task=REFERENCE["per_task"],
        seed=REFERENCE["seed"],
        progress=False,
        **options,
    )


def reference(tmp_path_factory, engine_for, cache: Path, carto_files: Path) -> Path:
    """The reference dataset, built in this process without workers (once per session)."""
    if "single" not in _MADE:
        folder = tmp_path_factory.mktemp("reference") / "single"
        build(folder, engine_for(REFERENCE["extract"]), cache, carto_files)
        _MADE["single"] = folder
    return _MADE["single"]
