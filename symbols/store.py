"""The legend as a cached build output: the catalogue, its images, the look-alike classes and
the CLIP embeddings, made once per style, schema and model and reused (issue 16, item 6).

    legend = load_legend(cache=Path("~/.cache/cartoqa"))          # built, or read back
    vectors, info = load_embeddings(legend, ClipWeights(checkpoint=Path("ViT-B-32.pt")))

A legend lives in ``<cache>/symbols/legend-<key>/``, ``key`` a hash of what
decides its pixels: the prepared style (its version and working copy, so
carto's patterns and the fonts count), the tagging schema's version, Mapnik's
version, ``LEGEND_VERSION`` (the drawing and look-alike code's), the entries
drawn (their tags, names and terms) and the tag counts that name a class
(``symbols.typical``). The folder holds ``catalogue.json`` (the entries, names
and versions), ``legend.json`` (images, drops, look-alike classes, the member
naming each, near pairs) and the PNGs. Embeddings
sit beside them, ``clip-<key>.npz``, keyed by the weights (model, checkpoint
file's SHA-256 or hub tag, or the random seed) and the open_clip and torch
versions.

Everything is written under a temporary name and renamed into place, so a
build killed part-way leaves nothing that a later one would read; two builds
at once each make their own, the first rename wins and the other's copy is
dropped. Rebuilding from the same pinned inputs draws the same bytes.

Every read is checked (issue 27): ``legend.json`` keeps each image's SHA-256,
and a legend is handed out only when its two JSON files parse and every image
matches its digest and decodes at its size; otherwise it is dropped with a
warning naming what was wrong and drawn again whole (its look-alike classes
come from all the images). The embeddings' file has its SHA-256 beside it
(``cartoqa.stores.cache_files``); one cut short, empty or of the wrong bytes is
computed again with a warning.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cartoqa.errors import CartoqaError
from cartoqa.settings import cache_dir
from cartoqa.stores.cache_files import (
    BadCacheEntry,
    clean_stale_tmp,
    decoded_png,
    load_cache_file,
    write_cache_file,
)

from .catalogue import CatalogueEntry, build_catalogue
from .embed import ClipWeights, embed_images
from .tag_uses import TAG_USES

__all__ = ["LEGEND_VERSION", "LegendSet", "load_embeddings", "load_legend", "weights_key"]

#: bump when the legend's drawing or look-alike rules change (sizes, zooms, the grid, the
#: layers drawn, thresholds): old caches are not reused
LEGEND_VERSION = 4  # 4: each image's SHA-256 in legend.json, checked on every read

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LegendSet:
    """A drawn legend: what each image shows, and what was dropped."""

    folder: Path
    """``<cache>/symbols/legend-<key>``."""
    key: str
    """The hash of its inputs (module docstring)."""
    style_version: str
    """openstreetmap-carto's version."""
    schema_version: str
    """The iD tagging schema's version (the names)."""
    entries: dict[str, CatalogueEntry]
    """"category:key" -> the catalogue entry, for every image drawn."""
    images: dict[str, Path]
    """"category:key" -> its PNG."""
    dropped: dict[str, str]
    """"category:key" -> why it has no image."""
    classes: list[frozenset[str]]
    """The look-alike classes (``symbols.lookalike``)."""
    typical: tuple[str | None, ...] = field(default_factory=tuple)
    """Per class (in ``classes``' order), the member that names it (``symbols.typical``);
    None where the schema names none of its members."""
    near: list[frozenset[str]] = field(default_factory=list)
    """Pairs of features that are near tints or differ only by width
    (``symbols.lookalike.near_pairs``): never options of one question."""
    catalogue_size: int = 0
    """Entries in the catalogue (drawn and dropped)."""
    built: bool = False
    """True when this call drew it; False when it was read from the cache."""
    placeholders: tuple[str, ...] = field(default_factory=tuple)
    """Style files that were empty placeholders (carto's patterns missing)."""

    def distinct(self) -> int:
        """Features a person can tell apart: images, a look-alike class counting once."""
        members = sum(len(c) for c in self.classes)
        return len(self.images) - members + len(self.classes)

    def describe(self) -> dict[str, Any]:
        """What a manifest records of the legend."""
        per = {c: sum(k.startswith(f"{c}:") for k in self.images) for c in _CATEGORIES}
        return {
            "key": self.key,
            "style_version": self.style_version,
            "schema": f"@openstreetmap/id-tagging-schema {self.schema_version}",
            "catalogue": self.catalogue_size,
            "images": per,
            "dropped": len(self.dropped),
            "lookalike_classes": len(self.classes),
            "near_pairs": len(self.near),
            "distinct": self.distinct(),
        }


