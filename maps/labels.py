"""Which road labels a rendered view actually shows, and which OSM feature each belongs to.

The style drops labels that collide, and the view cuts labels at its edge
and at metatile seams, so "the road is in the view" does not mean "its name
can be read".  And a name printed on the map does not mean the road's name:
a sidewalk, a square or a bus platform with the same name carries its own
label.  The method (``../shared/spec/label-visibility.md``):

1. Each metatile the view uses is drawn for its tiles with a
   ``LabelCollisionDetector`` (``TileRenderer.placements``: one render serves
   the tiles, the boxes kept beside them and this check), and again with a
   copy of the style in which the road-name text changes colour: each
   *feature* (the row's ``osm_id``: a way of ``planet_osm_line``, a way or,
   negative, a multipolygon relation of ``planet_osm_polygon``) gets a colour
   from a hash of its id and a salt (text and halo, full opacity).  Sizes,
   fonts, order and placement stay the same; the two detectors' glyph boxes
   must be equal (as sets), and that is checked every time (``PLACEMENT_TRIES``
   coded renders, then ``RenderStackError``).  The coded style leaves out what
   only paints under the names (``maps.colour_coded.without_background``); the
   tiles' render and the coded one run one after the other.  A metatile's
   result (its attributed glyphs) is kept beside its tiles, a checked cache
   file keyed by the style, the salts and ``GLYPHS_VERSION``
   (``RoadLabels.glyphs_path``): every later build and worker on that cache
   reads it instead of rendering.
2. The features whose labels the metatile can hold (their bounding box meets
   the metatile and its buffer) must have distinct colours under the salt;
   when two share one, the metatile is coded again under the next salt.
3. Give each glyph box the feature whose colour has the most exactly matching
   pixels inside it, and join the glyphs of a feature that lie next to each
   other into label instances.
4. A feature's label is *whole* when it has at least as many glyphs as the
   style's font draws for its name (letters less ligatures: "ff", "fi", "fl"
   are one glyph each, ``maps.glyphs``), all inside the metatile's own area
   (the part the tiles show); it counts for a view when it is also wholly inside the view and
   clear of the markers drawn on top (``RoadLabels.ways``).  A feature with
   glyphs in the view but no such label is *partial*.

``RoadLabels.names`` gives the same per name, and is the weaker, older rule:
a name counts as drawn when *any* feature carrying it has a whole, clear
label in the view, whichever way, sidewalk or area that is.  Checks of a
road's name must use ``ways`` and the road's own way ids.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cartoqa.errors import RenderStackError
from cartoqa.stores.cache_files import BadCacheEntry, read_cache_file

from .colour_coded import (
    BACKGROUND_RGB,
    BACKGROUND_WORD,
    PLACEMENT_TRIES,
    Box,
    ColourCoded,
    Glyph,
    box_votes,
    code_colour,
    near_metatile,
    neighbours,
    overlap,
    salts,
    sql_code,
    text_key,
    without_background,
)
from .database import query_rows
from .glyphs import glyph_count, text_face
from .languages import language_sql
from .projection import TILE_PX, pixel_box
from .roads import normalise_road

if TYPE_CHECKING:
    from .page import View
    from .render import MapEngine

__all__ = ["Box", "RoadLabels", "VisibleNames", "VisibleWays", "way_ids"]

log = logging.getLogger(__name__)

#: the layers that write road names (streets, paths, pedestrian areas): (layer, SQL line after
#: which the colour column goes, the text that follows it)
_NAME_LAYERS = (
    ("roads-text-name", "    name,\n", "    CASE\n      WHEN oneway"),
    ("paths-text-name", "    name,\n", "    CASE\n      WHEN oneway"),
    ("roads-area-text-name", "    name", "\n  FROM planet_osm_polygon"),
)
#: every row those layers can draw, and more (a superset is safe: it only makes a shared colour,
#: and so a re-salt, a little likelier)
_FEATURES_SQL = """
SELECT osm_id, name, false, ST_XMin(way), ST_YMin(way), ST_XMax(way), ST_YMax(way)
  FROM planet_osm_line WHERE name IS NOT NULL AND highway IS NOT NULL
