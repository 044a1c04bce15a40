"""Which map features (icons, areas, lines) and which of their names a rendered view shows.

The map-feature tasks (STMF, MTMF) ask what a zoom-19 map shows, and the
standard style drops icons and labels that collide, cuts them at the view's
edge, and writes some names without their icon.  Ground truth is taken from
the image's own tiles, by the method of ``../shared/spec/label-visibility.md``:

1. The metatiles a view uses are drawn for its tiles with a
   ``LabelCollisionDetector``, and the boxes of what Mapnik placed are kept
   beside the tiles (``TileRenderer.placements``).
2. Each of them is drawn again with a copy of the style in which only colours
   change: every row of the POI icon layer (``amenity-points``), the point
   label layer (``text-point``), the road-name layer (``roads-text-name``) and
   the water-name layer (``water-lines-text``) gets a colour from a hash of its
   OSM object (node, way or relation) and a salt, for its icon, its label text
   and halo, at full opacity.  Layers that place nothing and lie under every
   coded layer (fills, casings, buildings) are left out of the coded render:
   they only paint the background.  The coded render's boxes must equal the
   tiles' boxes (as sets), every metatile, every time (else ``RenderStackError``).
3. Each box goes to the object whose code colour has the most exactly
   matching pixels inside it; objects near the metatile must have distinct
   colours under the salt (else the next salt).
4. Per view: an icon *shows* when its box is attributed and at least
   ``MIN_ICON_SHARE`` of it lies inside the view; less is *cut* (optional).
   A point label shows when its box is wholly inside the view and every
   metatile its box spans placed it alike (a seam never halves it unseen);
   a line label (glyph by glyph) when as many glyphs as the style's font draws
   for its name are inside (letters less ligatures: the italic "ff" of a river
   is one glyph, ``maps.glyphs``).  Areas without an icon (parks) and lines
   (streams, rivers, primary roads) show by their geometry in the view
   (``area_share``, ``line_px``); an area drawn by a fill of its own (a park's green) shows that
   fill only where no later layer paints over it (a park that is also a
   pedestrian area is drawn grey): ``fill_share`` is read from the view's own
   tiles, the pixels of the area that have its fill's colour.

``FeatureLabels.view(view)`` gives one ``DrawnObject`` per OSM object of the
22 types (and their look-alikes) that the view meets, with what of it shows.
How those make counts and name lists is ``cartoqa.tasks.poi``'s business.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cartoqa.errors import RenderStackError

from .colour_coded import (
    BACKGROUND_WORD,
    PLACEMENT_TRIES,
    Box,
    ColourCoded,
    Glyph,
    box_votes,
    code_colour,
    layer_block,
    near_metatile,
    neighbours,
    overlap,
    salts,
    sql_code,
    without_background,
)
from .database import query_rows
from .glyphs import glyph_count, text_face
from .languages import language_sql
from .projection import HALF_WORLD_M, TILE_PX, metres_per_pixel, pixel_box, pixel_to_m

if TYPE_CHECKING:
    from .page import View
    from .render import MapEngine

__all__ = ["MIN_ICON_SHARE", "DrawnObject", "FeatureLabels", "ObjectRow"]

log = logging.getLogger(__name__)

#: the least share of an icon's box inside the view for the icon to count as shown
MIN_ICON_SHARE = 0.9
#: a glyph's box along a line runs this far past its ink (the letter's advance and the
#: halo): the box less this on each side must be in the view and clear of the controls
#: (an outside review found whole road names read as cut at the edge or under the
#: attribution); a point label's box is its text's and is taken as it is
GLYPH_SLACK_PX = 2.0
SALTS = salts("cf")
#: an icon needs this many exact pixels of its code colour in its box to be attributed
#: (an icon has hundreds; a stray antialiased pixel of another layer has one)
MIN_ICON_PIXELS = 4
#: a label or glyph needs this many pixels of its code colour in its box
MIN_TEXT_PIXELS = 2
#: and a point label at least this share of its box's drawn (opaque, not background)
#: pixels; a true one holds 30-60 % (the rest blends with the background), a stray match
#: (a road's glyph a unit off a point label's colour) a few %
MIN_VOTE_SHARE = 0.15
#: how far (px) from its object's bounding box a label can lie (a point label stands under
#: its icon, some 10-20 px below the point; a wide one spreads about as far as it is long)
LABEL_REACH_PX = 200.0
#: how far (px) from its object's point an icon's pixels can lie (icons are 14 px; an
#: area's icon stands at a point on its surface, within its bounding box)
ICON_REACH_PX = 24.0

#: coded layers: layer -> (code letter, the insertions into its SQL: (anchor, text after it))
#: ``{c}`` in a text stands for the colour expression of that SQL's rows
_POINT_SQL = (
    ("(SELECT -- This subselect allows filtering on the feature column\n      way,\n",
     "      cq_colour,\n"),
    ("          ST_PointOnSurface(way) AS way,\n", "          {a} AS cq_colour,\n"),
    ("      UNION ALL\n      SELECT\n          way,\n", "          {n} AS cq_colour,\n"),
)  # fmt: skip
_LAYERS = {
    "amenity-points": ("i", _POINT_SQL),
    "text-point": ("t", _POINT_SQL),
    "roads-text-name": ("g", (("    name,\n    CASE\n      WHEN oneway", "{l} AS cq_colour,\n"),)),
    "water-lines-text": ("g", (('    name,\n    "natural",\n', "    {l} AS cq_colour,\n"),)),
}
#: the part of an insertion's anchor the text goes after, where it is not the whole anchor
_CUT_AFTER = {"    name,\n    CASE\n      WHEN oneway": "    name,\n"}

#: the objects the coded layers can draw, and more (a superset only makes a re-salt likelier)
_OBJECTS_SQL = """
SELECT 'n', osm_id, name, amenity, shop, leisure, highway, waterway, tags->'operator', building,
       ST_X(way), ST_Y(way), ST_X(way), ST_Y(way)
  FROM planet_osm_point
