"""Legend images of the catalogue's features, drawn by Mapnik with the style the maps use
(issue 16, item 2).

    legend = render_legend(entries, folder)      # Legend: images by entry key, drops

Each feature is put alone in a cell of a synthetic OSM grid (a node for a
symbol, a line across the cell for a line style, a square for an area style;
no names, which would give the answer away), imported into a database of its
own (the grid is an extract like any other: ``maps.MapEngine``), and each cell
is drawn on its own, on the map's background:

- symbols at zoom 18, scale factor 3 (icons of about 40 px, crisp), on a
  ``SYMBOL_PX`` square (24 m);
- lines and areas at zoom 17, scale factor 2, on ``LINE_PX`` / ``AREA_PX``
  squares (143 m: a 120 m line, a 70 m square), without the style's point and
  label layers (``point_and_label_layers``): the style puts an area's icon on
  its fill (prison grounds, arts centre, motorcycle parking), which would make
  an area question a symbol question;
- a line that OSM maps as a closed way (``RINGS``: a turntable) as a ring of
  ``RING_M`` radius, not the zigzag every other line is drawn as.

A cell that draws nothing (the same pixels as an empty cell: a feature the
style draws only with a name, or not at this zoom) is dropped and counted.
Every image is decoded (and its size checked) before it is written
(``checked_png``): a legend never holds an image that does not decode.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cartoqa.errors import RenderStackError

from .catalogue import CatalogueEntry

__all__ = [
    "AREA_PX",
    "LINE_PX",
    "RINGS",
    "RING_M",
    "SYMBOL_PX",
    "Legend",
    "checked_png",
    "grid_osm",
    "point_and_label_layers",
    "render_legend",
]

SYMBOL_PX, LINE_PX, AREA_PX = 120, 240, 240
#: (zoom, scale factor) per category: the window is the image at that zoom's scale, so the
#: style's rules for that zoom apply (Mapnik scales the denominator by the factor)
_DRAW = {"symbol": (18, 3.0), "line": (17, 2.0), "area": (17, 2.0)}
_SIZE = {"symbol": SYMBOL_PX, "line": LINE_PX, "area": AREA_PX}
#: the grid's origin (open sea off West Africa: no real data near) and its cell pitch
ORIGIN = (5.0, -20.0)
CELL_M = 300.0
#: lines OSM maps as closed ways (a turntable is a ring round its pit), drawn as a ring
RINGS = frozenset({"railway=turntable"})
#: the ring's radius (a locomotive turntable is some 20-30 m across)
RING_M = 12.0
#: symbolizers that draw a point's icon or a label, not a line or a fill
_POINT_SYMBOLIZERS = frozenset(
    {"MarkersSymbolizer", "PointSymbolizer", "TextSymbolizer", "ShieldSymbolizer"}
)
_M_PER_DEG = 111_195.0


@dataclass
class Legend:
    """What the legend drew, and what it dropped and why."""

    images: dict[str, Path] = field(default_factory=dict)
    """Entry key ("amenity=bank", category "symbol") -> its PNG, as ``category/key.png``."""
    dropped: dict[str, str] = field(default_factory=dict)
    """``category:key`` -> why ("draws nothing without a name or at this zoom")."""


def checked_png(png: bytes, size: int, key: str) -> bytes:
    """``png`` once it decodes whole as a ``size`` x ``size`` image; ``RenderStackError`` naming
    the entry ``key`` and what is wrong otherwise."""
    from cartoqa.stores.cache_files import BadCacheEntry, decoded_png

    try:
        decoded_png(png, size=(size, size))
    except BadCacheEntry as exc:
        raise RenderStackError(
            f"the legend image of {key} is not a whole {size}x{size} PNG ({exc}); "
            "nothing was written: check Mapnik's install (bash scripts/setup.sh main)"
        ) from None
    return png


def _cell(n: int) -> tuple[float, float]:
    """(lat, lon) of cell ``n``'s centre: 40 cells a row."""
    row, col = divmod(n, 40)
    lat = ORIGIN[0] + row * CELL_M / _M_PER_DEG
    lon = ORIGIN[1] + col * CELL_M / (_M_PER_DEG * math.cos(math.radians(ORIGIN[0])))
    return lat, lon


def _offset(lat: float, lon: float, dx_m: float, dy_m: float) -> tuple[float, float]:
    return lat + dy_m / _M_PER_DEG, lon + dx_m / (_M_PER_DEG * math.cos(math.radians(lat)))


