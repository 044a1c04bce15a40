"""The dataset store: a folder with ``samples.jsonl``, ``images/`` and ``manifest.json``.

``DatasetWriter`` builds one; ``load_dataset`` reads one back, validating
every line and naming the first bad one by its line number.  A folder whose
writer did not finish has no manifest and is refused, so a half-made dataset
is never mistaken for a whole one.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cartoqa import __version__
from cartoqa.errors import DatasetError
from cartoqa.records import OSM_ATTRIBUTION, Sample

from ._files import ensure_writable_folder, sha256_file, write_atomic, write_json_atomic
from ._locks import LockBusy, try_lock

__all__ = [
    "MANIFEST_SCHEMA_VERSION",
    "Dataset",
    "DatasetWriter",
    "Manifest",
    "collect_versions",
    "load_dataset",
]

MANIFEST_SCHEMA_VERSION = 1
SAMPLES_FILE = "samples.jsonl"
MANIFEST_FILE = "manifest.json"
IMAGES_DIR = "images"
_PARTIAL = SAMPLES_FILE + ".partial"


class Manifest(BaseModel):
    """What a dataset holds and what made it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = MANIFEST_SCHEMA_VERSION
    """Version of this record's layout."""
    name: str
    """The dataset's name (the folder's name unless given)."""
    created_at: str
    """UTC time the dataset was finished (ISO 8601)."""
    versions: dict[str, str | None]
    """Versions installed when it was made: cartoqa, mapnik, openstreetmap-carto, osmnx.

    None where a package was absent."""
    seeds: list[int] = Field(default_factory=list)
    """Seeds the generators were given."""
    extract_hashes: dict[str, str] = Field(default_factory=dict)
    """OSM extract name -> SHA-256 of the file."""
    counts: dict[str, dict[str, int]]
    """Task -> split -> number of samples."""
    total: int
    """Number of samples."""
    samples_sha256: str
    """SHA-256 of samples.jsonl: identifies this exact dataset in run stores; checked on
    every load."""
    images_sha256: dict[str, str] = Field(default_factory=dict)
    """Image path (as samples name it) -> SHA-256 of its bytes; checked by
    ``load_dataset(..., verify_images=True)`` (``cartoqa dataset info --verify``).  Empty in
    datasets made before cartoqa recorded them."""
    shortfall: dict[str, int] = Field(default_factory=dict)
    """Task -> samples asked for but not made (the source ran out of fair candidates)."""
    rejected: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Task -> reason -> candidates the generator turned down (map tasks)."""
    attribution: list[str] = Field(default_factory=list)
    """Credits the data requires, shown with every result ("© OpenStreetMap contributors")."""
    prompts: dict[str, str] = Field(default_factory=dict)
    """The wording the questions were asked in: ``sha256`` (``PromptSet.sha256``, also in
    each sample's provenance) and ``source`` ("cartoqa", or "cartoqa + FILE" for
    ``--prompts FILE``).  Empty in datasets made before cartoqa recorded it."""
    inputs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Task -> what it was made from besides an extract or GeoNames (MFS: the legend's
    versions and counts, the CLIP weights)."""
    warnings: list[str] = Field(default_factory=list)
    """What a user of the dataset must know about how it was made (MFS built with random
    CLIP weights); ``cartoqa dataset info`` shows them."""
    review: dict[str, Any] = Field(default_factory=dict)
    """A reviewed dataset's review (``cartoqa review export``): its statistics, the source
    dataset and the decisions file; empty for a dataset as generated."""


def _pkg_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def collect_versions(style_version: str | None = None) -> dict[str, str | None]:
    """Versions of cartoqa and the rendering stack installed here."""
    return {
        "cartoqa": __version__,
        "mapnik": _pkg_version("mapnik"),
        "openstreetmap-carto": style_version,
        "osmnx": _pkg_version("osmnx"),
    }


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: its folder, manifest and samples (in file order)."""

    path: Path
    manifest: Manifest
    samples: list[Sample]

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def image_path(self, relative: str) -> Path:
        """The absolute path of an image named in a sample's prompt."""
        return self.path / relative

    def by_id(self) -> dict[str, Sample]:
        return {s.id: s for s in self.samples}