UNION ALL
SELECT 'a', osm_id, name, amenity, shop, leisure, highway, waterway, tags->'operator', building,
       ST_XMin(way), ST_YMin(way), ST_XMax(way), ST_YMax(way)
  FROM planet_osm_polygon
UNION ALL
SELECT 'l', osm_id, name, amenity, shop, leisure, highway, waterway, tags->'operator', building,
       ST_XMin(way), ST_YMin(way), ST_XMax(way), ST_YMax(way)
  FROM planet_osm_line
  WHERE (name IS NOT NULL AND (highway IS NOT NULL OR waterway IS NOT NULL))
     OR waterway IN ('stream', 'river') OR highway IN ('primary', 'primary_link')
"""
_TAG_KEYS = ("amenity", "shop", "leisure", "highway", "waterway", "operator", "building")


@dataclass(frozen=True)
class ObjectRow:
    """An OSM object as the database holds it."""

    table: str
    """"n" (planet_osm_point), "a" (planet_osm_polygon) or "l" (planet_osm_line)."""
    osm_id: int
    name: str
    tags: dict[str, str]
    x: float = 0.0
    """EPSG:3857 x of its bounding box's centre."""
    y: float = 0.0
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """Its EPSG:3857 bounding box (minx, miny, maxx, maxy)."""

    @property
    def ref(self) -> str:
        """ "node/1", "way/2" or "relation/3" (osm2pgsql negates relation ids)."""
        if self.table == "n":
            return f"node/{self.osm_id}"
        return f"relation/{-self.osm_id}" if self.osm_id < 0 else f"way/{self.osm_id}"


@dataclass
class DrawnObject:
    """One OSM object of interest that a view meets, and what of it the image shows."""

    row: ObjectRow
    icon: Box | None = None
    """Its icon's box in image pixels, when the map drew its icon in or near the view."""
    icon_share: float = 0.0
    """The share of the icon's box inside the view."""
    icon_pixels_only: bool = False
    """Pixels of its icon show in the view but no placed box is its (drawn, then covered)."""
    label: Box | None = None
    """Its name's label box in image pixels, when one shows whole in the view."""
    label_text: str = ""
    """The label as the style writes it (stripped; a wrapped name's lines joined by a space)."""
    label_partial: bool = False
    """Some of a label of it shows, but none whole."""
    area_share: float = 0.0
    """Areas: the share of its area inside the view."""
    view_share: float = 0.0
    """Areas: the share of the view it covers."""
    fill_share: float | None = None
    """Areas with a fill of their own (``FeatureLabels``' ``fill``): the share of its pixels
    in the view that show that fill's colour in the tiles (0 where another layer paints
    over all of it); None when not measured."""
    fill_px: int = 0
    """Areas with a fill of their own: how many of its pixels in the view show the fill."""
    line_px: float = 0.0
    """Lines: its drawn length inside the view, in pixels."""
    total_px: float = 0.0
    """Lines: its whole length, in pixels."""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Placement:
    key: tuple[str, int]  # (table, osm id)
    kind: str  # "i" icon, "t" point label, "g" line-label glyph
    box: Box  # world pixels
    metatile: tuple[int, int, int]


#: how far (per channel) a pixel may be from a code colour and still be of it: text drawn
#: with a halo of its own colour composes to an opaque pixel a unit off in a channel or two
#: (seen: a small label with not one exact pixel among 153 opaque ones)
COLOUR_TOLERANCE = 1
_OFFSETS = np.array(
    [
        (dr, dg, db)
        for dr in range(-COLOUR_TOLERANCE, COLOUR_TOLERANCE + 1)
        for dg in range(-COLOUR_TOLERANCE, COLOUR_TOLERANCE + 1)
        for db in range(-COLOUR_TOLERANCE, COLOUR_TOLERANCE + 1)
    ],
    dtype=np.int64,
)


