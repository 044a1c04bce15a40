"""The published release's questions as a cartoqa dataset (``cartoqa import-release``).

The samples name their images ``release/<path in the release>``; the dataset holds a link
``release`` to the release's root (``copy_images``: a copy of the images the samples use, at
the same paths).  The manifest records, under ``inputs["release"]``, the root, the version
given, and the SHA-256 of every file read (questions, truths, images), so a changed release
is told apart from the one a run was made on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from cartoqa.errors import DatasetError
from cartoqa.records import Sample
from cartoqa.records.samples import OSM_ATTRIBUTION
from cartoqa.stores import DatasetWriter
from cartoqa.stores.dataset import Manifest
from cartoqa.tasks.templates import PromptSet, load_prompts

from .form import RELEASE_IMAGES, ReleaseForm
from .forms import release_forms

__all__ = ["RELEASE_CREDIT", "find_root", "import_release", "read_release"]

#: the folders a release root holds (one at least)
_TOP = (
    "MapFeatureUnderstanding",
    "MapScaleUnderstanding",
    "MapMarkerLocalization",
    "MapNavigation",
)

RELEASE_CREDIT = (
    "Questions, ground truth and maps: the CartoMapQA release (Ung et al., "
    "github.com/ungquanghuy-kddi/CartoMapQA-Dataset)"
)


def find_root(path: Path) -> Path:
    """The release root at or under ``path``: the folder holding ``MapNavigation/`` and the
    others (``Dataset/CartoMapQA/`` of the unzipped release)."""
    path = Path(path)
    if not path.is_dir():
        raise DatasetError(
            f"{path} is not a folder; give the unzipped release's Dataset/CartoMapQA/ folder"
        )
    for cand in (path, path / "CartoMapQA", path / "Dataset" / "CartoMapQA"):
        if any((cand / t).is_dir() for t in _TOP):
            return cand
    raise DatasetError(
        f"{path} holds none of the release's task folders ({', '.join(_TOP)}), nor "
        "Dataset/CartoMapQA/ with them; give the unzipped release's Dataset/CartoMapQA/ folder"
    )


def _forms(only: Sequence[str] | None) -> list[ReleaseForm]:
    forms = release_forms()
    if not only:
        return forms
    names = {f.folder: f for f in forms}
    unknown = [t for t in only if t.upper() not in names]
    if unknown:
        raise DatasetError(
            f"--task {', '.join(unknown)}: the release's tasks are {', '.join(names)}"
        )
    return [names[t.upper()] for t in only]


def read_release(
    root: Path, prompts: PromptSet | None = None, *, tasks: Sequence[str] | None = None
) -> list[Sample]:
    """Every question of the release at ``root`` (or of ``tasks``: "SRN", ...) as samples,
    task by task in the order the tasks are registered."""
    root = find_root(root)
    prompts = prompts or load_prompts()
    forms = _forms(tasks)
    absent = [f for f in forms if not (root / f.top).is_dir()]
    if absent and (tasks or not _is_partial_export(root)):
        shown = "; ".join(f"{f.top}/ ({f.folder})" for f in absent)
        present = [f.folder for f in forms if f not in absent]
        raise DatasetError(
            f"{root} has no {shown}: is a folder of the release missing or renamed? "
            + (
                "To import the other tasks only, name them: "
                + " ".join(f"--task {t}" for t in present)
                if present and not tasks
                else "Unzip the whole release (Dataset/CartoMapQA/) and give its folder"
            )
        )
    samples: list[Sample] = []
    for form in forms:
        if form not in absent:
            samples += form.read_questions(root, prompts)
    return samples


def _is_partial_export(root: Path) -> bool:
    """Whether ``root`` is the Dataset/CartoMapQA/ of a ``cartoqa export --to cartomapqa``
    (which writes only the tasks its dataset has)."""
    import json

    marker = root.parent.parent / "cartoqa-export.json"
    try:
        return json.loads(marker.read_text(encoding="utf-8")).get("format") == "cartomapqa"
    except (OSError, ValueError, AttributeError):
        return False


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def import_release(
    root: Path,
    out: Path,
    *,
    copy_images: bool = False,
    prompts: Path | None = None,
    tasks: Sequence[str] | None = None,
    version: str | None = None,
    name: str | None = None,
    overwrite: bool = False,
) -> Manifest:
    """Write the release at ``root`` as a cartoqa dataset at ``out``; returns its manifest.
    Nothing is written at ``out`` unless every question reads."""
    root = find_root(root).absolute()
    wording = load_prompts(prompts)  # a bad file is refused before any work
    samples = read_release(root, wording, tasks=tasks)
    if not samples:
        raise DatasetError(f"{root} holds no question of {', '.join(tasks or ['any task'])}")
    files: dict[str, str] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        files[path.relative_to(root).as_posix()] = _sha256(path)
    writer = DatasetWriter(out, name=name or "cartomapqa-release", overwrite=overwrite)
    try:
        added: set[str] = set()
        for s in samples:
            for rel in s.prompt.images:
                if rel in added:
                    continue
                inner = rel.split("/", 1)
                if inner[0] != RELEASE_IMAGES or len(inner) < 2:
                    raise DatasetError(
                        f"sample {s.id!r} names image {rel!r}, not one of the release's "
                        f"({RELEASE_IMAGES}/...)"
                    )
                source = root / inner[1]
                if not source.is_file():
                    raise DatasetError(
                        f"sample {s.id!r}: the release has no image {inner[1]!r} (looked in "
                        f"{root}); is a folder of the release missing or renamed?"
                    )
                writer.add_image_file(rel, source, copy=copy_images)
                added.add(rel)
            writer.add(s)
        combined = hashlib.sha256(
            "".join(f"{k}\0{v}\n" for k, v in files.items()).encode()
        ).hexdigest()
        return writer.finish(
            attribution=[RELEASE_CREDIT, OSM_ATTRIBUTION],
            prompts={"sha256": wording.sha256, "source": wording.source},
            inputs={
                "release": {
                    "root": str(root),
                    "version": version or "unknown (give --release-version)",
                    "images": "copied" if copy_images else f"linked: {RELEASE_IMAGES}/ -> {root}",
                    "sha256": combined,
                    "files_sha256": files,
                }
            },
        )
    except BaseException:
        writer.abandon()
        raise