_CATEGORIES = ("symbol", "line", "area")


def _tmp_name(final: Path) -> Path:
    return final.with_name(f"{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _clear_stale(root: Path) -> None:
    """Drop the temporary folders of builds whose process is gone (killed part-way)."""
    for tmp in root.glob("*.tmp-*"):
        try:
            pid = int(tmp.name.rsplit(".tmp-", 1)[1].split("-")[0])
        except (IndexError, ValueError):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True) if tmp.is_dir() else tmp.unlink(missing_ok=True)
        except PermissionError:
            pass  # someone else's live process


def _legend_key(style: Any, schema_version: str, entries: Sequence[CatalogueEntry]) -> str:
    import mapnik

    parts = [
        str(LEGEND_VERSION),
        style.folder.name,  # carto-<version>-<hash of its inputs: patterns, fonts>
        ",".join(style.placeholders),
        schema_version,
        str(getattr(mapnik, "mapnik_version", lambda: "?")()),
        *(json.dumps(asdict(e), sort_keys=True) for e in entries),  # names and terms too
        json.dumps(TAG_USES, sort_keys=True),  # which member names a class
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def load_legend(
    *,
    cache: Path | None = None,
    carto_files: Path | None = None,
    cluster: object | None = None,
    only: Sequence[str] | None = None,
    assets: Path | None = None,
    dsn: str | None = None,
) -> LegendSet:
    """The legend of the whole catalogue (or of the entries ``only`` names, as
    "category:key"), read from the cache when it holds one of the same inputs, else drawn
    (``symbols.legend.render_legend``), classed and stored there.  ``cache``: the cartoqa
    cache (``CARTOQA_CACHE``, default ~/.cache/cartoqa); ``cluster`` as for
    ``render_legend``, ``dsn`` a PostgreSQL server instead of the private cluster."""
    from maps.style import prepare_style

    from .legend import render_legend
    from .lookalike import class_medoids, lookalike_classes, near_pairs
    from .typical import typical_member

    base = Path(cache) if cache else cache_dir()
    entries, schema_version = build_catalogue(assets=assets)
    if only is not None:
        wanted = set(only)
        unknown = sorted(wanted - {f"{e.category}:{e.key}" for e in entries})
        if unknown:
            raise CartoqaError(
                f"not in the catalogue: {', '.join(unknown[:5])}; name entries as "
                "'category:key=value' ('symbol:amenity=bank')"
            )
        entries = [e for e in entries if f"{e.category}:{e.key}" in wanted]
    style = prepare_style(carto_files=carto_files, cache=base)
    key = _legend_key(style, schema_version, entries)
    root = base / "symbols"
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"legend-{key}"
    if (final / "legend.json").is_file():
        try:
            return _read(final)
        except BadCacheEntry as exc:
            log.warning("the cached legend %s is bad (%s): dropped; it is drawn again", final, exc)
            _drop(final)
    _clear_stale(root)
    tmp = _tmp_name(final)
    try:
        legend = render_legend(
            entries, tmp, carto_files=carto_files, cache=base, cluster=cluster, dsn=dsn
        )
        classes = lookalike_classes(legend.images)
        near = near_pairs(legend.images)
        by_key = {f"{e.category}:{e.key}": e for e in entries}
        typical = [
            typical_member(medoids, by_key) or typical_member(c, by_key)
            for c, medoids in zip(classes, class_medoids(legend.images, classes), strict=True)
        ]
        (tmp / "legend-grid.osm").unlink(missing_ok=True)
        rel = {k: p.relative_to(tmp).as_posix() for k, p in legend.images.items()}
        (tmp / "catalogue.json").write_text(
            json.dumps(
                {
                    "style_version": style.version,
                    "schema_version": schema_version,
                    "entries": [asdict(e) for e in entries],
                },
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )
        (tmp / "legend.json").write_text(
            json.dumps(
                {
                    "key": key,
                    "legend_version": LEGEND_VERSION,
                    "placeholders": list(style.placeholders),
                    "images": rel,
                    "sha256": {k: _file_sha256(p) for k, p in legend.images.items()},
                    "dropped": legend.dropped,
                    "classes": [sorted(c) for c in classes],
                    "typical": typical,
                    "near": [list(p) for p in near],
                },
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )
        try:
            tmp.rename(final)
        except OSError:
            if not (final / "legend.json").is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another build stored it first
            return _read(final)  # (a bad one raises: the build that stored it is at fault)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _read(final, built=True)


def _drop(folder: Path) -> None:
    """Remove a bad cached legend: renamed away first (readers see it whole or not at all)."""
    gone = _tmp_name(folder)
    try:
        folder.rename(gone)
    except OSError:
        return  # another process dropped (or replaced) it first
    shutil.rmtree(gone, ignore_errors=True)


def _read(folder: Path, *, built: bool = False) -> LegendSet:
    """The legend stored in ``folder``, every image checked; ``BadCacheEntry`` saying what is
    wrong (a file that does not parse, an image that does not match its SHA-256 or does not
    decode at its size) otherwise."""
    try:
        return _read_unchecked(folder, built=built)
    except BadCacheEntry:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BadCacheEntry(f"{type(exc).__name__}: {str(exc)[:200]}") from None


def _check_images(folder: Path, meta: dict[str, Any]) -> None:
    from .legend import _SIZE

    digests = meta.get("sha256")
    if not isinstance(digests, dict) or set(digests) != set(meta["images"]):
        raise BadCacheEntry("legend.json lacks the images' SHA-256")
    for key, rel in meta["images"].items():
        p = folder / rel
        data = p.read_bytes()
        if hashlib.sha256(data).hexdigest() != digests[key]:
            raise BadCacheEntry(f"{p}: {len(data)} bytes whose SHA-256 is not the one recorded")
        size = _SIZE[key.split(":", 1)[0]]
        try:
            decoded_png(data, size=(size, size))
        except BadCacheEntry as exc:
            raise BadCacheEntry(f"{p}: {exc}") from None


def _read_unchecked(folder: Path, *, built: bool) -> LegendSet:
    cat = json.loads((folder / "catalogue.json").read_text(encoding="utf-8"))
    meta = json.loads((folder / "legend.json").read_text(encoding="utf-8"))
    _check_images(folder, meta)
    by_key = {}
    for raw in cat["entries"]:
        e = CatalogueEntry(
            **{
                **raw,
                "layers": tuple(raw["layers"]),
                "icons": tuple(raw["icons"]),
                "terms": tuple(raw.get("terms", ())),
            }
        )
        by_key[f"{e.category}:{e.key}"] = e
    images = {k: folder / rel for k, rel in meta["images"].items()}
    return LegendSet(
        folder=folder,
        key=meta["key"],
        style_version=cat["style_version"],
        schema_version=cat["schema_version"],
        entries={k: by_key[k] for k in images},
        images=images,
        dropped=dict(meta["dropped"]),
        classes=[frozenset(c) for c in meta["classes"]],
        typical=tuple(meta.get("typical") or [None] * len(meta["classes"])),
        near=[frozenset(p) for p in meta.get("near", [])],
        catalogue_size=len(by_key),
        built=built,
        placeholders=tuple(meta.get("placeholders", ())),
    )


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def weights_key(weights: ClipWeights) -> str:
    """The hash that names a legend's embeddings by these weights (module docstring)."""
    from importlib.metadata import PackageNotFoundError, version

    def _v(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "absent"

    source = weights.describe()
    if weights.checkpoint is not None and weights.checkpoint.is_file():
        source["checkpoint"] = _file_sha256(weights.checkpoint)
    parts = [json.dumps(source, sort_keys=True), _v("open_clip_torch"), _v("torch")]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def load_embeddings(
    legend: LegendSet, weights: ClipWeights
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Each legend image's CLIP embedding ("category:key" -> unit vector) and what made
    them (``ClipWeights.describe`` plus ``cached``: whether they were read back).  Random
    weights still warn loudly when read from the cache."""
    from .embed import warn_random_weights

    clean_stale_tmp(legend.folder, recursive=False)
    path = legend.folder / f"clip-{weights_key(weights)}.npz"
    keys = sorted(legend.images)

    def load(data: bytes) -> np.ndarray:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            stored = [str(k) for k in z["keys"]]
            vectors = np.asarray(z["vectors"])
        if stored != keys:
            raise BadCacheEntry("its keys are not the legend's images")
        if vectors.ndim != 2 or len(vectors) != len(keys) or not np.isfinite(vectors).all():
            raise BadCacheEntry(f"vectors of shape {vectors.shape}, not one per image")
        return vectors

    cached = load_cache_file(path, load, what="CLIP embeddings")
    if cached is not None:
        if weights.random_weights:
            warn_random_weights()
        return dict(zip(keys, cached, strict=True)), {**weights.describe(), "cached": True}
    vectors, info = embed_images([legend.images[k] for k in keys], weights)
    buf = io.BytesIO()
    np.savez(buf, keys=np.asarray(keys), vectors=vectors)
    write_cache_file(path, buf.getvalue())
    return dict(zip(keys, vectors, strict=True)), {**info, "cached": False}