def _near_colours(codes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel word (24 bits) within ``COLOUR_TOLERANCE`` of one of ``codes`` (pixel
    words, ``_le``), sorted, and the index of its code: -1 where two codes' neighbourhoods
    meet, unless it is exactly one of them (an exact match wins)."""
    if not codes:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    c = np.asarray(codes, dtype=np.int64)
    ch = np.stack([c & 0xFF, (c >> 8) & 0xFF, c >> 16], axis=1)  # (n, 3)
    near = ch[:, None, :] + _OFFSETS[None, :, :]  # (n, k, 3)
    ok = ((near >= 0) & (near <= 255)).all(axis=2)
    vals = near[..., 0] | (near[..., 1] << 8) | (near[..., 2] << 16)
    idx = np.broadcast_to(np.arange(len(c))[:, None], vals.shape)
    exact = np.broadcast_to((_OFFSETS == 0).all(axis=1)[None, :], vals.shape)
    vals, idx, exact = vals[ok], idx[ok], exact[ok]
    order = np.lexsort((~exact, vals))  # by value, an exact entry first
    vals, idx, exact = vals[order], idx[order], exact[order]
    first = np.ones(len(vals), dtype=bool)
    first[1:] = vals[1:] != vals[:-1]
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(vals)))
    out_vals, out_idx = vals[starts], idx[starts].copy()
    # a value two codes reach is ambiguous unless its first entry is exact and the only one
    second_exact = np.zeros(len(starts), dtype=bool)
    many = counts > 1
    second_exact[many] = exact[starts[many] + 1]
    out_idx[many & (~exact[starts] | second_exact)] = -1
    return out_vals, out_idx


def _le(code: int) -> int:
    """A colour 0xRRGGBB as the pixel word's low 24 bits hold it (0xBBGGRR)."""
    return ((code & 0xFF) << 16) | (code & 0xFF00) | (code >> 16)


def _colour(salt: str, kind: str, table: str, osm_id: int) -> int:
    """The code colour (0xRRGGBB) of an object's icon, label or glyphs, as the SQL makes it."""
    return code_colour(f"{salt}{kind}{table}{osm_id}")


def _sql_colour(salt: str, kind: str, table: str) -> str:
    return sql_code(f"{salt}{kind}{table}")


def coded_xml(xml: str, salt: str) -> str:
    """The style with the coded layers' icons and text coloured by their objects' hashes, and
    the layers that place nothing and lie under all of them left out."""
    for layer, (kind, inserts) in _LAYERS.items():
        # the styles the layer draws with: code colours, full opacity
        start, end = layer_block(xml, layer)
        styles = re.findall(r"<StyleName><!\[CDATA\[([^\]]+)\]\]></StyleName>", xml[start:end])
        for style in styles:
            s = xml.find(f'<Style filter-mode="first" name="{style}"')
            e = xml.index("</Style>", s)
            block = re.sub(
                r'\s(?:halo-fill|fill|stroke|opacity|fill-opacity|stroke-opacity)="[^"]*"',
                "",
                xml[s:e],
            )
            block = re.sub(r'(<Style filter-mode="first" name="[^"]+")[^>]*>', r"\1>", block)
            text = 'fill="[cq_colour]" halo-fill="[cq_colour]"'
            if kind == "g":
                # glyphs along a line are voted one by one: thin antialiased letters alone
                # leave some with no exact pixel; a halo of 1.5 px gives each enough, and
                # moves no label (the box check below proves it every time)
                block = re.sub(r'\shalo-radius="[^"]*"', "", block)
                text += ' halo-radius="1.5"'
            block = block.replace(
                "<MarkersSymbolizer ", '<MarkersSymbolizer fill="[cq_colour]" '
            ).replace("<TextSymbolizer ", f"<TextSymbolizer {text} ")
            xml = xml[:s] + block + xml[e:]
        start, end = layer_block(xml, layer)
        sql = xml[start:end]
        for anchor, text in inserts:
            if sql.count(anchor) != 1:
                raise RenderStackError(f"the {layer!r} layer's SQL is not the one this code knows")
            at = sql.index(anchor) + len(_CUT_AFTER.get(anchor, anchor))
            text = text.format(
                a=_sql_colour(salt, kind, "a"),
                n=_sql_colour(salt, kind, "n"),
                l=_sql_colour(salt, kind, "l"),
            )
            if anchor in _CUT_AFTER:
                text = "    " + text
            sql = sql[:at] + text + sql[at:]
        xml = xml[:start] + sql + xml[end:]
    return without_background(xml, _LAYERS)


class FeatureLabels(ColourCoded):
    """Map-feature visibility for the views of one ``MapEngine`` (metatile results cached)."""

    what = "map features"
    check = "feature"
    placement = "coded placement"
    log = log

    def __init__(self, engine: MapEngine, wanted: Any, fill: Any = None) -> None:
        """``wanted(tags) -> bool``: the objects whose visibility is asked for (the 22 types
        and their look-alikes); every object counts for the colour coding.  ``fill(tags) ->
        str | None``: the colour ("#rrggbb") of the fill an area of interest is drawn with,
        whose pixels the views measure (``DrawnObject.fill_share``); None for none."""
        self._fill = fill or (lambda tags: None)
        rows = query_rows(
            engine.database.connection,
            # on a language engine (``MapEngine.in_language``) the names it draws
            language_sql(_OBJECTS_SQL, getattr(engine, "language", None)),
            during="the map features were read for the label check",
            what="reading map features",
        )
        self._table = np.array([r[0] for r in rows])
        self._ids = np.array([r[1] for r in rows], dtype=np.int64)
        self._bbox = np.array([r[10:14] for r in rows], dtype=np.float64).reshape(-1, 4)
        self.objects: dict[tuple[str, int], ObjectRow] = {}
        for r in rows:
            tags = {k: v for k, v in zip(_TAG_KEYS, r[3:10], strict=True) if v is not None}
            if wanted(tags):
                key = (r[0], int(r[1]))
                self.objects[key] = ObjectRow(
                    r[0],
                    int(r[1]),
                    (r[2] or "").strip(),
                    tags,
                    (float(r[10]) + float(r[12])) / 2,
                    (float(r[11]) + float(r[13])) / 2,
                    (float(r[10]), float(r[11]), float(r[12]), float(r[13])),
                )
        self._box_of = {
            (str(r[0]), int(r[1])): (float(r[10]), float(r[11]), float(r[12]), float(r[13]))
            for r in rows
        }
        super().__init__(engine)
        #: the faces line labels are written in (water names in italic), and the fonts
        self._faces = {
            "water": text_face(self._xml_plain, "water-lines-text"),
            "road": text_face(self._xml_plain, "roads-text-name"),
        }
        self._cache: dict[tuple[int, int, int], list[_Placement]] = {}
        self._pixels: dict[tuple[int, int, int], dict[tuple[str, int], np.ndarray]] = {}
        #: every box each metatile placed (world px), attributed or not: a label across a
        #: seam leaves the next metatile too few pixels of it to vote, but its box is there
        self._boxes: dict[tuple[int, int, int], list[Box]] = {}

    # ------------------------------------------------------------ metatiles

    def coded_xml(self, salt: str) -> str:
        return coded_xml(self._xml_plain, salt)

    def _coding(
        self, z: int, mx: int, my: int, n: int, salt: str
    ) -> tuple[dict[int, tuple], set[int]]:
        """The code colours under ``salt`` of the objects this metatile can draw (colour ->
        (kind, table, osm id)), and the colours two of them share (left out: a metatile
        that paints one of those is coded again under the next salt)."""
        near = near_metatile(self._bbox, z, mx, my, n)
        keys = sorted({(str(t), int(i)) for t, i in zip(self._table[near], self._ids[near],
                                                          strict=True)})  # fmt: skip
        codes: dict[int, tuple] = {}
        shared: set[int] = set()
        for t, i in keys:
            for kind in ("i", "t", "g") if t != "l" else ("g",):
                c = _colour(salt, kind, t, i)
                if c in codes:
                    shared.add(c)
                codes[c] = (kind, t, i)
        for c in shared:
            del codes[c]
        return codes, shared

    def _reach(self, t: str, i: int, kind: str, z: int) -> Box:
        """Where (world px) a box of object (t, i) can be: its bounding box, widened by how
        far the style draws an icon or a label from its point."""
        minx, miny, maxx, maxy = self._box_of[(t, i)]
        res = metres_per_pixel(z)
        r = ICON_REACH_PX if kind == "i" else LABEL_REACH_PX
        return (
            (minx + HALF_WORLD_M) / res - r,
            (HALF_WORLD_M - maxy) / res - r,
            (maxx + HALF_WORLD_M) / res + r,
            (HALF_WORLD_M - miny) / res + r,
        )

    def _placed_alike(self, salt: str, z: int, mx: int, my: int, n: int, key: list[Box]) -> Any:
        """The coded render of a metatile, once its placement boxes equal the tiles'."""
        found = self._coded_as_placed(salt, z, mx, my, n, lambda: key)
        if found is not None:
            return found[0]
        raise RenderStackError(
            f"the colour-coded render placed icons and labels differently from the tiles in "
            f"metatile {z}/{mx}/{my} {PLACEMENT_TRIES} times; what the map shows there "
            "cannot be known exactly"
        )

    def _metatile(self, z: int, mx: int, my: int, wanted: list[tuple[int, int]]) -> None:
        """Code one metatile: its placements attributed, and where each object's icon pixels
        are (for icons drawn but covered)."""
        n = min(self.engine.tiles.metatile, 2**z)
        key = self.engine.tiles.placements(z, mx, my, wanted)
        size = n * TILE_PX
        for salt in SALTS:
            codes, shared = self._coding(z, mx, my, n, salt)
            image = self._placed_alike(salt, z, mx, my, n, key)
            # each pixel as one little-endian word, R | G << 8 | B << 16 | A << 24; only
            # opaque ones not of the background can be code colours (the coded render paints
            # few: no fills, no roads)
            words = np.frombuffer(image.to_string(), dtype="<u4")
            opaque = np.flatnonzero(((words >> 24) == 255) & (words != BACKGROUND_WORD))
            rgb = (words[opaque] & 0xFFFFFF).astype(np.int64)
            if not shared or not np.isin(rgb, _near_colours([_le(c) for c in shared])[0]).any():
                break  # no colour two objects share is painted: every pixel has one owner
            self.resalted += 1
            log.info("metatile %s/%s/%s: two objects share a painted colour under %r",
                     z, mx, my, salt)  # fmt: skip
        else:
            raise RenderStackError(  # pragma: no cover - needs thousands of objects in one metatile
                f"metatile {z}/{mx}/{my}: under each of {len(SALTS)} salts two objects it "
                "draws share a colour; their icons and labels cannot be told apart"
            )
        owner = [codes[c] for c in sorted(codes)]
        values, which = _near_colours([_le(c) for c in sorted(codes)])
        placements: list[_Placement] = []
        icon_px: dict[tuple[str, int], np.ndarray] = {}
        ox, oy = mx * TILE_PX, my * TILE_PX
        if len(values):
            at = np.clip(np.searchsorted(values, rgb), 0, len(values) - 1)
            hit = (values[at] == rgb) & (which[at] >= 0)
            index = np.full(size * size, -1, dtype=np.int32)
            index[opaque[hit]] = which[at[hit]]
            index = index.reshape(size, size)
            coloured = np.zeros(size * size, dtype=bool)
            coloured[opaque] = True
            coloured = coloured.reshape(size, size)
            for x0, y0, x1, y1 in key:
                voted = box_votes(index, (x0, y0, x1, y1), size)
                if voted is None:
                    continue
                votes, window = voted
                if not votes.size:
                    continue
                counts = np.bincount(votes)
                best = int(counts.argmax())
                kind, t, i = owner[best]
                if counts[best] < (MIN_ICON_PIXELS if kind == "i" else MIN_TEXT_PIXELS):
                    continue
                # the owner must hold a fair share of what is drawn in the box (a stray pixel
                # a unit off some other code is no label), and the box must lie where the
                # owner can be drawn: at its point or in its bounding box, give or take
                if kind == "t" and counts[best] < MIN_VOTE_SHARE * int(coloured[window].sum()):
                    continue
                box = (x0 + ox, y0 + oy, x1 + ox, y1 + oy)
                if not overlap(box, self._reach(t, i, kind, z)):
                    continue
                placements.append(_Placement((t, i), kind, box, (z, mx, my)))
            # icon pixels of objects of interest with no icon box here: an icon drawn and
            # then covered by another shows only so
            boxed = {p.key for p in placements if p.kind == "i"}
            lost = np.zeros(len(owner), dtype=bool)
            for j, (kind, t, i) in enumerate(owner):
                lost[j] = kind == "i" and (t, i) in self.objects and (t, i) not in boxed
            if lost.any():
                hit = index >= 0
                hit[hit] = lost[index[hit]]
                ys, xs = np.nonzero(hit)
                who = index[ys, xs]
                for j in np.unique(who):
                    _, t, i = owner[int(j)]
                    sel = who == j
                    icon_px[(t, i)] = np.stack([xs[sel] + ox, ys[sel] + oy], axis=1)
        with self._lock:
            self._cache[(z, mx, my)] = placements
            self._pixels[(z, mx, my)] = dict(icon_px)
            self._boxes[(z, mx, my)] = [(a + ox, b + oy, c + ox, d + oy) for a, b, c, d in key]

    # ------------------------------------------------------------ views

    def view(self, view: View, covers: list[Box] | None = None) -> list[DrawnObject]:
        """Every object of interest the view meets, with what of it shows (see the module's
        notes), in a stable order (table, id).  ``covers``: boxes in image pixels drawn over
        the map (default the page's controls, ``maps.page.control_boxes``, and the markers'
        pins where the view has markers): an icon or label under one is not wholly shown."""
        from .page import PIN_BOX_PX, control_boxes

        tiles = self.engine.tiles
        z = view.zoom
        x0, y0, _, _ = pixel_box(view.center, z, view.width, view.height)
        x0, y0 = round(x0), round(y0)  # Leaflet rounds the map's pixel origin
        x1, y1 = x0 + view.width, y0 + view.height
        if covers is None:
            covers = list(control_boxes(view).values())
            for m in view.markers:
                mx, my = view.pixel(m.lat, m.lon)
                a, b, c, e = PIN_BOX_PX
                covers.append((mx + a, my + b, mx + c, my + e))
        hidden = [(c[0] + x0, c[1] + y0, c[2] + x0, c[3] + y0) for c in covers]  # world px
        wanted: dict[tuple[int, int, int], list[tuple[int, int]]] = defaultdict(list)
        for tx in range(int(x0 // TILE_PX), int((x1 - 1) // TILE_PX) + 1):
            for ty in range(int(y0 // TILE_PX), int((y1 - 1) // TILE_PX) + 1):
                wanted[tiles.metatile_of(z, tx, ty)].append((tx, ty))
        placed: list[_Placement] = []
        covered: dict[tuple[str, int], list[np.ndarray]] = defaultdict(list)
        for key in sorted(wanted):
            with self._lock:
                done = key in self._cache
            if not done:
                t0 = time.perf_counter()
                self._metatile(*key, wanted[key])
                with self._lock:
                    self.seconds += time.perf_counter() - t0
            placed += self._cache[key]
            for k, px in self._pixels[key].items():
                covered[k].append(px)
        n = min(tiles.metatile, 2**z)

        def own(p: _Placement) -> Box:
            _, mx, my = p.metatile
            return (mx * TILE_PX, my * TILE_PX, (mx + n) * TILE_PX, (my + n) * TILE_PX)

        def shown_by_tiles(p: _Placement) -> bool:
            """Whether the tiles show the whole box: every other metatile its box spans placed
            the same box (Mapnik's buffer makes neighbours place a label across their seam
            alike; the coded colours prove whose it is in the metatile holding its centre)."""
            for mt in wanted:
                _, mx, my = mt
                area = (mx * TILE_PX, my * TILE_PX, (mx + n) * TILE_PX, (my + n) * TILE_PX)
                if (
                    mt != p.metatile
                    and overlap(p.box, area)
                    and not any(_near(b, p.box) for b in self._boxes[mt])
                ):
                    return False
            return True

        by_key: dict[tuple[str, int], list[_Placement]] = defaultdict(list)
        for p in placed:
            by_key[p.key].append(p)
        view_box = (x0, y0, x1, y1)
        out: dict[tuple[str, int], DrawnObject] = {}
        for k, ps in by_key.items():
            if k not in self.objects:
                continue
            d = DrawnObject(self.objects[k])
            # icons: from the metatile whose own area holds the box's centre
            icons = [p for p in ps if p.kind == "i" and _centre_in(p.box, own(p))]
            best = max(icons, key=lambda p: _share(p.box, view_box), default=None)
            if best is not None and _share(best.box, view_box) > 0:
                d.icon = _shift(best.box, x0, y0)
                under = sum(_share(best.box, c) for c in hidden)
                d.icon_share = round(max(0.0, _share(best.box, view_box) - under), 3)
                if under > 0:
                    d.notes.append("icon_under_control")
                if not shown_by_tiles(best):
                    d.notes.append("icon_split_by_seam")
            texts = [p for p in ps if p.kind == "t" and _centre_in(p.box, own(p))]
            for p in texts:
                if not overlap(p.box, view_box):
                    continue
                clear = not any(overlap(p.box, c) for c in hidden)
                if _inside(p.box, view_box) and clear and shown_by_tiles(p):
                    d.label = _shift(p.box, x0, y0)
                    d.label_text = _label_text(d.row.name)
                    break
                d.label_partial = True
            if d.label is not None:
                d.label_partial = False
            glyphs = [p for p in ps if p.kind == "g" and _centre_in(p.box, own(p))]
            if glyphs and d.row.name:  # an unnamed oneway road has arrows, no label
                face = self._faces["water" if "waterway" in d.row.tags else "road"]
                letters = glyph_count(d.row.name, face, self._fonts)
                for group in neighbours([Glyph(0, p.box, True) for p in glyphs]):
                    boxes = [g.box for g in group]
                    cores = [_core(b) for b in boxes]
                    inside = [b for b in cores if _inside(b, view_box)]
                    if not any(overlap(b, view_box) for b in boxes):
                        continue
                    clear = not any(overlap(b, c) for b in cores for c in hidden)
                    if len(boxes) >= letters and len(inside) == len(boxes) and clear:
                        union = (min(b[0] for b in boxes), min(b[1] for b in boxes),
                                 max(b[2] for b in boxes), max(b[3] for b in boxes))  # fmt: skip
                        d.label = _shift(union, x0, y0)
                        d.label_text = _label_text(d.row.name)
                        d.label_partial = False
                        break
                    d.label_partial = True
            if d.icon or d.label or d.label_partial:
                out[k] = d
        # icons drawn, then covered by another (pixels of theirs show; no box is theirs)
        for k, arrays in covered.items():
            if k in out and out[k].icon is not None:
                continue
            px = np.concatenate(arrays)
            seen = (px[:, 0] >= x0) & (px[:, 0] < x1) & (px[:, 1] >= y0) & (px[:, 1] < y1)
            # an icon is drawn at its object's point: pixels of its colour elsewhere are a
            # coincidence of some other drawing (seen once, 860 px from the object)
            minx, miny, maxx, maxy = self.objects[k].box
            res, r = metres_per_pixel(z), ICON_REACH_PX
            ax0, ax1 = (minx + HALF_WORLD_M) / res - r, (maxx + HALF_WORLD_M) / res + r
            ay0, ay1 = (HALF_WORLD_M - maxy) / res - r, (HALF_WORLD_M - miny) / res + r
            seen &= (px[:, 0] >= ax0) & (px[:, 0] <= ax1)
            seen &= (px[:, 1] >= ay0) & (px[:, 1] <= ay1)
            if int(seen.sum()) >= MIN_ICON_PIXELS:
                d = out.setdefault(k, DrawnObject(self.objects[k]))
                d.icon_pixels_only = True
        self._geometry(view, view_box, out)
        self._fills(view, view_box, out)
        return [out[k] for k in sorted(out)]

    def _geometry(
        self, view: View, box: tuple[float, float, float, float], out: dict[tuple, DrawnObject]
    ) -> None:
        """Areas and lines of interest in the view: their share inside, their length inside."""
        z = view.zoom
        res = metres_per_pixel(z)

        minx, maxy = pixel_to_m(box[0], box[1], z)
        maxx, miny = pixel_to_m(box[2], box[3], z)
        env = f"ST_MakeEnvelope({minx}, {miny}, {maxx}, {maxy}, 3857)"
        ids = {t: [i for (tt, i) in self.objects if tt == t] for t in ("a", "l")}
        sql = f"""
            SELECT 'a', osm_id, ST_Area(ST_Intersection(way, {env})), ST_Area(way), 0, 0
              FROM planet_osm_polygon WHERE way && {env} AND osm_id = ANY(%(a)s)
            UNION ALL
            SELECT 'l', osm_id, 0, 0, ST_Length(ST_Intersection(way, {env})), ST_Length(way)
              FROM planet_osm_line WHERE way && {env} AND osm_id = ANY(%(l)s)
        """
        rows = query_rows(
            self.engine.database.connection,
            sql,
            {"a": ids["a"], "l": ids["l"]},
            during="map features' areas were measured",
            what="measuring areas",
        )
        view_area = (maxx - minx) * (maxy - miny)
        for t, i, inter, area, inside_len, length in rows:
            k = (t, int(i))
            if t == "a" and inter <= 0:
                continue
            if t == "l" and inside_len <= 0:
                continue
            d = out.setdefault(k, DrawnObject(self.objects[k]))
            if t == "a":
                d.area_share = round(float(inter) / float(area), 4) if area else 0.0
                d.view_share = round(float(inter) / view_area, 4)
            else:
                d.line_px = round(float(inside_len) / res, 1)
                d.total_px = round(float(length) / res, 1)

    def _fills(
        self, view: View, box: tuple[float, float, float, float], out: dict[tuple, DrawnObject]
    ) -> None:
        """The share of each filled area's pixels in the view that show its fill, read from
        the tiles the view is cut from (what the image shows)."""
        todo: dict[int, tuple[int, int, int]] = {}
        for (t, i), d in out.items():
            colour = self._fill(d.row.tags) if t == "a" and d.area_share > 0 else None
            if colour:
                c = int(colour.lstrip("#"), 16)
                todo[i] = (c >> 16, (c >> 8) & 0xFF, c & 0xFF)
        if not todo:
            return
        from shapely import wkb
        from shapely.affinity import affine_transform

        z = view.zoom
        res = metres_per_pixel(z)
        x0, y0, x1, y1 = (int(v) for v in box)
        minx, maxy = pixel_to_m(x0, y0, z)
        maxx, miny = pixel_to_m(x1, y1, z)
        env = f"ST_MakeEnvelope({minx}, {miny}, {maxx}, {maxy}, 3857)"
        rows = query_rows(
            self.engine.database.connection,
            f"SELECT osm_id, ST_AsBinary(ST_Intersection(way, {env})) FROM planet_osm_polygon "
            f"WHERE way && {env} AND osm_id = ANY(%(ids)s)",
            {"ids": sorted(todo)},
            during="filled areas were measured",
            what="reading filled areas",
        )
        image = self._view_pixels(z, box)
        half = HALF_WORLD_M / res
        for osm_id, geom in rows:
            shape = affine_transform(
                wkb.loads(bytes(geom)), [1 / res, 0, 0, -1 / res, half - x0, half - y0]
            )
            mask = _raster(shape, x1 - x0, y1 - y0)
            n = int(mask.sum())
            d = out[("a", int(osm_id))]
            if n == 0:
                d.fill_share, d.fill_px = 0.0, 0
                continue
            near = np.abs(image[mask].astype(np.int16) - np.array(todo[int(osm_id)])).max(axis=1)
            d.fill_px = int((near <= FILL_TOLERANCE).sum())
            d.fill_share = round(d.fill_px / n, 4)

    def _view_pixels(self, z: int, box: tuple[float, float, float, float]) -> np.ndarray:
        """The view's pixels (RGB, rows x columns) as its tiles show them."""
        import io

        from PIL import Image

        x0, y0, x1, y1 = (int(v) for v in box)
        tx0, ty0 = x0 // TILE_PX, y0 // TILE_PX
        tx1, ty1 = (x1 - 1) // TILE_PX, (y1 - 1) // TILE_PX
        big = np.zeros(((ty1 - ty0 + 1) * TILE_PX, (tx1 - tx0 + 1) * TILE_PX, 3), dtype=np.uint8)
        last = 2**z - 1
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                if not (0 <= tx <= last and 0 <= ty <= last):
                    continue
                png = self.engine.tiles.tile(z, tx, ty)
                tile = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
                r, c = (ty - ty0) * TILE_PX, (tx - tx0) * TILE_PX
                big[r : r + TILE_PX, c : c + TILE_PX] = tile
        ox, oy = x0 - tx0 * TILE_PX, y0 - ty0 * TILE_PX
        return big[oy : oy + (y1 - y0), ox : ox + (x1 - x0)]


#: how far (per channel) a tile's pixel may be from a fill's colour and still be of it
#: (tiles are saved as palette PNGs, which move a colour a unit or two)
FILL_TOLERANCE = 4


def _raster(shape: Any, width: int, height: int) -> np.ndarray:
    """A boolean mask (rows x columns) of the pixels whose centres a polygon (in image
    pixels) covers: exteriors filled, holes cleared."""
    from PIL import Image, ImageDraw

    canvas = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(canvas)
    polygons = (
        [shape]
        if shape.geom_type == "Polygon"
        else [g for g in getattr(shape, "geoms", []) if g.geom_type == "Polygon"]
    )
    for poly in polygons:
        if poly.is_empty:
            continue
        draw.polygon([(x - 0.5, y - 0.5) for x, y in poly.exterior.coords], fill=1)
        for hole in poly.interiors:
            draw.polygon([(x - 0.5, y - 0.5) for x, y in hole.coords], fill=0)
    return np.asarray(canvas, dtype=bool)


def _label_text(name: str) -> str:
    """A label as the style writes it, for an answer: stripped, lines joined by a space."""
    return re.sub(r"\s+", " ", name).strip()


def _core(b: Box) -> Box:
    """A glyph box less ``GLYPH_SLACK_PX`` on each side (never inside out)."""
    dx = min(GLYPH_SLACK_PX, (b[2] - b[0]) / 2)
    dy = min(GLYPH_SLACK_PX, (b[3] - b[1]) / 2)
    return (b[0] + dx, b[1] + dy, b[2] - dx, b[3] - dy)


def _shift(b: Box, x0: float, y0: float) -> Box:
    return (round(b[0] - x0, 1), round(b[1] - y0, 1), round(b[2] - x0, 1), round(b[3] - y0, 1))


def _inside(a: Box, b: Box) -> bool:
    return a[0] >= b[0] and a[1] >= b[1] and a[2] <= b[2] and a[3] <= b[3]


def _centre_in(a: Box, b: Box) -> bool:
    cx, cy = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    return b[0] <= cx < b[2] and b[1] <= cy < b[3]


def _near(a: Box, b: Box) -> bool:
    return all(abs(p - q) < 0.5 for p, q in zip(a, b, strict=True))


def _share(a: Box, b: Box) -> float:
    """The share of box ``a``'s area inside box ``b``."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = (a[2] - a[0]) * (a[3] - a[1])
    return w * h / area if area > 0 else 0.0
