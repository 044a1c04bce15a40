"""The export folder every ``cartoqa export`` format writes the same way.

An export is written into a hidden sibling folder (``.OUT.staging-PID``) while a lock
(``.OUT.lock``) keeps other writers out, and renamed into place at the end, as
``DatasetWriter`` does: an earlier export at OUT stays whole until the new one is complete,
and a failure leaves nothing behind.  OUT may be new, empty, or (with ``overwrite``) an
earlier export of the same format (its marker file says which); any other folder is
refused, never deleted.

Also here: the checks of the dataset's images each export makes (``image_size`` before
anything is written, ``read_image`` as each image is read, against the manifest's hash);
and the parts every export writes apart (``Part``, ``samples_by_part``): a task's base
samples, and each paired variant's samples of it (``cartoqa.tasks.variants``), the
variant's unanswerable ones apart again, so that a harness never scores them together.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError, DatasetError
from cartoqa.records import Sample
from cartoqa.stores import Dataset
from cartoqa.stores._files import ensure_writable_folder, write_json_atomic
from cartoqa.stores._locks import LockBusy, try_lock
from cartoqa.stores.dataset import swap_in_synced

__all__ = [
    "VARIANT_COLUMNS",
    "ExportFormat",
    "Part",
    "Staged",
    "export_folder",
    "export_target",
    "has_variants",
    "image_size",
    "part_of",
    "part_order",
    "read_image",
    "samples_by_part",
    "samples_by_task",
    "variant_fields",
]


@dataclass(frozen=True)
class ExportFormat:
    """What marks a folder as an export of one format, and how the messages name it."""

    fmt: str
    """The marker's ``format`` ("hf", "inspect", ...)."""
    name: str
    """The format as the messages name it ("Hugging Face", "inspect")."""
    marker: str
    """The marker file ("cartoqa-export.json")."""
    beside: tuple[str, ...] = ()
    """Files that must stand beside the marker for the folder to count as an export."""
    article: str = "a"
    """"a" or "an", before ``name``."""
    names_other_formats: bool = False
    """Whether a folder holding another format's export is refused naming that format
    (else it is "other files")."""

    def marker_of(self, dataset: Dataset, **fields: Any) -> dict[str, Any]:
        """An export's marker: this format, the cartoqa that made it and the dataset, then
        ``fields``."""
        from cartoqa import __version__

        m = dataset.manifest
        head = {"format": self.fmt, "cartoqa": __version__, "dataset": m.name}
        return {**head, "samples_sha256": m.samples_sha256, **fields}

    def marker_format(self, folder: Path) -> str | None:
        """The ``format`` of the marker in ``folder``, or None where there is none."""
        marker = folder / self.marker
        if not (marker.is_file() and all((folder / f).is_file() for f in self.beside)):
            return None
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        fmt = info.get("format") if isinstance(info, dict) else None
        return fmt if isinstance(fmt, str) else None

    def is_export(self, folder: Path) -> bool:
        """Whether ``folder`` is an earlier export of this format."""
        return self.marker_format(folder) == self.fmt

    def check_target(self, target: Path, *, overwrite: bool) -> None:
        """Refuse a link, a file, an export of this format without ``overwrite``, another
        format's export and a folder of other files (ever)."""
        if not target.exists() and not target.is_symlink():
            return
        if target.is_symlink():
            raise CartoqaError(
                f"{target} is a symbolic link; choose a new folder for the export (cartoqa "
                "does not replace links)"
            )
        if not target.is_dir():
            raise CartoqaError(
                f"{target} is a file, not a folder; choose a new folder for the export"
            )
        fmt = self.marker_format(target)
        if fmt == self.fmt:
            if not overwrite:
                raise CartoqaError(
                    f"{target} already holds {self.article} {self.name} export; pass "
                    "--overwrite to replace it (it stays whole until the new one is "
                    "complete), or choose another folder"
                )
            return
        if fmt is not None and self.names_other_formats:
            raise CartoqaError(
                f"{target} holds a cartoqa export in the {fmt!r} format, not {self.article} "
                f"{self.name} one; choose another folder (an export replaces only an earlier "
                "export of its own format, even with --overwrite)"
            )
        entries = sorted(p.name for p in target.iterdir())
        if entries:
            more = ", ..." if len(entries) > 3 else ""
            raise CartoqaError(
                f"{target} holds other files ({', '.join(entries[:3])}{more}), not a cartoqa "
                f"{self.name} export; choose a new or empty folder (an export replaces only "
                "an earlier export, never other files, even with --overwrite)"
            )


