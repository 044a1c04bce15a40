"""How many glyphs the style's fonts draw for a label: its letters, less the ligatures.

Mapnik shapes text with HarfBuzz, and the fonts openstreetmap-carto writes names in
(Noto Sans regular, italic and bold) join "ff", "fi", "fl", "ffi" and "ffl" into one glyph
each (their GSUB feature ``liga``, on by default).  A label along a line is placed glyph by
glyph, one collision box a glyph, so the check that such a label is drawn whole
(``maps.labels``, ``maps.feature_pixels``) compares its boxes with this count, not with the
name's letters: an outside review found the river "Hoffselva" (italic "ff") read as cut.

The count applies the font's own substitutions that join glyphs (GSUB lookups of type 4
in the features ``ccmp``, ``liga`` and ``rlig``, in lookup order, left to right, the first
listed match at each place, as a shaper does) to the characters the font has.  A
character it lacks is drawn from a fallback font of the fontset: one glyph.  Whitespace
places no box and is not counted.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_FACE", "glyph_count", "text_face"]

log = logging.getLogger(__name__)

#: the face the style writes road names in (its ``fontset-0``'s first font)
DEFAULT_FACE = "Noto Sans Regular"
#: the GSUB features whose ligature lookups a shaper applies by default
_JOINING = ("ccmp", "liga", "rlig")
_lock = threading.Lock()


def text_face(xml: str, layer: str) -> str:
    """The first font face of the fontset (or the face) that ``layer``'s labels use in the
    style ``xml``; ``DEFAULT_FACE`` when the layer names none."""
    start = xml.find(f'name="{layer}" srs=')
    if start < 0:
        return DEFAULT_FACE
    block = xml[start : xml.index("</Layer>", start)]
    for style in re.findall(r"<StyleName><!\[CDATA\[([^\]]+)\]\]></StyleName>", block):
        s = xml.find(f'<Style filter-mode="first" name="{style}"')
        if s < 0:
            continue
        text = xml[s : xml.index("</Style>", s)]
        m = re.search(r'<TextSymbolizer\b[^>]*?\s(fontset-name|face-name)="([^"]+)"', text)
        if m is None:
            continue
        if m.group(1) == "face-name":
            return m.group(2)
        fs = re.search(
            rf'<FontSet name="{re.escape(m.group(2))}">\s*<Font face-name="([^"]+)"', xml
        )
        if fs is not None:
            return fs.group(1)
    return DEFAULT_FACE


def glyph_count(text: str, face: str = DEFAULT_FACE, fonts: Path | None = None) -> int:
    """The glyphs ``face`` draws for ``text``, whitespace left out.  ``fonts``: a folder of
    font files to find the face in (the style's own ``fonts/``; default the system's Noto
    and DejaVu folders).  Without the face's file, one glyph a character (logged once)."""
    shaper = _shaper(face, str(fonts) if fonts is not None else "")
    out = 0
    for word in text.split():
        out += shaper(word) if shaper is not None else len(word)
    return out


def _face_file(face: str, fonts: str) -> Path | None:
    from .style import FONT_DIRS

    folders = [Path(fonts)] if fonts else list(FONT_DIRS)
    family, _, style = face.rpartition(" ")
    guess = f"{family.replace(' ', '')}-{style}"
    for folder in folders:
        for ext in (".ttf", ".otf"):
            p = folder / f"{guess}{ext}"
            if p.is_file() and _names(p) == face:
                return p
    for folder in folders:  # by the names inside the files
        for p in sorted(folder.glob("*.[ot]tf")) if folder.is_dir() else ():
            if _names(p) == face:
                return p
    return None


def _names(path: Path) -> str:
    """A font file's face name as Mapnik gives it: family and style."""
    from fontTools.ttLib import TTFont

    try:
        name = TTFont(str(path), lazy=True, fontNumber=0)["name"]
    except Exception:  # a broken or odd font file is no match
        return ""
    family = name.getDebugName(1) or ""
    style = name.getDebugName(2) or ""
    return f"{family} {style}".strip()


@lru_cache(maxsize=16)
def _shaper(face: str, fonts: str) -> Any:
    """A function word -> glyph count for ``face``, or None when its file is not found."""
    with _lock:
        path = _face_file(face, fonts)
        if path is None:
            log.warning("font face %r not found: a label's glyphs are counted as its letters", face)
            return None
        from fontTools.ttLib import TTFont

        font = TTFont(str(path), lazy=True)
        cmap = font.getBestCmap() or {}
        lookups: list[list[dict[str, list[tuple[str, tuple[str, ...]]]]]] = []
        if "GSUB" in font:
            table = font["GSUB"].table
            wanted: set[int] = set()
            for rec in table.FeatureList.FeatureRecord if table.FeatureList else ():
                if rec.FeatureTag in _JOINING:
                    wanted.update(rec.Feature.LookupListIndex)
            for index in sorted(wanted):
                lookup = table.LookupList.Lookup[index]
                subtables = []
                for st in lookup.SubTable:
                    if lookup.LookupType == 7:
                        st = st.ExtSubTable
                    if getattr(st, "LookupType", lookup.LookupType) != 4:
                        continue
                    subtables.append(
                        {
                            first: [(lig.LigGlyph, tuple(lig.Component)) for lig in ligs]
                            for first, ligs in st.ligatures.items()
                        }
                    )
                if subtables:
                    lookups.append(subtables)

    def count(word: str) -> int:
        glyphs: list[str | None] = [cmap.get(ord(ch)) for ch in word]
        for subtables in lookups:
            out: list[str | None] = []
            i = 0
            while i < len(glyphs):
                g = glyphs[i]
                done = False
                if g is not None:
                    for st in subtables:
                        for lig, rest in st.get(g, ()):
                            if tuple(glyphs[i + 1 : i + 1 + len(rest)]) == rest:
                                out.append(lig)
                                i += 1 + len(rest)
                                done = True
                                break
                        if done:
                            break
                if not done:
                    out.append(g)
                    i += 1
            glyphs = out
        return len(glyphs)

    return count