def grid_osm(entries: Sequence[CatalogueEntry], path: Path) -> list[tuple[float, float]]:
    """Write the synthetic OSM file of ``entries``, one a cell (cell ``len(entries)`` left
    empty: the background); returns each cell's centre."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="cartoqa">']
    ways: list[str] = []
    node = 1
    centres = []
    for n, e in enumerate(entries):
        lat, lon = _cell(n)
        centres.append((lat, lon))
        (k, v), *_ = e.tags.items()
        tag = f'<tag k="{k}" v="{v}"/>'
        if e.category == "symbol":
            lines.append(
                f'  <node id="{node}" version="1" lat="{lat:.7f}" lon="{lon:.7f}">{tag}</node>'
            )
            node += 1
            continue
        half = 35.0 if e.category == "area" else 60.0
        closed = e.category == "area" or e.key in RINGS
        if e.category == "area":
            corners = [(-half, -half), (half, -half), (half, half), (-half, half), (-half, -half)]
        elif e.key in RINGS:  # 24 sides, the first corner again to close it
            corners = [
                (RING_M * math.cos(2 * math.pi * i / 24), RING_M * math.sin(2 * math.pi * i / 24))
                for i in range(25)
            ]
        else:
            corners = [(-half, 0.0), (-half / 3, 8.0), (half / 3, -8.0), (half, 0.0)]
        refs: list[int] = []
        for i, (dx, dy) in enumerate(corners):
            if closed and i == len(corners) - 1:
                refs.append(refs[0])
                break
            a, b = _offset(lat, lon, dx, dy)
            lines.append(f'  <node id="{node}" version="1" lat="{a:.7f}" lon="{b:.7f}"/>')
            refs.append(node)
            node += 1
        nds = "".join(f'<nd ref="{r}"/>' for r in refs)
        extra = '<tag k="area" v="yes"/>' if e.category == "area" else ""
        ways.append(f'  <way id="{len(ways) + 1}" version="1">{nds}{tag}{extra}</way>')
    centres.append(_cell(len(entries)))  # the empty cell
    path.write_text("\n".join([*lines, *ways, "</osm>"]) + "\n", encoding="utf-8")
    return centres


def point_and_label_layers(xml: str) -> frozenset[str]:
    """The layers of a style (its Mapnik XML) that draw only icons and labels: each of their
    rules' symbolizers is a marker, a point, a text or a shield."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml)
    styles = {st.get("name"): st for st in root.findall("Style")}
    out = set()
    for layer in root.findall("Layer"):
        kinds = set()
        for name in layer.findall("StyleName"):
            style = styles.get(name.text)
            for rule in style.findall("Rule") if style is not None else []:
                kinds |= {child.tag for child in rule if child.tag.endswith("Symbolizer")}
        if kinds and kinds <= _POINT_SYMBOLIZERS:
            out.add(layer.get("name") or "")
    return frozenset(out)


def render_legend(
    entries: Sequence[CatalogueEntry],
    folder: Path,
    *,
    carto_files: Path | None = None,
    cache: Path | None = None,
    cluster: object | None = None,
    dsn: str | None = None,
) -> Legend:
    """Draw every entry's legend image into ``folder`` (``<category>/<key>.png``);
    ``cluster`` is a ``maps.database.PostgresCluster`` to import the grid into (default:
    the private one), ``dsn`` a PostgreSQL server to use instead."""
    import mapnik

    from cartoqa.geodesy import to_web_mercator
    from maps import MapEngine
    from maps.projection import metres_per_pixel
    from maps.style import load_map

    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "legend-grid.osm"
    centres = grid_osm(entries, src)
    engine = MapEngine(src, carto_files=carto_files, cache=cache, cluster=cluster, dsn=dsn)  # type: ignore[arg-type]
    legend = Legend()
    maps: dict[str, object] = {}
    blank: dict[str, str] = {}

    def draw(category: str, lat: float, lon: float) -> bytes:
        zoom, scale = _DRAW[category]
        size = _SIZE[category]
        m = maps.get(category)
        if m is None:
            m = maps[category] = load_map(engine.style, engine.database.connection, size, size)
            if category != "symbol":  # no icon on an area, no label anywhere
                drop = point_and_label_layers(engine.style.xml_path.read_text(encoding="utf-8"))
                for i in reversed(range(len(m.layers))):  # type: ignore[attr-defined]
                    if m.layers[i].name in drop:  # type: ignore[attr-defined]
                        del m.layers[i]  # type: ignore[attr-defined]
        x, y = (float(c) for c in to_web_mercator(lat, lon))
        half = size / 2 * metres_per_pixel(zoom) / scale  # the window at the category's zoom
        m.zoom_to_box(mapnik.Box2d(x - half, y - half, x + half, y + half))  # type: ignore[attr-defined]
        image = mapnik.Image(size, size)
        mapnik.render(m, image, scale)
        return bytes(image.to_string("png32"))

    for category in _DRAW:
        blank[category] = hashlib.sha256(draw(category, *centres[-1])).hexdigest()
    for e, (lat, lon) in zip(entries, centres, strict=False):
        png = draw(e.category, lat, lon)
        if hashlib.sha256(png).hexdigest() == blank[e.category]:
            legend.dropped[f"{e.category}:{e.key}"] = "draws nothing without a name or at this zoom"
            continue
        out = folder / e.category / f"{e.key.replace('=', '-')}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(checked_png(png, _SIZE[e.category], f"{e.category}:{e.key}"))
        legend.images[f"{e.category}:{e.key}"] = out
    return legend
