"""The openstreetmap-carto 5.7.0 Mapnik style, made loadable offline and strictly.

Debian's ``openstreetmap-carto-common`` ships ``style.xml`` and ``symbols/``
but not ``patterns/`` nor ``symbols/shields/``.  ``prepare_style`` makes a
working copy in the cache with those files taken from, in order: the folder
given (argument or CARTOQA_CARTO_FILES), the upstream release archive where
a network exists, or transparent placeholders with a warning that names
what is missing and how to get it.  Fonts go into a flat ``fonts/`` folder
(Mapnik reads it non-recursively), and faces that no installed font
provides are removed from the fontsets, so that a strict load succeeds.

The working copy is a cache (issue 27, item 7): made in a temporary folder and
renamed into place, with the SHA-256 of the files cartoqa writes (style.xml,
placeholders.txt, removed-faces.txt) in its ``.prepared`` marker; a copy whose
files do not match is dropped with a warning and made again, and temporary
folders of killed runs are cleared.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from cartoqa.errors import RenderStackError
from cartoqa.settings import cache_dir, carto_files_dir
from cartoqa.stores.cache_files import clean_stale_tmp

from .database import CARTO_DIR, Connection

__all__ = ["STYLE_VERSION", "CartoStyle", "drop_bad_copy", "load_map", "prepare_style"]

log = logging.getLogger(__name__)

STYLE_VERSION = "5.7.0"
UPSTREAM_ARCHIVE = (
    "https://github.com/gravitystorm/openstreetmap-carto/archive/refs/tags/v5.7.0.tar.gz"
)
FONT_DIRS = [
    Path("/usr/share/fonts/truetype/noto"),
    Path("/usr/share/fonts/opentype/noto"),
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/truetype/unifont"),
    Path("/usr/share/fonts/opentype/unifont"),
]
_MISSING_PARTS = ("patterns", "symbols/shields")
_PREP_VERSION = 2  # 2: .prepared holds the SHA-256 of the files written
_WRITTEN = ("style.xml", "placeholders.txt", "removed-faces.txt")
_PLACEHOLDER_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1" viewBox="0 0 1 1"></svg>\n'
)


@dataclass(frozen=True)
class CartoStyle:
    """A prepared working copy of the style."""

    folder: Path
    """The working copy: style.xml, symbols/, patterns/, fonts/."""
    version: str
    """openstreetmap-carto version."""
    placeholders: tuple[str, ...]
    """Style files replaced by empty placeholders (empty when complete)."""
    removed_faces: tuple[str, ...]
    """Font faces dropped from the fontsets because no installed font has them."""

    @property
    def xml_path(self) -> Path:
        return self.folder / "style.xml"

    @property
    def complete(self) -> bool:
        return not self.placeholders


def _debian_style_version() -> str:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "openstreetmap-carto-common"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return out.split("-")[0] or STYLE_VERSION
    except (OSError, subprocess.CalledProcessError):
        return STYLE_VERSION


def _referenced_files(xml: str) -> set[str]:
    return {m for m in re.findall(r'file="([^"]+)"', xml) if "[" not in m}  # [..] is an expression


def _fetch_upstream(dest: Path) -> bool:
    """Fetch patterns/ and symbols/shields/ from the upstream archive; False without a network."""
    try:
        with urllib.request.urlopen(UPSTREAM_ARCHIVE, timeout=30) as resp:
            data = resp.read()
    except OSError as exc:
        log.info("could not fetch %s: %s", UPSTREAM_ARCHIVE, exc)
        return False
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            if len(parts) == 2 and parts[1].startswith(_MISSING_PARTS) and member.isfile():
                target = dest / parts[1]
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(member)
                if src is not None:
                    target.write_bytes(src.read())
    return True


def prepare_style(
    *, carto_files: Path | None = None, cache: Path | None = None, allow_download: bool = True
) -> CartoStyle:
    """Make (or reuse) the working copy of the style in the cache."""
    import mapnik

    src_xml = CARTO_DIR / "style.xml"
    if not src_xml.is_file():
        raise RenderStackError(
            f"{src_xml} is missing: install Debian's openstreetmap-carto-common "
            "(bash scripts/setup.sh main)"
        )
    extras = Path(carto_files) if carto_files else carto_files_dir()
    if extras is not None and not (extras / "patterns").is_dir():
        raise RenderStackError(
            f"{extras} has no patterns/ folder; point CARTOQA_CARTO_FILES at a folder holding "
            "openstreetmap-carto 5.7.0's patterns/ and symbols/shields/"
        )
    fonts = sorted(
        f
        for d in FONT_DIRS
        if d.is_dir()
        for f in d.iterdir()
        if f.suffix.lower() in (".ttf", ".otf", ".ttc")
    )
    key_src = "|".join(
        [str(_PREP_VERSION), str(src_xml.stat().st_mtime), str(extras), *(f.name for f in fonts)]
    )
    key = hashlib.sha256(key_src.encode()).hexdigest()[:12]
    version = _debian_style_version()
    folder = (cache or cache_dir()) / "style" / f"carto-{version}-{key}"
    clean_stale_tmp(folder.parent, recursive=False)
    if folder.is_dir() and (why := _why_bad(folder)) is not None:
        drop_bad_copy(folder, why)
    done = folder / ".prepared"
    if not done.is_file():
        tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        # symbols: links to Debian's files, plus a real shields/ folder
        (tmp / "symbols").mkdir()
        (tmp / "symbols" / "shields").mkdir()
        for entry in (CARTO_DIR / "symbols").iterdir():
            if entry.name != "shields":
                (tmp / "symbols" / entry.name).symlink_to(entry)
        for entry in (CARTO_DIR / "symbols" / "shields").glob("*"):
            (tmp / "symbols" / "shields" / entry.name).symlink_to(entry)
        if extras is not None:
            shutil.copytree(extras / "patterns", tmp / "patterns")
            if (extras / "symbols" / "shields").is_dir():
                shutil.copytree(
                    extras / "symbols" / "shields", tmp / "symbols" / "shields", dirs_exist_ok=True
                )
        elif allow_download:
            _fetch_upstream(tmp)
        (tmp / "fonts").mkdir()
        for f in fonts:
            link = tmp / "fonts" / f.name
            if not link.exists():
                link.symlink_to(f)
        xml = src_xml.read_text(encoding="utf-8")
        placeholders = []
        for rel in sorted(_referenced_files(xml)):
            target = tmp / rel
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(_PLACEHOLDER_SVG)
                placeholders.append(rel)
        mapnik.register_fonts(str(tmp / "fonts"))
        available = set(mapnik.FontEngine.face_names())
        faces = set(re.findall(r'<Font face-name="([^"]+)" />', xml))
        removed = sorted(faces - available)
        for face in removed:
            xml = xml.replace(f'<Font face-name="{face}" />', "")
        (tmp / "style.xml").write_text(xml, encoding="utf-8")
        (tmp / "placeholders.txt").write_text("\n".join(placeholders))
        (tmp / "removed-faces.txt").write_text("\n".join(removed))
        digests = {n: hashlib.sha256((tmp / n).read_bytes()).hexdigest() for n in _WRITTEN}
        (tmp / ".prepared").write_text(json.dumps({"version": version, "sha256": digests}))
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    placeholders_t = tuple(x for x in (folder / "placeholders.txt").read_text().splitlines() if x)
    removed_t = tuple(x for x in (folder / "removed-faces.txt").read_text().splitlines() if x)
    if placeholders_t:
        log.warning(
            "the carto style lacks %d files (%s...): they render as nothing. Set "
            "CARTOQA_CARTO_FILES to a folder with openstreetmap-carto 5.7.0's patterns/ and "
            "symbols/shields/ (from %s)",
            len(placeholders_t),
            ", ".join(placeholders_t[:3]),
            UPSTREAM_ARCHIVE,
        )
    return CartoStyle(folder, version, placeholders_t, removed_t)


def drop_bad_copy(folder: Path, why: str) -> None:
    """Remove a cached working copy that failed its check (renamed aside first, so a process
    reading it never sees half of it), with a warning saying why; it is made again."""
    log.warning("the cached style %s is bad (%s): dropped; it is made again", folder, why)
    gone = folder.with_name(folder.name + f".tmp-{os.getpid()}-gone")
    shutil.rmtree(gone, ignore_errors=True)
    with contextlib.suppress(OSError):  # (another process may have dropped it first)
        folder.rename(gone)
    shutil.rmtree(gone, ignore_errors=True)


def _why_bad(folder: Path) -> str | None:
    """Why the working copy in ``folder`` cannot be used (a file cut short or changed, the
    marker missing), or None when its files match the SHA-256 its marker records."""
    try:
        digests = json.loads((folder / ".prepared").read_text())["sha256"]
        for name in _WRITTEN:
            data = (folder / name).read_bytes()
            if hashlib.sha256(data).hexdigest() != digests[name]:
                return f"{name}: {len(data)} bytes whose SHA-256 is not the one recorded"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def style_xml(style: CartoStyle, conn: Connection) -> str:
    """The style's XML pointed at one database (dbname, host, port, user on every layer)."""
    import mapnik

    mapnik.register_fonts(str(style.folder / "fonts"))
    xml = style.xml_path.read_text(encoding="utf-8")
    params = "".join(
        f'<Parameter name="{k}"><![CDATA[{v}]]></Parameter>'
        for k, v in (
            ("dbname", conn.dbname),
            ("host", conn.host),
            ("port", conn.port),
            ("user", conn.user),
        )
    )
    return xml.replace('<Parameter name="dbname"><![CDATA[gis]]></Parameter>', params)


def load_map(style: CartoStyle, conn: Connection, width: int = 256, height: int = 256) -> object:
    """A ``mapnik.Map`` with the style loaded strictly against the extract's database."""
    import mapnik

    m = mapnik.Map(width, height)
    try:
        mapnik.load_map_from_string(m, style_xml(style, conn), True, str(style.folder) + "/")
    except RuntimeError as exc:
        raise RenderStackError(f"the carto style did not load strictly: {str(exc)[:600]}") from None
    return m
