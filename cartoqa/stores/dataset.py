"""The dataset store: a folder with ``samples.jsonl``, ``images/`` and ``manifest.json``.

``DatasetWriter`` builds one; ``load_dataset`` reads one back, validating
every line and naming the first bad one by its line number.  A folder whose
writer did not finish has no manifest and is refused, so a half-made dataset
is never mistaken for a whole one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cartoqa import __version__
from cartoqa.errors import DatasetError
from cartoqa.records import OSM_ATTRIBUTION, Sample

from ._files import sha256_file, write_atomic, write_json_atomic

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
    """SHA-256 of samples.jsonl: identifies this exact dataset in run stores."""
    attribution: list[str] = Field(default_factory=list)
    """Credits the data requires, shown with every result ("© OpenStreetMap contributors")."""


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
    """

    def __init__(
        self, path: str | Path, *, name: str | None = None, overwrite: bool = False
    ) -> None:
        self.path = Path(path)
        self.name = name or self.path.resolve().name
        if (self.path / MANIFEST_FILE).exists() and not overwrite:
            raise DatasetError(
                f"{self.path} already holds a dataset; pass overwrite=True (--overwrite) or "
                "choose another folder"
            )
        (self.path / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
        (self.path / MANIFEST_FILE).unlink(missing_ok=True)
        self._partial = self.path / _PARTIAL
        self._file = open(self._partial, "w", encoding="utf-8")  # noqa: SIM115
        self._ids: set[str] = set()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._finished = False

    def image_path(self, filename: str) -> Path:
        """Where to write an image so that a sample can name it as ``images/<filename>``."""
        if "/" in filename or "\\" in filename or filename in ("", ".", ".."):
            raise DatasetError(f"image name {filename!r} must be a plain file name")
        return self.path / IMAGES_DIR / filename

    def add_image(self, filename: str, data: bytes) -> str:
        """Store an image; returns the relative path to put in ``Prompt.images``."""
        write_atomic(self.image_path(filename), data)
        return f"{IMAGES_DIR}/{filename}"

    def add(self, sample: Sample) -> None:
        """Append one sample; its id must be new and its images already stored."""
        if self._finished:
            raise DatasetError("this dataset is finished; open a new DatasetWriter to add samples")
        if sample.id in self._ids:
            raise DatasetError(
                f"sample id {sample.id!r} is already in this dataset; ids must be unique"
            )
        for rel in sample.prompt.images:
            if not (self.path / rel).is_file():
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
    ) -> Manifest:
        """Close samples.jsonl and write manifest.json; returns the manifest."""
        if self._finished:
            raise DatasetError("finish() was already called")
        self._file.close()
        final = self.path / SAMPLES_FILE
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
            attribution=list(attribution),
        )
        write_json_atomic(self.path / MANIFEST_FILE, manifest.model_dump(mode="json"))
        self._finished = True
        return manifest

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._finished:
            self._file.close()  # leave samples.jsonl.partial and no manifest: not a dataset


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    where = ".".join(str(p) for p in e["loc"])
    return f"{where}: {e['msg']}" if where else e["msg"]


def load_dataset(path: str | Path, *, check_images: bool = True) -> Dataset:
    """Read and validate a dataset folder.

    Raises ``DatasetError`` naming the file and line of the first bad sample,
    a repeated id, a missing image, or a manifest that does not match.
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
    with open(spath, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
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
    return Dataset(path=folder, manifest=manifest, samples=samples)
