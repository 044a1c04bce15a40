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
import io
import json
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePosixPath
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
    "check_image",
    "collect_versions",
    "load_dataset",
    "swap_in_synced",
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
    variants: dict[str, Any] = Field(default_factory=dict)
    """The paired variants built beside the base samples (``cartoqa build --variants``):
    ``asked``, and per variant the samples ``made`` and ``unanswerable`` by task and those
    ``left_out`` by task and reason; empty (and not written) when none was asked."""


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
    the caller does any expensive work.  ``add_image`` decodes every image
    first and refuses one that does not decode (``check_image``).  The old
    folder's review store (``KEPT_STORES``) is carried into the new one in
    the swap, whole, under its own write lock.
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
        """Store an image; returns the relative path to put in ``Prompt.images``.  The bytes
        are decoded first (``check_image``): an image that is empty, cut short, or not the
        format its name says is refused, naming the file, and nothing is written."""
        path = self.image_path(filename)
        check_image(filename, data)
        write_atomic(path, data)
        rel = f"{IMAGES_DIR}/{filename}"
        self._image_hashes[rel] = hashlib.sha256(data).hexdigest()
        return rel

    def add_image_file(self, rel: str, source: Path, *, copy: bool) -> str:
        """Name an image kept outside ``images/`` at ``rel`` (a relative path whose first
        part is a folder of this dataset, "release/..."): copied there (``copy``), or reached
        through a link named by that first part to the folder ``source`` lies in at the same
        depth (made once; the images then stay where they are).  Decoded first, like
        ``add_image``; its hash goes into the manifest."""
        parts = PurePosixPath(rel).parts
        if len(parts) < 2 or parts[0] in (IMAGES_DIR, "..") or PurePosixPath(rel).is_absolute():
            raise DatasetError(f"image path {rel!r} must be '<folder>/<path>', not under images/")
        data = Path(source).read_bytes()
        check_image(rel, data)
        target = self._stage / rel
        if copy:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
        else:
            link = self._stage / parts[0]
            root = Path(source).absolute()
            for _ in parts[1:]:
                root = root.parent
            if not link.is_symlink():
                link.symlink_to(root, target_is_directory=True)
            elif Path(os.readlink(link)) != root:
                raise DatasetError(
                    f"image {rel!r} lies under {root}, but {parts[0]}/ links to "
                    f"{os.readlink(link)} already"
                )
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
        variants: Mapping[str, Any] | None = None,
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
            variants=dict(variants or {}),
        )
        # a dataset without paired variants keeps the manifest it always had
        write_json_atomic(
            self._stage / MANIFEST_FILE,
            manifest.model_dump(mode="json", exclude=None if variants else {"variants"}),
        )
        with _carried(self.path.absolute(), self._stage):  # the old folder's review store
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


#: the image format a file name's suffix claims (PIL's names)
IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP"}


def check_image(filename: str, data: bytes) -> None:
    """Raise ``DatasetError`` naming ``filename`` unless ``data`` decodes whole (PIL's
    ``verify`` and then ``load``: every pixel read) as the format its suffix names."""
    from PIL import Image, UnidentifiedImageError

    from cartoqa.stores.image_bytes import cut_short

    if not data:
        raise DatasetError(
            f"image {filename!r} is empty (0 bytes): a dataset holds only images that decode; "
            "render it again (a corrupt cache entry? delete it)"
        )
    want = IMAGE_FORMATS.get(Path(filename).suffix.lower())
    problem = cut_short(data)  # PIL may be set to decode truncated images silently
    if problem:
        raise DatasetError(
            f"image {filename!r} ({len(data)} bytes) is not whole: {problem}; a dataset "
            "holds only images that decode; render it again (a corrupt cache entry? delete it)"
        )
    try:
        with Image.open(io.BytesIO(data)) as im:
            got = im.format
            im.verify()
        with Image.open(io.BytesIO(data)) as im:
            im.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise DatasetError(
            f"image {filename!r} ({len(data)} bytes) does not decode as an image ({exc}): "
            "a dataset holds only images that decode; render it again (a corrupt cache "
            "entry? delete it)"
        ) from None
    except Image.DecompressionBombError as exc:
        raise DatasetError(f"image {filename!r} is too large to hold ({exc})") from None
    if want is not None and got != want:
        raise DatasetError(
            f"image {filename!r} is {got} data, not the {want} its name says: save it as "
            f"{want} or name it by its format"
        )


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


