"""Which road names a rendered view actually shows, known exactly from the renderer.

The style drops labels that collide, and the view cuts labels at its edge
and at metatile seams, so "the road is in the view" does not mean "its name
can be read".  The method (``../shared/spec/label-visibility.md``):

1. Render each metatile the view uses twice with a ``LabelCollisionDetector``:
   as the tiles were made, and with a copy of the style in which only the
   road-name text changes colour: each name gets a colour from a hash of
   the name (text and halo, full opacity).  Sizes, fonts, order and
   placement stay the same; the two detectors' glyph boxes must be equal (as sets),
   and that is checked every time.
2. Give each glyph box the name whose colour has the most exactly matching
   pixels inside it, and join the glyphs of a name that lie next to each
   other into label instances.
3. A name is *visible* when one of its instances has at least as many glyphs
   as the name has letters, all inside the metatile's own area (the part the
   tiles show), inside the view, and clear of the markers drawn on top.  A
   name with glyphs in the view but no whole instance is *partial*.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from cartoqa.errors import CartoqaError

from .database import DatabaseError, lost_database
from .projection import TILE_PX, pixel_box, tile_bounds_m
from .roads import normalise_road
from .style import style_xml
from .tiles import BUFFER_PX

if TYPE_CHECKING:
    from .page import View
    from .render import MapEngine

__all__ = ["LabelError", "RoadLabels", "VisibleNames"]

log = logging.getLogger(__name__)

#: the layers that write road names (streets, paths, pedestrian areas): (layer, SQL line after
#: which the colour column goes, the text that follows it)
_NAME_LAYERS = (
    ("roads-text-name", "    name,\n", "    CASE\n      WHEN oneway"),
    ("paths-text-name", "    name,\n", "    CASE\n      WHEN oneway"),
    ("roads-area-text-name", "    name", "\n  FROM planet_osm_polygon"),
)
#: renders of a metatile (plain and colour-coded) before its placements are taken as unequal
PLACEMENT_TRIES = 3
#: a marker icon drawn by folium, relative to its anchor: (left, top, right, bottom) in px
MARKER_BOX = (-17, -42, 17, 2)


class LabelError(CartoqaError):
    """The coded render could not be made, or it placed labels differently from the map."""


@dataclass(frozen=True)
class VisibleNames:
    """Road names as one view shows them."""

    visible: frozenset[str]
    """Names with a whole label in the view, not under a marker (normalised)."""
    partial: frozenset[str]
    """Names with some glyphs in the view but no whole label: neither required nor wrong."""


Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class _Glyph:
    name: str
    box: Box  # world pixels


def _colour(name: str, salt: str) -> tuple[int, int, int]:
    h = hashlib.md5((salt + name).encode("utf-8")).hexdigest()
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _coded_xml(xml: str, salt: str) -> str:
    """The style with road-name text (streets, paths, pedestrian areas) coloured by a hash of
    the name; nothing else changes."""
    colour = f"'#' || substr(md5('{salt}' || coalesce(name, '')), 1, 6) AS cq_colour"
    for layer, anchor, follows in _NAME_LAYERS:
        start = xml.find(f'<Style filter-mode="first" name="{layer}">')
        if start < 0:
            raise LabelError(f"the style has no {layer!r} style: is it openstreetmap-carto 5.x?")
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
            raise LabelError(f"the {layer!r} layer's SQL is not the one this code knows")
        cut = at + len(anchor)
        sep = "" if anchor.endswith("\n") else ",\n"
        tail = ",\n" if anchor.endswith("\n") else ""
        xml = xml[:cut] + sep + "    " + colour + tail + xml[cut:]
    return xml


class RoadLabels:
    """Road-name visibility for the views of one ``MapEngine`` (metatile results are cached)."""

    def __init__(self, engine: MapEngine) -> None:
        import psycopg

        self.engine = engine
        conn = engine.database.connection
        try:
            with psycopg.connect(conn.conninfo(), connect_timeout=10) as c:
                raw = [
                    r[0]
                    for r in c.execute(
                        "SELECT name FROM planet_osm_line WHERE name IS NOT NULL UNION "
                        "SELECT name FROM planet_osm_polygon WHERE name IS NOT NULL"
                    )
                ]
        except psycopg.OperationalError as exc:
            lost = lost_database(conn, during="the road names were read for the label check")
            why = f"reading road names from {conn.conninfo()}: {exc}"
            raise lost or DatabaseError(why) from None
        # a salt under which no two names share a colour
        for attempt in range(20):
            salt = f"cq{attempt}"
            colours = {_colour(n, salt): n for n in raw}
            if len(colours) == len(set(raw)):
                break
        else:  # pragma: no cover - 20 collisions in a row
            raise LabelError("no colour code without collisions among the road names")
        self.salt = salt
        self._names = {c: normalise_road(n) or n for c, n in colours.items()}
        self._xml_plain = style_xml(engine.style, conn)
        self._xml_coded = _coded_xml(self._xml_plain, salt)
        self._maps: dict[str, Any] = {}
        self._cache: dict[tuple[int, int, int], list[_Glyph]] = {}
        self._lock = threading.Lock()
        self.seconds = 0.0
        """Time spent rendering and reading metatiles for labels."""

    def _map(self, which: str) -> Any:
        import mapnik

        if which not in self._maps:
            size = self.engine.tiles.metatile * TILE_PX
            m = mapnik.Map(size, size)
            xml = self._xml_plain if which == "plain" else self._xml_coded
            mapnik.load_map_from_string(m, xml, True, str(self.engine.style.folder) + "/")
            m.buffer_size = BUFFER_PX
            self._maps[which] = m
        return self._maps[which]

    def _render(self, which: str, z: int, mx: int, my: int, n: int) -> tuple[Any, list[Any]]:
        import mapnik

        try:
            m = self._map(which)
            size = n * TILE_PX
            if (m.width, m.height) != (size, size):
                m.resize(size, size)
            m.zoom_to_box(mapnik.Box2d(*tile_bounds_m(z, mx, my, n, n)))
            image = mapnik.Image(size, size)
            detector = mapnik.LabelCollisionDetector(m)
            mapnik.render_with_detector(m, image, detector)
        except RuntimeError as exc:  # Mapnik's errors; a lost database is named as such
            lost = lost_database(
                self.engine.database.connection,
                during=f"road-name labels were checked (metatile {z}/{mx}/{my})",
            )
            if lost is not None:
                raise lost from None
            raise LabelError(
                f"Mapnik could not render metatile {z}/{mx}/{my} for the label check: "
                f"{str(exc)[:600]}"
            ) from None
        return image, list(detector.boxes())

    def _glyphs(self, z: int, mx: int, my: int) -> list[_Glyph]:
        """The road-name glyphs the tiles of this metatile show (centre in its own area)."""
        from PIL import Image

        n = min(self.engine.tiles.metatile, 2**z)

        def boxes(found: list[Any]) -> list[Box]:
            # sorted: the detector lists the same boxes in a varying order from one render to
            # the next (seen about once in ten renders of one metatile); the set is what counts
            return sorted(
                (round(b.minx, 3), round(b.miny, 3), round(b.maxx, 3), round(b.maxy, 3))
                for b in found
            )

        for _ in range(PLACEMENT_TRIES):
            key = boxes(self._render("plain", z, mx, my, n)[1])
            coded_image, coded = self._render("coded", z, mx, my, n)
            if key == boxes(coded):
                break
            log.warning("metatile %s/%s/%s: label placement differed; rendering again", z, mx, my)
        else:
            raise LabelError(
                f"the colour-coded render placed labels differently in metatile {z}/{mx}/{my} "
                f"{PLACEMENT_TRIES} times; road-name visibility cannot be known exactly there"
            )
        pixels = np.asarray(Image.open(io.BytesIO(coded_image.to_string("png32"))).convert("RGB"))
        size = n * TILE_PX
        glyphs: dict[str, list[tuple[float, float, float, float]]] = defaultdict(list)
        for x0, y0, x1, y1 in key:
            # boxes may reach into the buffer around the image: count the pixels inside it
            ix0, iy0 = max(0, int(x0)), max(0, int(y0))
            ix1, iy1 = min(size, int(np.ceil(x1))), min(size, int(np.ceil(y1)))
            if ix1 <= ix0 or iy1 <= iy0:
                continue
            patch = pixels[iy0:iy1, ix0:ix1].reshape(-1, 3)
            votes = Counter(self._names[t] for t in map(tuple, patch.tolist()) if t in self._names)
            if votes:
                name, count = votes.most_common(1)[0]
                if count >= 1:  # antialiased glyphs keep only a few exact pixels
                    glyphs[name].append((x0, y0, x1, y1))
        ox, oy = mx * TILE_PX, my * TILE_PX
        return [
            _Glyph(name, (b[0] + ox, b[1] + oy, b[2] + ox, b[3] + oy))
            for name, boxes in glyphs.items()
            for b in boxes
            # a label across a seam is drawn by both metatiles (the buffer makes them place it
            # alike); the tiles show each glyph from the metatile its centre falls in
            if 0 <= (b[0] + b[2]) / 2 < size and 0 <= (b[1] + b[3]) / 2 < size
        ]

    def names(
        self, view: View, markers_px: list[tuple[float, float]] | None = None
    ) -> VisibleNames:
        """The road names ``view`` shows whole, and those it shows only in part."""
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
        shown: dict[str, list[Box]] = defaultdict(list)
        for key in sorted(metatiles):
            with self._lock:
                if key not in self._cache:
                    t0 = time.perf_counter()
                    self._cache[key] = self._glyphs(*key)
                    self.seconds += time.perf_counter() - t0
                glyphs = self._cache[key]
            for g in glyphs:
                shown[g.name].append(g.box)
        visible: set[str] = set()
        seen: set[str] = set()
        for name, boxes in shown.items():
            letters = len(re.sub(r"\s", "", name))
            for label in _neighbours(boxes):
                in_view = [
                    b for b in label if b[0] >= x0 and b[1] >= y0 and b[2] <= x1 and b[3] <= y1
                ]
                if not in_view:
                    continue
                seen.add(name)
                clear = not any(_overlap(b, c) for b in label for c in covers)
                if len(label) >= letters and len(in_view) == len(label) and clear:
                    visible.add(name)
        return VisibleNames(frozenset(visible), frozenset(seen - visible))


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _neighbours(boxes: list[tuple[float, float, float, float]]) -> list[list[tuple[float, ...]]]:
    """Glyph boxes joined into label instances: boxes closer than about a glyph apart."""
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            gap = max(b[0] - a[2], a[0] - b[2], b[1] - a[3], a[1] - b[3])
            if gap < 8:  # glyphs of one label touch or nearly; repeats are 100s of px apart
                parent[find(i)] = find(j)
    groups: dict[int, list[tuple[float, ...]]] = defaultdict(list)
    for i, b in enumerate(boxes):
        groups[find(i)].append(b)
    return list(groups.values())
