"""What the colour-coded renders share: the steps that read which object a map drew where.

Two readers use them, each for its own layers (``../shared/spec/label-visibility.md``):
``maps.labels`` (road names, by way) and ``maps.feature_pixels`` (icons, point labels,
road and water names, by OSM object).  Both

1. draw a metatile with a ``LabelCollisionDetector`` (``render_with_boxes``), once as the
   tiles are made and once with a copy of the style in which only colours change: each
   object's icon or text gets a colour from an md5 hash of a salt and its ``osm_id``
   (``code_colour`` in Python, ``sql_code`` in the style's SQL);
2. require the coded render to place the same boxes as the plain one, rendering it again
   up to ``PLACEMENT_TRIES`` times (``ColourCoded._coded_as_placed``);
3. require the objects near the metatile (``near_metatile``) to have distinct colours,
   else code it again under the next salt (``salts``);
4. give each placed box the object whose colour has the most pixels inside it
   (``box_votes``), and join the glyphs of one label (``neighbours``).

What each reader codes, how it reads pixels as colours and what it makes of the boxes
stay in its own module.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from cartoqa.errors import RenderStackError

from .database import lost_database
from .projection import TILE_PX, metres_per_pixel, tile_bounds_m
from .style import style_xml
from .tiles import BUFFER_PX, sorted_boxes

if TYPE_CHECKING:
    from .render import MapEngine

__all__ = [
    "BACKGROUND",
    "BACKGROUND_RGB",
    "BACKGROUND_WORD",
    "PLACEMENT_TRIES",
    "Box",
    "ColourCoded",
    "Glyph",
    "box_votes",
    "code_colour",
    "layer_block",
    "near_metatile",
    "neighbours",
    "overlap",
    "render_with_boxes",
    "salts",
    "sql_code",
    "text_key",
    "without_background",
]

Box = tuple[float, float, float, float]

#: renders of a metatile (plain and colour-coded) before its placements are taken as unequal
PLACEMENT_TRIES = 3


def salts(prefix: str) -> tuple[str, ...]:
    """The salts tried in turn for a metatile whose objects share a colour under the first
    ones: ``prefix`` and 0 to 7."""
    return tuple(f"{prefix}{i}" for i in range(8))


def code_colour(text: str) -> int:
    """The colour (0xRRGGBB) the coded style's SQL gives ``text`` (a salt and what else the
    reader puts before the ``osm_id``, then the ``osm_id``)."""
    return int(hashlib.md5(text.encode()).hexdigest()[:6], 16)


def sql_code(prefix: str) -> str:
    """The SQL expression of a row's code colour ("#rrggbb"): ``code_colour(prefix +
    str(osm_id))``."""
    return f"'#' || substr(md5('{prefix}' || osm_id::text), 1, 6)"


def text_key(text: str) -> str:
    """A short key of ``text`` (a coded style, a reader's version) for the names of the files
    a reader keeps its results in: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def near_metatile(bbox: np.ndarray, z: int, mx: int, my: int, n: int) -> np.ndarray:
    """Which rows of ``bbox`` (EPSG:3857 boxes, minx, miny, maxx, maxy) meet metatile (z, mx,
    my), ``n`` tiles a side, or its buffer: the objects it can draw."""
    x0, y0, x1, y1 = tile_bounds_m(z, mx, my, n, n)
    pad = 2 * BUFFER_PX * metres_per_pixel(z)  # Mapnik asks for the buffer; more is safe
    b = bbox
    near = (b[:, 0] <= x1 + pad) & (b[:, 2] >= x0 - pad)
    near &= (b[:, 1] <= y1 + pad) & (b[:, 3] >= y0 - pad)
    return near


def box_votes(index: np.ndarray, box: Box, size: int) -> tuple[np.ndarray, Any] | None:
    """The owners voted by the coded pixels inside placement ``box`` (metatile pixels):
    ``index`` holds, per pixel of the ``size`` x ``size`` coded image, the owner's index or
    -1.  Returns the votes (owners' indices, one per coded pixel) and the window of the
    image they were read from (rows, columns); None when the box lies off the image."""
    x0, y0, x1, y1 = box
    ix0, iy0 = max(0, int(x0)), max(0, int(y0))
    ix1, iy1 = min(size, int(np.ceil(x1))), min(size, int(np.ceil(y1)))
    if ix1 <= ix0 or iy1 <= iy0:
        return None
    window = (slice(iy0, iy1), slice(ix0, ix1))
    votes = index[window]
    return votes[votes >= 0], window


#: the coded renders' background: the style's land colour, opaque (``without_background``)
BACKGROUND = "#f2efe9"
BACKGROUND_RGB = 0xF2EFE9
#: the background as a pixel word of Mapnik's RGBA image read little-endian (R low, A high)
BACKGROUND_WORD = 0xFF000000 | 0xE9 << 16 | 0xEF << 8 | 0xF2


def layer_block(xml: str, layer: str) -> tuple[int, int]:
    """Where the style's layer ``layer`` starts (its name) and ends (its closing tag)."""
    start = xml.find(f'name="{layer}" srs=')
    if start < 0:
        raise RenderStackError(f"the style has no {layer!r} layer: is it openstreetmap-carto 5.x?")
    return start, xml.index("</Layer>", start)


_PLACING = re.compile(r"<(?:TextSymbolizer|ShieldSymbolizer|MarkersSymbolizer|PointSymbolizer)")


#: symbolizers that only paint: under every coded layer they draw nothing a reader of the
#: coded render needs, and place nothing
_PAINTING = re.compile(
    r"<(LineSymbolizer|PolygonSymbolizer|LinePatternSymbolizer|PolygonPatternSymbolizer|"
    r"BuildingSymbolizer|RasterSymbolizer|DotSymbolizer)\b[^>]*?(?:/>|>.*?</\1>)",
    re.S,
)


def without_background(xml: str, coded: Iterable[str]) -> str:
    """The style ``xml`` with the layers before the first of the ``coded`` layers (names)
    less what only paints: a layer whose styles place nothing is left out, and the painting
    symbolizers of the others are (their oneway arrows, junction names and the like still
    place, as in the tiles); the background is ``BACKGROUND``.  What lies under the coded
    layers never moves a label; the box check proves it every time."""
    first = min(layer_block(xml, layer)[0] for layer in coded)
    style_re = re.compile(r'<Style filter-mode="first" name="([^"]+)"[^>]*>(.*?)</Style>', re.S)
    styles = {m.group(1): m.group(2) for m in style_re.finditer(xml)}
    layer_re = re.compile(r"  <Layer [^>]*>.*?</Layer>\n?", re.S)
    name_re = re.compile(r"<StyleName><!\[CDATA\[([^\]]+)\]\]></StyleName>")
    before: set[str] = set()
    after: set[str] = set()
    out, pos = [], 0
    for m in layer_re.finditer(xml):
        names = name_re.findall(m.group(0))
        if m.start() >= first:
            after.update(names)
            continue
        if any(_PLACING.search(styles.get(n, "<MarkersSymbolizer")) for n in names):
            before.update(names)
            continue  # keep it: it places something
        out.append(xml[pos : m.start()])
        pos = m.end()
    out.append(xml[pos:])
    xml = "".join(out)
    # the kept background layers' styles, less their painting (a style some later layer
    # also draws with is left whole)
    for name in sorted(before - after):
        style = re.search(
            rf'<Style filter-mode="first" name="{re.escape(name)}"[^>]*>.*?</Style>', xml, re.S
        )
        if style is not None:
            xml = xml[: style.start()] + _PAINTING.sub("", style.group(0)) + xml[style.end() :]
    # one known background colour (the style's land colour, so that antialiased text blends
    # with it as on the map): every pixel still of it is skipped, so few need matching
    xml = re.sub(r'(<Map\b[^>]*?)\sbackground-color="[^"]*"', r"\1", xml, count=1)
    return xml.replace("<Map ", f'<Map background-color="{BACKGROUND}" ', 1)


class ColourCoded:
    """A colour-coded reader of the views of one ``MapEngine``: the plain style pointed at the
    extract's database, the Mapnik maps of its coded copies (one per salt, made once), and
    metatile renders with a collision detector.  A reader names what it checks (``what``,
    ``check``: for errors) and gives its coded style (``coded_xml``)."""

    what = "colour-coded objects"
    """What is being checked, for the error when the database stopped answering."""
    check = "colour-coded"
    """The check's name in the error when Mapnik cannot render."""
    placement = "coded placement"
    """What differed, in the warning when the coded render placed boxes differently."""
    log = logging.getLogger(__name__)

    def __init__(self, engine: MapEngine) -> None:
        self.engine = engine
        self._xml_plain = style_xml(engine.style, engine.database.connection)
        self._fonts = engine.style.folder / "fonts"
        self._maps: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.seconds = 0.0
        """Time spent rendering and reading metatiles."""
        self.resalted = 0
        """Metatiles coded again under another salt because two of their objects shared a
        colour."""

    def coded_xml(self, salt: str) -> str:
        """The plain style with this reader's layers coded under ``salt``."""
        raise NotImplementedError

    def _map(self, which: str) -> Any:
        """The plain map, or (``which`` a salt) the map coded under that salt."""
        import mapnik

        if which not in self._maps:
            size = self.engine.tiles.metatile * TILE_PX
            m = mapnik.Map(size, size)
            xml = self._xml_plain if which == "plain" else self.coded_xml(which)
            mapnik.load_map_from_string(m, xml, True, str(self.engine.style.folder) + "/")
            m.buffer_size = BUFFER_PX
            self._maps[which] = m
        return self._maps[which]

    def _render(self, which: str, z: int, mx: int, my: int, n: int) -> tuple[Any, list[Any]]:
        """Metatile (z, mx, my) drawn with ``_map(which)``: the image and the detector's boxes."""
        return render_with_boxes(
            lambda: self._map(which), self.engine, z, mx, my, n, self.what, self.check
        )

    def _coded_as_placed(
        self, salt: str, z: int, mx: int, my: int, n: int, placed: Callable[[], list[Box]]
    ) -> tuple[Any, list[Box]] | None:
        """The coded render of a metatile under ``salt`` once its boxes (``sorted_boxes``)
        equal ``placed()`` (asked after each render: the tiles' render that gives them may
        still be drawing beside it), and those boxes; None when they differed
        ``PLACEMENT_TRIES`` times."""
        for _ in range(PLACEMENT_TRIES):
            image, coded = self._render(salt, z, mx, my, n)
            key = placed()
            if sorted_boxes(coded) == key:
                return image, key
            self.log.warning(
                "metatile %s/%s/%s: %s differed; rendering again", z, mx, my, self.placement
            )
        return None


def render_with_boxes(
    make_map: Any, engine: MapEngine, z: int, mx: int, my: int, n: int, what: str, check: str
) -> tuple[Any, list[Any]]:
    """Draw metatile (z, mx, my), ``n`` tiles a side, with the Mapnik map ``make_map()``
    gives and a collision detector: (the image, the detector's boxes).  Mapnik's errors
    become ``RenderStackError`` ("... for the ``check`` check"), or the lost database's
    error when the database stopped answering (``what`` names what was being checked)."""
    import mapnik

    try:
        m = make_map()
        size = n * TILE_PX
        if (m.width, m.height) != (size, size):
            m.resize(size, size)
        m.zoom_to_box(mapnik.Box2d(*tile_bounds_m(z, mx, my, n, n)))
        image = mapnik.Image(size, size)
        detector = mapnik.LabelCollisionDetector(m)
        mapnik.render_with_detector(m, image, detector)
    except RuntimeError as exc:  # Mapnik's errors; a lost database is named as such
        lost = lost_database(
            engine.database.connection, during=f"{what} were checked (metatile {z}/{mx}/{my})"
        )
        if lost is not None:
            raise lost from None
        raise RenderStackError(
            f"Mapnik could not render metatile {z}/{mx}/{my} for the {check} check: "
            f"{str(exc)[:600]}"
        ) from None
    return image, list(detector.boxes())


@dataclass(frozen=True)
class Glyph:
    """One placed box of a label, attributed."""

    osm_id: int
    box: Box  # world pixels
    inside: bool  # wholly inside its metatile's own area (the part its tiles show)


def overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether boxes ``a`` and ``b`` (x0, y0, x1, y1) share some area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def neighbours(glyphs: list[Glyph]) -> list[list[Glyph]]:
    """Glyphs joined into label instances: boxes closer than about a glyph apart."""
    boxes = [g.box for g in glyphs]
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # gap[i, j]: how far apart boxes i and j are (the larger of the x and y gaps; below 0
    # where they overlap), all pairs at once
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    gap = np.maximum(
        np.maximum(b[None, :, 0] - b[:, None, 2], b[:, None, 0] - b[None, :, 2]),
        np.maximum(b[None, :, 1] - b[:, None, 3], b[:, None, 1] - b[None, :, 3]),
    )
    # glyphs of one label touch or nearly; repeats are 100s of px apart
    for i, j in zip(*np.nonzero(np.triu(gap < 8, 1)), strict=True):
        parent[find(int(i))] = find(int(j))
    groups: dict[int, list[Glyph]] = defaultdict(list)
    for i, g in enumerate(glyphs):
        groups[find(i)].append(g)
    return list(groups.values())
