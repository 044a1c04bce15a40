"""Variants of the prepared openstreetmap-carto style: the same maps with one thing changed.

``without_labels(style)`` is the style with every label taken out (the ``nolabels``
variant of issue 32): road names, road ref shields, place, POI, area, water and railway
names, junction names and refs, house numbers and names.  In Mapnik's XML only two
symbolizers write text, ``TextSymbolizer`` and ``ShieldSymbolizer``; every one whose text
comes from the data (an expression with a ``[field]``) is removed.  Kept:

- the text symbolizers that write a constant, not a name: the arrows ('🠖') that mark the
  direction of designated one-way paths are symbols (road one-way arrows are markers);
- the dot of a place (``symbols/place/*.svg``, drawn by the place name's shield at low
  zooms): it stays as a ``MarkersSymbolizer`` of the same file at the place's point, so a
  place with a dot keeps it (it may now show where its name found no room);
- every icon, fill, line and pattern, every rule (a rule left without symbolizers still
  matches first, so no feature falls through to a later rule), every layer and its SQL (the
  colour-coded readers, ``maps.feature_pixels`` and ``maps.labels``, find their layers and
  SQL unchanged; their coded renders then place no text, as the tiles do not).

Icons may be placed where the base style's labels took their room: the variant's tiles are
a render of their own, and truths read from them are read from that render.

The variant is a working copy of its own beside the base copy (``<base>-nolabels1``, the
number being the variant code's version, so that the tile cache, keyed by the copy's folder
name, never mixes the two styles nor two versions of the variant), made in a temporary
folder and renamed into place, with the SHA-256 of its files and of the base's style.xml in
its ``.prepared`` marker: a copy cut short, changed, or made from another base is dropped
with a warning and made again.  It shares the base's symbols, patterns and fonts as copies
of the base's folders (links stay links to the same system files), so it does not depend on
the base copy staying where it is.

``in_language_style(style, "de")`` is the style reading every name in German (the
``lang:XX`` variant): each layer's SQL reads the extract's views of that language
(``planet_osm_point_lang_de`` ...: every column of the table, ``name`` taken from
``name:de`` where the object has it, else ``name``; ``maps.languages``, which also holds
``way_names`` and ``translated_share``, re-exported here) instead of the tables; nothing
else changes.  It is a copy made and checked as the no-labels one (``<base>-lang-de1``,
its ``variant.json`` naming the language).  ``MapEngine.in_language`` makes the views and
draws with it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from cartoqa.errors import CartoqaError, RenderStackError
from cartoqa.stores.cache_files import clean_stale_tmp

from .languages import (
    TABLES,
    language_code,
    language_sql,
    tables_read,
    translated_share,
    way_names,
)
from .style import CartoStyle, drop_bad_copy

__all__ = [
    "LANGUAGE",
    "NOLABELS",
    "in_language_style",
    "strip_labels",
    "translated_share",
    "variant_info",
    "way_names",
    "without_labels",
]

log = logging.getLogger(__name__)

NOLABELS = "nolabels"
_VARIANT_VERSION = 1  # bump when strip_labels changes what it removes
LANGUAGE = "lang"
_LANG_VERSION = 1  # bump when the language copy's XML changes
_WRITTEN = ("style.xml", "variant.json")
_SHARED = ("symbols", "patterns", "fonts")

#: a text-writing symbolizer as the carto style's XML writes it: attributes, then its text
#: expression in CDATA
_TEXT = re.compile(
    r"<(TextSymbolizer|ShieldSymbolizer)\b([^>]*?)>\s*<!\[CDATA\[(.*?)\]\]>\s*</\1>", re.S
)
_ANY_TEXT = re.compile(r"<(TextSymbolizer|ShieldSymbolizer)\b")
_PLACE_DOT = re.compile(r'\sfile="(symbols/place/[^"\[]+\.svg)"')


def strip_labels(xml: str) -> tuple[str, dict[str, int]]:
    """The style ``xml`` without its labels (the module's notes), and what was done, counted:
    ``TextSymbolizer`` and ``ShieldSymbolizer`` (removed), ``place_dots`` (shields whose dot
    stays as a marker), ``kept_constant_text`` (arrows).  Raises ``RenderStackError`` when a
    text symbolizer is written in a form this code does not know (another style version)."""
    counts = {"TextSymbolizer": 0, "ShieldSymbolizer": 0, "place_dots": 0,
              "kept_constant_text": 0}  # fmt: skip

    def replace(m: re.Match[str]) -> str:
        kind, attrs, expr = m.group(1), m.group(2), m.group(3)
        if "[" not in expr:  # a constant (a direction arrow), not a name from the data
            counts["kept_constant_text"] += 1
            return m.group(0)
        counts[kind] += 1
        dot = _PLACE_DOT.search(attrs) if kind == "ShieldSymbolizer" else None
        if dot is not None:
            counts["place_dots"] += 1
            return f'<MarkersSymbolizer file="{dot.group(1)}" placement="point" />'
        return ""

    out = _TEXT.sub(replace, xml)
    left = len(_ANY_TEXT.findall(out))
    if left != counts["kept_constant_text"]:
        raise RenderStackError(
            f"the style has {left - counts['kept_constant_text']} text symbolizer(s) written in "
            "a form the no-labels variant does not know (not '<TextSymbolizer ...><![CDATA[...]]>"
            "</TextSymbolizer>'): is it openstreetmap-carto 5.7.0's style.xml?"
        )
    return out, counts


def variant_info(style: CartoStyle) -> dict | None:
    """What a variant copy records of itself (``variant.json``: its name, the base copy, the
    counts of ``strip_labels``); None for a base copy."""
    p = style.folder / "variant.json"
    if not p.is_file():
        return None
    info: dict = json.loads(p.read_text(encoding="utf-8"))
    return info


def without_labels(style: CartoStyle) -> CartoStyle:
    """The prepared working copy of ``style`` with no labels (the module's notes), made now
    or reused from the cache; ``style`` itself when it already is one."""
    info = variant_info(style)
    if info is not None and info.get("variant") == NOLABELS:
        return style
    return _variant_copy(style, NOLABELS, _VARIANT_VERSION, strip_labels)


def in_language_style(style: CartoStyle, lang: str) -> CartoStyle:
    """The prepared working copy of ``style`` whose layers read the extract's views in
    language ``lang`` (``maps.languages``: every ``name`` from ``name:<lang>``, falling back
    to ``name``), made now or reused from the cache, in a folder of its own
    (``<base>-lang-de1``, so its tile cache is its own); ``style`` itself when it already
    is that language's copy.  The database's views are made by ``MapEngine.in_language``
    (``maps.languages.ensure_language_views``), which draws with this copy."""
    code = language_code(lang)
    info = variant_info(style)
    if info is not None and info.get("variant") == LANGUAGE:
        if info.get("language") == code:
            return style
        raise CartoqaError(
            f"the style {style.folder.name} already draws names in {info.get('language')!r}: "
            f"make the {code!r} copy from its base style instead"
        )

    def rename(xml: str) -> tuple[str, dict[str, int]]:
        n = tables_read(xml)
        if n == 0:
            raise RenderStackError(
                "the style reads none of the osm2pgsql tables "
                f"({', '.join(TABLES)}): is it openstreetmap-carto 5.7.0's style.xml?"
            )
        return language_sql(xml, code), {"tables_read": n}

    suffix = f"{LANGUAGE}-{code.lower()}"
    return _variant_copy(style, suffix, _LANG_VERSION, rename, {"language": code}, LANGUAGE)


def _variant_copy(
    style: CartoStyle,
    name: str,
    version: int,
    transform: Callable[[str], tuple[str, dict[str, int]]],
    extra: dict | None = None,
    variant: str | None = None,
) -> CartoStyle:
    """The copy of ``style`` named ``<base>-<name><version>`` whose style.xml is
    ``transform(base style.xml)`` (the new XML and counts of what was done), made now (in a
    temporary folder, renamed into place) or reused when whole and made from this base."""
    base_xml = style.xml_path.read_bytes()
    base_sha = hashlib.sha256(base_xml).hexdigest()
    # the version is in the name: the tile cache is keyed by it, and tiles of an older
    # variant must not be taken for this one's
    folder = style.folder.with_name(f"{style.folder.name}-{name}{version}")
    clean_stale_tmp(folder.parent, recursive=False)
    if folder.is_dir() and (why := _why_bad(folder, base_sha, version)) is not None:
        drop_bad_copy(folder, why)
    if not (folder / ".prepared").is_file():
        xml, counts = transform(base_xml.decode("utf-8"))
        info = {"variant": variant or name, "version": version, "base": style.folder.name,
                "counts": counts, **(extra or {})}  # fmt: skip
        _make(style, folder, xml, info, base_sha, version)
    return CartoStyle(folder, style.version, style.placeholders, style.removed_faces)


def _make(
    style: CartoStyle, folder: Path, xml: str, info: dict, base_sha: str, version: int
) -> None:
    """Write the copy in a temporary folder and rename it into place (a copy that another
    process finished first is kept, ours dropped)."""
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        for part in _SHARED:
            src = style.folder / part
            if not src.is_dir():
                raise RenderStackError(
                    f"the style copy {style.folder} has no {part}/ folder: it is not a prepared "
                    "copy (make it with maps.style.prepare_style)"
                )
            shutil.copytree(src, tmp / part, symlinks=True)
        (tmp / "style.xml").write_text(xml, encoding="utf-8")
        (tmp / "variant.json").write_text(json.dumps(info, sort_keys=True), encoding="utf-8")
        digests = {n: hashlib.sha256((tmp / n).read_bytes()).hexdigest() for n in _WRITTEN}
        marker = {"version": version, "base_sha256": base_sha, "sha256": digests}
        (tmp / ".prepared").write_text(json.dumps(marker))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        tmp.rename(folder)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)


def _why_bad(folder: Path, base_sha: str, version: int) -> str | None:
    """Why the variant copy in ``folder`` cannot be used (a file cut short or changed, the
    marker missing, a shared folder gone, made by another version of this code or from
    another base style), or None when it is whole."""
    try:
        marker = json.loads((folder / ".prepared").read_text())
        if marker["version"] != version:
            return f"made by version {marker['version']} of the variant code"
        if marker["base_sha256"] != base_sha:
            return "made from another base style.xml"
        for name in _WRITTEN:
            data = (folder / name).read_bytes()
            if hashlib.sha256(data).hexdigest() != marker["sha256"][name]:
                return f"{name}: {len(data)} bytes whose SHA-256 is not the one recorded"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    for part in _SHARED:
        if not (folder / part).is_dir():
            return f"its {part}/ folder is missing"
    return None