#: files of a dataset folder that are its users', not the dataset's: a rebuild (``overwrite``)
#: carries them into the new folder.  The review store's decisions are keyed by sample and
#: truth, so a decision about a truth the rebuild changed shows as such (``annotations``).
KEPT_STORES = ("review.sqlite",)


#: ``PRAGMA user_version`` of a kept store once carried away: the copy left in the old folder
#: takes no more writes (``annotations.decisions`` refuses them, naming the rebuild)
CARRIED_MARK = 0x6D6F7665


@contextlib.contextmanager
def _carried(target: Path, stage: Path) -> Iterator[None]:
    """Copy each kept SQLite store of the folder at ``target`` into ``stage`` for the block
    (the swap).  Each is copied under its own write lock and, in the same transaction, marked
    as carried away (``CARRIED_MARK``), so no decision lands in the old copy once it was
    copied; if the block fails the mark is taken off again.  A store that cannot be copied
    stops the swap (``DatasetError``): the old folder stays as it was."""
    marked: list[Path] = []
    try:
        for name in KEPT_STORES:
            old = target / name
            if old.is_file():
                _copy_store(old, stage / name)
                marked.append(old)
        yield
    except BaseException:
        for old in marked:
            with (
                contextlib.suppress(sqlite3.Error),
                contextlib.closing(sqlite3.connect(old, timeout=60.0, isolation_level=None)) as db,
            ):
                db.execute("PRAGMA user_version = 0")
        raise


def _copy_store(old: Path, new: Path) -> None:
    """``old`` (with what its -wal holds) copied whole to ``new`` with SQLite's backup, and
    ``old`` marked as carried, in one write transaction on ``old``."""
    try:
        with contextlib.closing(sqlite3.connect(old, timeout=60.0, isolation_level=None)) as src:
            src.execute("BEGIN IMMEDIATE")  # waits for a decision being written, then holds
            try:  # read by a second connection: all that is committed, and nothing can be now
                with (
                    contextlib.closing(sqlite3.connect(old, isolation_level=None)) as reader,
                    contextlib.closing(sqlite3.connect(new, isolation_level=None)) as dst,
                ):
                    reader.backup(dst)
                    got = dst.execute("PRAGMA quick_check(1)").fetchone()[0]
                if got != "ok":
                    raise sqlite3.DatabaseError(f"the copy does not check: {got}")
                src.execute(f"PRAGMA user_version = {CARRIED_MARK}")
                src.execute("COMMIT")
            except BaseException:
                if src.in_transaction:
                    src.execute("ROLLBACK")
                raise
    except sqlite3.Error as exc:
        with contextlib.suppress(OSError):
            new.unlink()
        busy = "locked" in str(exc) or "busy" in str(exc)
        raise DatasetError(
            f"{old} (the dataset's review store) cannot be carried into the rebuilt dataset "
            f"({exc}); nothing was replaced: "
            + (
                "a review tool or import is writing it; let it finish and build again"
                if busy
                else f"copy it away (with its -wal), remove it from {old.parent} and build "
                "again, then put it back"
            )
        ) from None
    with open(new, "rb") as f:
        os.fsync(f.fileno())


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


def swap_in_synced(stage: Path, target: Path) -> None:
    """``_swap_in`` once every folder of ``stage`` is on disk (deepest first): the folder
    swapped in is whole after a crash (exports and reports)."""
    folders = [Path(root) for root, _, _ in os.walk(stage)]
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        _fsync_dir(folder)
    _swap_in(stage, target)


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
    if verify_images and (manifest.images_sha256 or any(s.prompt.images for s in samples)):
        _verify_images(folder, manifest)  # (a dataset with no image has none to verify)
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