class DatasetWriter:
    """Writes a dataset folder.  Use as a context manager; ``finish`` writes the manifest.

    >>> with DatasetWriter(folder) as w:          # doctest: +SKIP
    ...     w.add_image("rle-1.png", png_bytes)
    ...     w.add(sample)
    ...     w.finish(seeds=[42])

    Nothing is written at ``path`` until ``finish``: samples and images go to a
    hidden sibling folder (``.NAME.staging-PID``), which ``finish`` swaps in
    with one rename.  A dataset already at ``path`` (``overwrite=True``) stays
    whole and usable until that instant; a writer killed or failing before it
    leaves the old dataset as it was.  One writer at a time per target: the
    writer holds a lock (``.NAME.lock`` beside the folder) from the moment it
    is made, and a second writer is refused at once with a message naming the
    first.  Every check (target free, writable, not a file) runs here, before
    the caller does any expensive work.
    """

    def __init__(
        self, path: str | Path, *, name: str | None = None, overwrite: bool = False
    ) -> None:
        self.path = Path(path)
        self.name = name or self.path.resolve().name
        self._finished = False
        self._file: IO[str] | None = None
        target = self.path.absolute()
        parent = target.parent
        ensure_writable_folder(parent, what=f"a dataset {target.name}", error=DatasetError)
        try:
            self._lock = try_lock(parent / f".{target.name}.lock")
        except LockBusy as busy:
            raise DatasetError(
                f"{self.path} is being written by {busy.holder}; wait for it to finish or "
                "choose another folder"
            ) from None
        except OSError as exc:
            raise DatasetError(f"cannot lock {self.path} for writing: {exc.strerror}") from None
        try:
            _check_target(target, overwrite=overwrite)
            for stale in parent.glob(f".{target.name}.staging-*"):
                shutil.rmtree(stale, ignore_errors=True)  # a dead writer's (we hold the lock)
            self._stage = parent / f".{target.name}.staging-{os.getpid()}"
            (self._stage / IMAGES_DIR).mkdir(parents=True)
            self._partial = self._stage / _PARTIAL
            self._file = open(self._partial, "w", encoding="utf-8")  # noqa: SIM115
        except BaseException:
            self._lock.release()
            raise
        self._ids: set[str] = set()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._image_hashes: dict[str, str] = {}

    @property
    def staging_path(self) -> Path:
        """The hidden folder being written; it becomes ``path`` at ``finish``."""
        return self._stage

    def image_path(self, filename: str) -> Path:
        """Where to write an image so that a sample can name it as ``images/<filename>``
        (inside the staging folder until ``finish``)."""
        if "/" in filename or "\\" in filename or filename in ("", ".", ".."):
            raise DatasetError(f"image name {filename!r} must be a plain file name")
        return self._stage / IMAGES_DIR / filename

    def add_image(self, filename: str, data: bytes) -> str:
        """Store an image; returns the relative path to put in ``Prompt.images``."""
        write_atomic(self.image_path(filename), data)
        rel = f"{IMAGES_DIR}/{filename}"
        self._image_hashes[rel] = hashlib.sha256(data).hexdigest()
        return rel

    def add(self, sample: Sample) -> None:
        """Append one sample; its id must be new and its images already stored."""
        if self._finished or self._file is None:
            raise DatasetError("this dataset is finished; open a new DatasetWriter to add samples")
        if sample.id in self._ids:
            raise DatasetError(
                f"sample id {sample.id!r} is already in this dataset; ids must be unique"
            )
        for rel in sample.prompt.images:
            if not (self._stage / rel).is_file():
                raise DatasetError(
                    f"sample {sample.id!r} names image {rel!r}, which is not in {self.path}; "
                    "store it with add_image first"
                )
        self._file.write(sample.model_dump_json(exclude_defaults=False) + "\n")
        self._ids.add(sample.id)
        self._counts[(sample.task, sample.split)] += 1

    def add_all(self, samples: Iterable[Sample]) -> None:
        for s in samples:
            self.add(s)

    def finish(
        self,
        *,
        seeds: Iterable[int] = (),
        extract_hashes: Mapping[str, str] | None = None,
        style_version: str | None = None,
        attribution: Iterable[str] = (OSM_ATTRIBUTION,),
        shortfall: Mapping[str, int] | None = None,
        rejected: Mapping[str, Mapping[str, int]] | None = None,
        prompts: Mapping[str, str] | None = None,
        inputs: Mapping[str, Mapping[str, Any]] | None = None,
        warnings: Iterable[str] = (),
        review: Mapping[str, Any] | None = None,
    ) -> Manifest:
        """Close samples.jsonl, write manifest.json and swap the dataset in; returns the
        manifest."""
        if self._finished or self._file is None:
            raise DatasetError("finish() was already called")
        self._file.close()
        final = self._stage / SAMPLES_FILE
        self._partial.replace(final)
        counts: dict[str, dict[str, int]] = {}
        for (task, split), n in sorted(self._counts.items()):
            counts.setdefault(task, {})[split] = n
        manifest = Manifest(
            name=self.name,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            versions=collect_versions(style_version),
            seeds=sorted(set(seeds)),
            extract_hashes=dict(extract_hashes or {}),
            counts=counts,
            total=sum(self._counts.values()),
            samples_sha256=sha256_file(final),
            images_sha256=dict(sorted(self._image_hashes.items())),
            shortfall=dict(shortfall or {}),
            rejected={t: dict(sorted(r.items())) for t, r in (rejected or {}).items()},
            attribution=list(attribution),
            prompts=dict(prompts or {}),
            inputs={t: dict(v) for t, v in (inputs or {}).items()},
            warnings=list(warnings),
            review=dict(review or {}),
        )
        write_json_atomic(self._stage / MANIFEST_FILE, manifest.model_dump(mode="json"))
        _fsync_dir(self._stage)
        _swap_in(self._stage, self.path.absolute())
        self._finished = True
        self._lock.release()
        return manifest

    def abandon(self) -> None:
        """Drop what was staged; the folder at ``path`` stays as it was."""
        if self._file is not None and not self._file.closed:
            with contextlib.suppress(OSError):  # a full disk fails the flush again
                self._file.close()
        if not self._finished:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._finished = True
        self._lock.release()

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._finished:
            self.abandon()  # nothing half-made is ever at the target