UNION ALL
SELECT osm_id, name, true, ST_XMin(way), ST_YMin(way), ST_XMax(way), ST_YMax(way)
  FROM planet_osm_polygon
  WHERE name IS NOT NULL AND (highway IS NOT NULL OR railway = 'platform')
"""
#: salts tried in turn for a metatile whose features share a colour under the first ones
SALTS = salts("cq")
#: a marker icon drawn by folium, relative to its anchor: (left, top, right, bottom) in px
MARKER_BOX = (-17, -42, 17, 2)
#: how a metatile's glyphs are coded and read: part of the key of the files they are kept in
#: beside the tiles (with the style's text, the salts and the coded layers): change it when
#: ``_coded_xml``, ``without_background`` or ``RoadLabels._glyphs`` change what they make
GLYPHS_VERSION = "road-label glyphs 1: stripped coded style, exact code pixels, box votes"


@dataclass(frozen=True)
class VisibleNames:
    """Road names as one view shows them (the per-name rule: see ``RoadLabels.names``)."""

    visible: frozenset[str]
    """Names with a whole label in the view, not under a marker (normalised)."""
    partial: frozenset[str]
    """Names with some glyphs in the view but no whole label: neither required nor wrong."""


@dataclass(frozen=True)
class VisibleWays:
    """The labelled features one view shows, by OSM id (see ``RoadLabels.ways``).

    Ids are osm2pgsql's ``osm_id``: the way id for streets, paths and closed ways (the same ids
    as osmnx's edge ``osmid`` in the road graph of the same extract), and the negated relation
    id for multipolygon areas."""

    visible: dict[int, list[Box]] = field(default_factory=dict)
    """osm id -> its labels that are whole, wholly inside the view and clear of the markers:
    each the union of the label's glyph boxes, in image pixels (x0, y0, x1, y1), left to
    right, then top to bottom."""
    partial: frozenset[int] = frozenset()
    """Ids with glyphs in the view but no label in ``visible`` (cut by the view's edge or a
    metatile seam, or under a marker): neither required nor wrong."""
    name_of: dict[int, str] = field(default_factory=dict)
    """The label text (normalised as road names are) of every id in ``visible`` or
    ``partial``."""

    def label_of(self, ids: Iterable[int]) -> tuple[int, Box] | None:
        """The first of ``ids`` (in their order) with a visible label, and that label's box
        (the first in ``visible``'s order); None when none of them has one."""
        for i in ids:
            boxes = self.visible.get(i)
            if boxes:
                return i, boxes[0]
        return None


def way_ids(osmid: Any) -> list[int]:
    """The OSM way ids of an osmnx edge's ``osmid`` attribute (an int, or a list of ints after
    simplification merged ways), as ``VisibleWays`` keys them."""
    if isinstance(osmid, (list, tuple, set, frozenset)):
        return [int(i) for i in osmid]
    return [int(osmid)]


def _code(osm_id: int, salt: str) -> int:
    """The colour (0xRRGGBB) of a feature under ``salt``, as the coded style's SQL makes it."""
    return code_colour(f"{salt}{osm_id}")


def _coded_xml(xml: str, salt: str) -> str:
    """The style with road-name text (streets, paths, pedestrian areas) coloured by a hash of
    the feature's osm id, and the layers under them less what only paints
    (``without_background``); nothing that places changes."""
    colour = f"{sql_code(salt)} AS cq_colour"
    for layer, anchor, follows in _NAME_LAYERS:
        start = xml.find(f'<Style filter-mode="first" name="{layer}">')
        if start < 0:
            raise RenderStackError(
                f"the style has no {layer!r} style: is it openstreetmap-carto 5.x?"
            )
        end = xml.index("</Style>", start)
        block = re.sub(r'\s(?:halo-fill|fill|halo-radius)="[^"]*"', "", xml[start:end])
        # text and a halo in the code colour: thin antialiased glyphs alone leave too few exact
        # pixels to vote; a halo does not move labels (the box check below proves it each time)
        block = block.replace(
            "<TextSymbolizer ",
            '<TextSymbolizer fill="[cq_colour]" halo-fill="[cq_colour]" halo-radius="1.5" ',
        )
        xml = xml[:start] + block + xml[end:]
        at = xml.find(anchor + follows, xml.find(f'name="{layer}" srs='))
        if at < 0:
            raise RenderStackError(f"the {layer!r} layer's SQL is not the one this code knows")
        cut = at + len(anchor)
        sep = "" if anchor.endswith("\n") else ",\n"
        tail = ",\n" if anchor.endswith("\n") else ""
        xml = xml[:cut] + sep + "    " + colour + tail + xml[cut:]
    # what lies under the name layers only paints (fills, casings, roads): left out, as the
    # feature reader does; placement stays the tiles' (the box check proves it every time)
    return without_background(xml, [layer for layer, _, _ in _NAME_LAYERS])


def _check_glyphs(data: bytes) -> None:
    rows = json.loads(data)
    if not isinstance(rows, list) or not all(
        isinstance(r, list)
        and len(r) == 6
        and isinstance(r[0], int)
        and all(isinstance(v, int | float) for v in r[1:5])
        and isinstance(r[5], bool)
        for r in rows
    ):
        raise BadCacheEntry("not a list of (osm id, x0, y0, x1, y1, inside) glyphs")


class RoadLabels(ColourCoded):
    """Road-label visibility for the views of one ``MapEngine`` (metatile results are cached)."""

    what = "road-name labels"
    check = "label"
    placement = "label placement"
    log = log

    def __init__(self, engine: MapEngine) -> None:
        #: the features' SQL; on a language engine (``MapEngine.in_language``) it reads the
        #: names that engine draws
        self._features_sql = language_sql(_FEATURES_SQL, getattr(engine, "language", None))
        rows = query_rows(
            engine.database.connection,
            self._features_sql,
            during="the road names were read for the label check",
            what="reading road names",
        )
        self._ids = np.array([r[0] for r in rows], dtype=np.int64)
        self._bbox = np.array([r[3:7] for r in rows], dtype=np.float64).reshape(-1, 4)
        self._name: dict[int, str] = {}
        for r in rows:
            self._name.setdefault(int(r[0]), normalise_road(r[1]) or r[1])
        #: features labelled at a point (areas): one detector box per label, not per glyph
        self._areas = frozenset(int(r[0]) for r in rows if r[2])
        super().__init__(engine)
        #: the face road names are written in, and where its file is
        self._face = text_face(self._xml_plain, "roads-text-name")
        self._cache: dict[tuple[int, int, int], list[Glyph]] = {}
        self._stored_key: str | None = None  # of the glyph files beside the tiles (``_stored``)

    def coded_xml(self, salt: str) -> str:
        return _coded_xml(self._xml_plain, salt)

    def _coding(self, z: int, mx: int, my: int, n: int) -> tuple[str, dict[int, int]]:
        """A salt under which the features this metatile can draw have distinct colours, and
        their colours (code -> osm id)."""
        near = near_metatile(self._bbox, z, mx, my, n)
        ids = sorted({int(i) for i in self._ids[near]})
        for salt in SALTS:
            codes = {_code(i, salt): i for i in ids}
            if len(codes) == len(ids):
                return salt, codes
            self.resalted += 1
            log.info("metatile %s/%s/%s: two features share a colour under %r", z, mx, my, salt)
        raise RenderStackError(  # pragma: no cover - needs ~4000 features in one metatile
            f"metatile {z}/{mx}/{my}: {len(ids)} labelled features, and under each of "
            f"{len(SALTS)} salts two share a colour; its labels cannot be told apart"
        )

    def glyphs_path(self, z: int, mx: int, my: int) -> Path:
        """Where the glyphs of metatile (z, mx, my) are kept beside its tiles (the tile folder
        is the style's and the extract's; the name holds a key of the coded style, its salts
        and ``GLYPHS_VERSION``), shared by every build and process on that cache."""
        if self._stored_key is None:
            raw = self.engine.style.xml_path.read_text(encoding="utf-8")  # no database in it
            coding = repr((GLYPHS_VERSION, SALTS, _NAME_LAYERS, self._features_sql))
            self._stored_key = text_key(coding + raw)
        return self.engine.tiles.folder / str(z) / f"meta-{mx}-{my}.roads-{self._stored_key}.json"

    def _stored(self, z: int, mx: int, my: int) -> list[Glyph]:
        """The glyphs of a metatile from beside its tiles (a checked cache file: one that is
        bad is dropped with a warning), else read from its coded render and stored there."""
        tiles = self.engine.tiles
        if not tiles.use_cache:
            return self._glyphs(z, mx, my)
        p = self.glyphs_path(z, mx, my)
        data = read_cache_file(p, what="road-label glyphs", check=_check_glyphs)
        if data is not None:
            return [Glyph(int(g[0]), tuple(g[1:5]), bool(g[5])) for g in json.loads(data)]
        glyphs = self._glyphs(z, mx, my)
        rows = [[g.osm_id, *g.box, g.inside] for g in glyphs]
        tiles._store(p, json.dumps(rows).encode())
        return glyphs

    def _glyphs(self, z: int, mx: int, my: int) -> list[Glyph]:
        """The road-label glyphs the tiles of this metatile show (centre in its own area)."""
        n = min(self.engine.tiles.metatile, 2**z)
        salt, codes = self._coding(z, mx, my, n)
        # the boxes the tiles' own render placed are the key (one Mapnik render serves the
        # tiles, their boxes and this check; the image stays in the tiles' memory so that the
        # view's tiles need no second render when it is accepted: ``keep_tiles``); the coded
        # render is drawn again, up to ``PLACEMENT_TRIES`` times, until it places them alike
        # one after the other, never two Mapnik renders at once in one process (the safer
        # rule for bytes that must not vary)
        found = self._coded_as_placed(
            salt, z, mx, my, n, lambda: self.engine.tiles.placements(z, mx, my)
        )
        if found is None:
            raise RenderStackError(
                f"the colour-coded render placed labels differently from the tiles in metatile "
                f"{z}/{mx}/{my} {PLACEMENT_TRIES} times; road-name visibility cannot be known "
                "exactly there"
            )
        coded_image, key = found
        size = n * TILE_PX
        order = np.array(sorted(codes), dtype=np.int64)
        owners = np.array([codes[c] for c in order], dtype=np.int64)
        glyphs: list[Glyph] = []
        if not len(order):
            return glyphs
        # each pixel as one little-endian word (R | G << 8 | B << 16 | A << 24); only opaque
        # ones can be code colours, and of those the background's (most of the coded image:
        # it paints no fills, no roads) is skipped unless a feature here has it as its code;
        # each pixel left, as 0xRRGGBB, becomes the index of the feature with that colour
        # (-1 for none)
        words = np.frombuffer(coded_image.to_string(), dtype="<u4")
        opaque = (words >> 24) == 255
        if BACKGROUND_RGB not in codes:
            opaque &= words != BACKGROUND_WORD
        where = np.flatnonzero(opaque)
        w = words[where].astype(np.int64)
        pixel = ((w & 0xFF) << 16) | (w & 0xFF00) | ((w >> 16) & 0xFF)
        at = np.clip(np.searchsorted(order, pixel), 0, len(order) - 1)
        hit = order[at] == pixel
        index = np.full(size * size, -1, dtype=np.int64)
        index[where[hit]] = at[hit]
        index = index.reshape(size, size)
        ox, oy = mx * TILE_PX, my * TILE_PX
        for x0, y0, x1, y1 in key:
            # a label across a seam is drawn by both metatiles (the buffer makes them place it
            # alike); the tiles show each glyph from the metatile its centre falls in
            if not (0 <= (x0 + x1) / 2 < size and 0 <= (y0 + y1) / 2 < size):
                continue
            voted = box_votes(index, (x0, y0, x1, y1), size)
            if voted is None:
                continue
            votes, _ = voted
            if votes.size:  # antialiased glyphs keep only a few exact pixels: one is enough
                owner = int(owners[int(np.bincount(votes).argmax())])
                inside = x0 >= 0 and y0 >= 0 and x1 <= size and y1 <= size
                glyphs.append(Glyph(owner, (x0 + ox, y0 + oy, x1 + ox, y1 + oy), inside))
        return glyphs

    def keep_tiles(self, view: View) -> int:
        """Store the tiles of ``view`` (a candidate accepted after its label check) from the
        metatiles its check drew and the tiles' memory still holds, so that rendering the
        view draws none of them again (``TileRenderer.keep_tiles``).  Call it only once the
        candidate can no longer be rejected: a rejected candidate's tiles are never encoded."""
        tiles = self.engine.tiles
        box = pixel_box(view.center, view.zoom, view.width, view.height)
        return tiles.keep_tiles(view.zoom, [(x, y) for _, x, y in tiles.tiles_for(view.zoom, *box)])

    def ways(self, view: View, markers_px: list[tuple[float, float]] | None = None) -> VisibleWays:
        """The labelled features (by OSM id) that ``view`` shows whole, and those it shows
        only in part.  ``markers_px``: the anchors, in image pixels, of the markers drawn on
        top (each hides ``MARKER_BOX`` around its anchor)."""
        tiles = self.engine.tiles
        x0, y0, x1, y1 = pixel_box(view.center, view.zoom, view.width, view.height)
        x0, y0 = round(x0), round(y0)  # Leaflet rounds the map's pixel origin
        x1, y1 = x0 + view.width, y0 + view.height
        metatiles = {
            tiles.metatile_of(view.zoom, tx, ty)
            for tx in range(int(x0 // TILE_PX), int((x1 - 1) // TILE_PX) + 1)
            for ty in range(int(y0 // TILE_PX), int((y1 - 1) // TILE_PX) + 1)
        }
        covers = [
            (
                x0 + mx + MARKER_BOX[0],
                y0 + my + MARKER_BOX[1],
                x0 + mx + MARKER_BOX[2],
                y0 + my + MARKER_BOX[3],
            )
            for mx, my in (markers_px or [])
        ]
        shown: dict[int, list[Glyph]] = defaultdict(list)
        for key in sorted(metatiles):
            with self._lock:
                if key not in self._cache:
                    t0 = time.perf_counter()
                    self._cache[key] = self._stored(*key)
                    self.seconds += time.perf_counter() - t0
                glyphs = self._cache[key]
            for g in glyphs:
                shown[g.osm_id].append(g)
        visible: dict[int, list[Box]] = {}
        seen: set[int] = set()
        for osm_id, glyphs in shown.items():
            letters = glyph_count(self._name[osm_id], self._face, self._fonts)
            for group in neighbours(glyphs):
                label = [g.box for g in group]
                if osm_id in self._areas:
                    # a point label is one box: whole when no metatile seam cuts it (whether
                    # the next metatile draws the rest cannot be counted as glyphs can)
                    whole = all(g.inside for g in group)
                else:
                    whole = len(label) >= letters
                in_view = [
                    b for b in label if b[0] >= x0 and b[1] >= y0 and b[2] <= x1 and b[3] <= y1
                ]
                if not in_view:
                    continue
                seen.add(osm_id)
                clear = not any(overlap(b, c) for b in label for c in covers)
                if whole and len(in_view) == len(label) and clear:
                    box = (
                        min(b[0] for b in label) - x0,
                        min(b[1] for b in label) - y0,
                        max(b[2] for b in label) - x0,
                        max(b[3] for b in label) - y0,
                    )
                    visible.setdefault(osm_id, []).append(box)
        for found in visible.values():
            found.sort(key=lambda b: (b[0], b[1]))
        return VisibleWays(
            visible=visible,
            partial=frozenset(seen - set(visible)),
            name_of={i: self._name[i] for i in sorted(seen)},
        )

    def names(
        self, view: View, markers_px: list[tuple[float, float]] | None = None
    ) -> VisibleNames:
        """The road names ``view`` shows whole, and those it shows only in part.

        The older, weaker rule: a name is visible when *any* line feature that carries it (the
        road, or a sidewalk or path of the same name) has a label in
        ``ways(view, markers_px).visible``.  Labels of areas (squares, platforms) count as
        partial here, as they always did (their one box was never enough glyphs).  To know
        that a road's own name is drawn, look its way ids up in ``ways`` instead."""
        found = self.ways(view, markers_px)
        visible = {found.name_of[i] for i in found.visible if i not in self._areas}
        partial = {found.name_of[i] for i in set(found.partial) | set(found.visible)} - visible
        return VisibleNames(frozenset(visible), frozenset(partial))