def export_target(dataset: Dataset, out: str | Path) -> Path:
    """``out`` made absolute; refused where it and the dataset overlap."""
    target = Path(out).absolute()
    here = dataset.path.resolve()
    there = target.resolve()
    if there == here or there.is_relative_to(here) or here.is_relative_to(there):
        raise CartoqaError(
            f"the export folder {target} and the dataset {dataset.path} overlap; choose an "
            "export folder outside the dataset (and not holding it)"
        )
    return target


@dataclass
class Staged:
    """The staging folder of an export being written (``export_folder``)."""

    path: Path
    """Where to write the export's files."""
    replaced: bool
    """Whether an earlier export is at the target (it is replaced on success)."""
    marker: Any = None
    """The marker's contents (JSON), to be set by the writer: ``export_folder`` writes it
    last, then swaps the folder into place."""


@contextmanager
def export_folder(target: Path, kind: ExportFormat, *, overwrite: bool) -> Iterator[Staged]:
    """Check ``target`` (``ExportFormat.check_target``), lock it, and yield a fresh staging
    folder beside it.  When the block ends normally, the marker (``Staged.marker``, which
    the block must set) is written, the staging folder synced and swapped into place; when
    it raises, the staging folder is removed.  The lock is released either way."""
    kind.check_target(target, overwrite=overwrite)  # before anything is made beside it
    parent = target.parent
    ensure_writable_folder(parent, what=f"the export {target.name}", error=CartoqaError)
    try:
        lock = try_lock(parent / f".{target.name}.lock")
    except LockBusy as busy:
        raise CartoqaError(
            f"{target} is being written by {busy.holder}; wait for it to finish or choose "
            "another folder"
        ) from None
    except OSError as exc:
        raise CartoqaError(f"cannot lock {target} for writing: {exc.strerror}") from None
    try:
        kind.check_target(target, overwrite=overwrite)  # again, now that no one else writes
        replaced = target.exists() and any(target.iterdir())
        for stale in parent.glob(f".{target.name}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)  # a dead export's (we hold the lock)
        stage = parent / f".{target.name}.staging-{os.getpid()}"
        stage.mkdir()
        try:
            staged = Staged(path=stage, replaced=replaced)
            yield staged
            if staged.marker is None:
                raise RuntimeError("export_folder: the export set no marker")
            write_json_atomic(stage / kind.marker, staged.marker)
            swap_in_synced(stage, target)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    finally:
        lock.release()


def samples_by_task(dataset: Dataset) -> dict[str, list[Sample]]:
    """Task -> its samples in the dataset's order, the tasks by name; ``DatasetError``
    where the dataset holds no samples."""
    by_task: dict[str, list[Sample]] = {}
    for s in dataset.samples:
        by_task.setdefault(s.task, []).append(s)
    if not by_task:
        raise DatasetError(f"{dataset.path} holds no samples; there is nothing to export")
    return dict(sorted(by_task.items()))


# -- the parts: a task's base samples, and each variant's -------------------------------------

#: the fields each export adds to an item of a dataset that holds paired variants:
#: field -> what it holds
VARIANT_COLUMNS = {
    "variant": 'the paired variant the item is asked under ("text", "image+text", '
    '"coords", "nolabels", "greyscale"), or null for a base item',
    "base_id": "the id of the base item the variant copies (a base item's own id)",
    "answerable": "false where the variant made the answer unreadable (nolabels on a "
    "question that needs the labels): such items are scored apart, never as misses",
}


@dataclass(frozen=True, order=True)
class Part:
    """What an export writes and scores as one unit (a config, a benchmark, a task): a
    task's base samples, a variant's samples of it, or a variant's unanswerable ones."""

    task: str
    variant: str | None = None
    """The variant's name ("image+text"), None for the base samples."""
    unanswerable: bool = False
    """The variant's samples flagged ``answerable: false``."""

    @property
    def key(self) -> str:
        """cartoqa's score key of the part ("srn", "srn@text",
        "stmf_names@nolabels/unanswerable": ``cartoqa.tasks.variants.score_key``), the
        table ``cartoqa score`` prints its scores in."""
        if self.variant is None:
            return self.task
        from cartoqa.tasks.variants.names import UNANSWERABLE

        key = f"{self.task}@{self.variant}"
        return f"{key}/{UNANSWERABLE}" if self.unanswerable else key

    @property
    def name(self) -> str:
        """The part's name where a harness needs letters, digits and underscores (a file,
        a config, a task, a Python name): the task's for its base samples ("srn"), else
        "<task>__<variant>" ("srn__image_text", "srn__lang_de") and "__unanswerable" after
        it for the unanswerable ones."""
        if self.variant is None:
            return self.task
        from cartoqa.tasks.variants.names import UNANSWERABLE, variant_tag

        name = f"{self.task}__{variant_tag(self.variant).replace('-', '_')}"
        return f"{name}__{UNANSWERABLE}" if self.unanswerable else name

    @property
    def what(self) -> str:
        """The part in words, for READMEs ("srn", "srn, variant text",
        "stmf_names, variant nolabels, unanswerable")."""
        if self.variant is None:
            return self.task
        text = f"{self.task}, variant {self.variant}"
        return f"{text}, unanswerable" if self.unanswerable else text


def part_of(sample: Sample) -> Part:
    """The part a sample belongs to."""
    from cartoqa.tasks.variants.names import is_unanswerable, variant_of

    variant = variant_of(sample)
    return Part(sample.task, variant, variant is not None and is_unanswerable(sample))


def part_order(part: Part) -> tuple[str, int, str, bool]:
    """The order every export lists parts in: by task, its base samples first, then its
    variants in the order a report lists them, each one's unanswerable samples last."""
    from cartoqa.tasks.variants.names import VARIANT_NAMES

    if part.variant is None:
        return (part.task, -1, "", False)
    name = "lang:XX" if part.variant.startswith("lang:") else part.variant
    rank = VARIANT_NAMES.index(name) if name in VARIANT_NAMES else len(VARIANT_NAMES)
    return (part.task, rank, part.variant, part.unanswerable)


def samples_by_part(dataset: Dataset) -> dict[Part, list[Sample]]:
    """Part -> its samples in the dataset's order; the parts by task, each task's base
    samples first, then its variants in the order a report lists them, each variant's
    unanswerable samples after its others.  A dataset without variants gives one part per
    task, named as the task (``samples_by_task``).  ``DatasetError`` where the dataset holds
    no samples, or where two parts would share a name."""
    by_part: dict[Part, list[Sample]] = {}
    for s in dataset.samples:
        by_part.setdefault(part_of(s), []).append(s)
    if not by_part:
        raise DatasetError(f"{dataset.path} holds no samples; there is nothing to export")
    names: dict[str, Part] = {}
    for part in by_part:
        other = names.setdefault(part.name, part)
        if other != part:
            raise DatasetError(
                f"the export would name both {other.what!r} and {part.what!r} {part.name!r}; "
                "rename the task that ends like a variant's name"
            )
    return {p: by_part[p] for p in sorted(by_part, key=part_order)}


def has_variants(dataset: Dataset) -> bool:
    """Whether any of the dataset's samples is a paired variant's."""
    return any(part_of(s).variant is not None for s in dataset.samples)


def variant_fields(sample: Sample) -> dict[str, Any]:
    """The sample's ``VARIANT_COLUMNS``: its variant (None for a base sample), its base's
    id and whether it is answerable."""
    from cartoqa.tasks.variants.names import base_id, is_unanswerable, variant_of

    return {
        "variant": variant_of(sample),
        "base_id": base_id(sample),
        "answerable": not is_unanswerable(sample),
    }


# -- the dataset's images ---------------------------------------------------------------------


def image_size(dataset: Dataset, sample_id: str, rel: str) -> int:
    """The size of the image ``rel`` a sample shows; ``DatasetError`` where it is missing."""
    try:
        info = dataset.image_path(rel).stat()
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        raise DatasetError(
            f"sample {sample_id!r} names image {rel!r}, which is missing from "
            f"{dataset.path}; restore it or build the dataset again "
            "('cartoqa dataset info --verify' checks every image)"
        )
    return info.st_size


def read_image(dataset: Dataset, sample_id: str, rel: str) -> tuple[bytes, str]:
    """The bytes of the image ``rel`` a sample shows and their SHA-256, checked against the
    manifest's hash; ``DatasetError`` where it cannot be read or was changed."""
    path = dataset.image_path(rel)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(
            f"sample {sample_id!r}: cannot read its image {path} ({exc.strerror}); "
            "restore it or build the dataset again"
        ) from None
    digest = hashlib.sha256(data).hexdigest()
    want = dataset.manifest.images_sha256.get(rel)
    if want is not None and digest != want:
        raise DatasetError(
            f"{path} does not match the dataset's manifest: the image was changed after the "
            "dataset was made; build the dataset again ('cartoqa dataset info --verify' "
            "checks every image)"
        )
    return data, digest