def _check_target(target: Path, *, overwrite: bool) -> None:
    if not target.exists():
        return
    if not target.is_dir():
        raise DatasetError(
            f"{target} is a file, not a dataset folder; choose another output folder"
        )
    if (target / MANIFEST_FILE).exists():
        if not overwrite:
            raise DatasetError(
                f"{target} already holds a dataset; pass --overwrite to replace it "
                "(it stays usable until the new one is complete), or choose another folder"
            )
        return
    leftovers = [p.name for p in target.iterdir()]
    if leftovers and not set(leftovers) <= {SAMPLES_FILE, _PARTIAL, IMAGES_DIR}:
        raise DatasetError(
            f"{target} holds other files ({', '.join(sorted(leftovers)[:3])}...), not a "
            "cartoqa dataset; choose an empty or new folder (cartoqa replaces only dataset "
            "folders)"
        )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def _swap_in(stage: Path, target: Path) -> None:
    """Put the staged folder at ``target``: one atomic exchange where an old folder is
    there (then the old one is deleted), one rename where none is."""
    if not target.exists():
        stage.rename(target)
    elif _exchange(stage, target):
        shutil.rmtree(stage, ignore_errors=True)  # now holds the old dataset
    else:  # no atomic exchange here: two renames, the old one kept until the new is in
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(old)
        stage.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(target.parent)


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    where = ".".join(str(p) for p in e["loc"])
    return f"{where}: {e['msg']}" if where else e["msg"]


