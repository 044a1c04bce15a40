"""Which road labels a rendered view actually shows, and which OSM feature each belongs to.

The style drops labels that collide, and the view cuts labels at its edge
and at metatile seams, so "the road is in the view" does not mean "its name
can be read".  And a name printed on the map does not mean the road's name:
a sidewalk, a square or a bus platform with the same name carries its own
label.  The method (``../shared/spec/label-visibility.md``):

1. Render each metatile the view uses twice with a ``LabelCollisionDetector``:
   as the tiles were made, and with a copy of the style in which only the
   road-name text changes colour: each *feature* (the row's ``osm_id``: a way
   of ``planet_osm_line``, a way or, negative, a multipolygon relation of
   ``planet_osm_polygon``) gets a colour from a hash of its id and a salt
   (text and halo, full opacity).  Sizes, fonts, order and placement stay the
   same; the two detectors' glyph boxes must be equal (as sets), and that is
   checked every time (``PLACEMENT_TRIES`` renders, then ``RenderStackError``).
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

import logging
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cartoqa.errors import RenderStackError

from .colour_coded import (
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
)
from .database import query_rows
from .glyphs import glyph_count, text_face
from .projection import TILE_PX, pixel_box
from .roads import normalise_road
from .tiles import sorted_boxes

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
    the feature's osm id; nothing else changes."""
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
    return xml


class RoadLabels(ColourCoded):
    """Road-label visibility for the views of one ``MapEngine`` (metatile results are cached)."""

    what = "road-name labels"
    check = "label"
    placement = "label placement"
    log = log

    def __init__(self, engine: MapEngine) -> None:
        rows = query_rows(
            engine.database.connection,
            _FEATURES_SQL,
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

    def _glyphs(self, z: int, mx: int, my: int) -> list[Glyph]:
        """The road-label glyphs the tiles of this metatile show (centre in its own area)."""
        n = min(self.engine.tiles.metatile, 2**z)
        salt, codes = self._coding(z, mx, my, n)
        # the plain render drawn again before each try: its boxes are the key (sorted: the
        # detector lists the same boxes in a varying order from one render to the next)
        found = self._coded_as_placed(
            salt, z, mx, my, n, lambda: sorted_boxes(self._render("plain", z, mx, my, n)[1])
        )
        if found is None:
            raise RenderStackError(
                f"the colour-coded render placed labels differently in metatile {z}/{mx}/{my} "
                f"{PLACEMENT_TRIES} times; road-name visibility cannot be known exactly there"
            )
        coded_image, key = found
        size = n * TILE_PX
        rgba = np.frombuffer(coded_image.to_string(), dtype=np.uint8).reshape(size, size, 4)
        # each opaque pixel as 0xRRGGBB, then as the index of the feature with that colour
        # (-1 for none): only full-opacity pixels can be code colours
        rgb = rgba[..., :3].astype(np.int32)
        pixel = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
        order = np.array(sorted(codes), dtype=np.int32)
        owners = np.array([codes[c] for c in order], dtype=np.int64)
        at = np.clip(np.searchsorted(order, pixel), 0, max(0, len(order) - 1))
        hit = (order[at] == pixel) & (rgba[..., 3] == 255) if len(order) else None
        glyphs: list[Glyph] = []
        if hit is None:
            return glyphs
        index = np.where(hit, at, -1)
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
                    self._cache[key] = self._glyphs(*key)
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