def load_dataset(
    path: str | Path, *, check_images: bool = True, verify_images: bool = False
) -> Dataset:
    """Read and validate a dataset folder.

    Raises ``DatasetError`` naming the file and line of the first bad sample,
    a repeated id, a missing image, or a manifest that does not match: the
    sample count and the SHA-256 of samples.jsonl are checked every time, the
    image bytes against the manifest's hashes with ``verify_images``.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise DatasetError(
            f"dataset folder {folder} does not exist; make one with 'cartoqa demo' or a generator"
        )
    mpath = folder / MANIFEST_FILE
    if not mpath.is_file():
        if (folder / _PARTIAL).exists():
            raise DatasetError(
                f"{folder} is a dataset whose generation did not finish (no {MANIFEST_FILE}); "
                "generate it again"
            )
        raise DatasetError(f"{folder} has no {MANIFEST_FILE}; it is not a cartoqa dataset folder")
    try:
        manifest = Manifest.model_validate_json(mpath.read_bytes())
    except ValidationError as exc:
        raise DatasetError(f"{mpath}: {_first_error(exc)}") from None
    spath = folder / SAMPLES_FILE
    if not spath.is_file():
        raise DatasetError(f"{folder} has a manifest but no {SAMPLES_FILE}")
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    raw = spath.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = raw.count(b"\n", 0, exc.start) + 1
        raise DatasetError(f"{spath}:{lineno}: not UTF-8 text; generate it again") from None
    del raw
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            sample = Sample.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{spath}:{lineno}: not valid JSON ({exc.msg})") from None
        except ValidationError as exc:
            raise DatasetError(f"{spath}:{lineno}: {_first_error(exc)}") from None
        if sample.id in seen:
            raise DatasetError(
                f"{spath}:{lineno}: sample id {sample.id!r} repeats line {seen[sample.id]}"
            )
        seen[sample.id] = lineno
        if check_images:
            for rel in sample.prompt.images:
                if not (folder / rel).is_file():
                    raise DatasetError(
                        f"{spath}:{lineno}: sample {sample.id!r} names image {rel!r}, "
                        f"which is missing from {folder}"
                    )
        samples.append(sample)
    if len(samples) != manifest.total:
        raise DatasetError(
            f"{mpath} says {manifest.total} samples but {spath} has {len(samples)}; "
            "the dataset was changed after it was made: generate it again"
        )
    if digest != manifest.samples_sha256:
        raise DatasetError(
            f"{spath} does not match its manifest (sha256 {digest[:12]}..., {mpath.name} says "
            f"{manifest.samples_sha256[:12]}...): it was changed after it was made, and run "
            "stores of the old one would be scored against the new truths; generate it again"
        )
    if verify_images:
        _verify_images(folder, manifest)
    return Dataset(path=folder, manifest=manifest, samples=samples)


def _verify_images(folder: Path, manifest: Manifest) -> None:
    if not manifest.images_sha256:
        raise DatasetError(
            f"{folder / MANIFEST_FILE} lists no image hashes (the dataset was made by an older "
            "cartoqa); its images cannot be verified: generate it again to record them"
        )
    for rel, want in manifest.images_sha256.items():
        p = folder / rel
        if not p.is_file():
            raise DatasetError(f"{folder}: image {rel!r} is missing")
        got = sha256_file(p)
        if got != want:
            raise DatasetError(
                f"{p} does not match its manifest (sha256 {got[:12]}..., expected "
                f"{want[:12]}...): the image was changed after the dataset was made; "
                "generate it again"
            )
