"""The audit drawing of one sample: its map with the ground truth drawn over it.

``draw_sample(sample, image)`` returns a new image, three parts:

- a header strip (``HEADER_PX`` high) across the top: sample id, task, zoom, the
  view's blank share and the OpenStreetMap attribution;
- the map, unscaled, at (0, ``HEADER_PX``), with the truth drawn over it in thin,
  semi-transparent strokes so that the map stays readable;
- a panel (``PANEL_PX`` wide) to the map's right with the truth in words: nothing
  is written over the map but small numbers and tags.

One drawer per ground-truth kind:

- **route** (SRN): each leg's shape in its own colour (``LEG_COLOURS``), its number
  at its start, its label box outlined in the same colour, the route's nodes dotted,
  the markers circled; the panel lists "1. turn right · Rue X · 85 m · 102 px".
- **road_pair** (MML): the marker circled, each road's label box outlined and
  tagged with the road's name, the junction node.
- **number** (RLE): both markers circled, the length in metres and feet, the
  scale (ground metres per pixel at the view's zoom and latitude), the length in
  pixels it implies, the straight line between the markers, and a scale bar drawn
  at the map's scale.
- **features** (STMF presence, count and names; MTMF): the evidence of a map-feature
  truth (``DrawnFeature``): each feature's icon box outlined in its type's colour
  (``FEATURE_COLOURS``; solid where it counts, dashed and greyed where it is optional),
  its label box outlined thin in the same colour, a number tag beside it; the panel
  gives the truth in words ("Yes: 3 shown (1 optional)", "3 (up to 4 accepted: 1
  optional)", the names, MTMF's "restaurant 3 (+1): A, B, \"\"") and lists the numbered
  features with their name, OSM object, whether they count, their label and flags.
- any other kind: the map with the question and the truth written in the panel.

Datasets made before a field was recorded lack it: the drawing shows what is
there and says "not recorded" for the rest.  Map positions of points given in
latitude and longitude (markers, road-graph nodes) are computed from the
sample's ``center_lat``, ``center_lon`` and ``zoom`` exactly as the builders
place them (``maps.page.View.pixel``, Leaflet's rounding).

The function is pure: it reads the sample and the image, and returns a new image;
the review tool shows the same drawing.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from PIL import Image, ImageDraw, ImageFont, UnidentifiedImageError

from cartoqa.errors import DatasetError, MapDataError
from cartoqa.geodesy import distance_km
from cartoqa.records import (
    OSM_ATTRIBUTION,
    BooleanTruth,
    CountTruth,
    DrawnFeature,
    FeatureTableTruth,
    LabelBox,
    NamesTruth,
    NumberTruth,
    RoadPairTruth,
    RouteTruth,
    Sample,
)
from cartoqa.records.feature_types import FEATURE_TYPES
from maps.page import HEIGHT_PX, PIN_BOX_PX, WIDTH_PX, View
from maps.projection import metres_per_pixel

__all__ = [
    "FEATURE_COLOURS",
    "HEADER_PX",
    "LEG_COLOURS",
    "MARKER_RGB",
    "PANEL_PX",
    "ROAD_COLOURS",
    "MarkerSpot",
    "describe_sample",
    "draw_sample",
    "parse_markers",
]

#: height of the header strip above the map
HEADER_PX = 30
#: width of the text panel to the map's right
PANEL_PX = 460
#: one colour per route leg, in order (cycled past the tenth); none is the blue of
#: the markers and the RLE path
LEG_COLOURS: tuple[tuple[int, int, int], ...] = (
    (230, 0, 126),  # magenta
    (255, 120, 0),  # orange
    (0, 160, 70),  # green
    (125, 40, 190),  # purple
    (0, 175, 215),  # cyan
    (140, 70, 20),  # brown
    (205, 0, 0),  # red
    (40, 45, 70),  # slate
    (130, 130, 0),  # olive
    (255, 70, 160),  # pink
)
#: one colour per map-feature type in a drawing, given in the order the types come (the
#: asked type first; cycled past the tenth)
FEATURE_COLOURS: tuple[tuple[int, int, int], ...] = LEG_COLOURS
#: the two roads of an MML question, road_1 then road_2
ROAD_COLOURS: tuple[tuple[int, int, int], ...] = ((230, 0, 126), (255, 120, 0))
#: the circle drawn round a marker, by its colour
MARKER_RGB: dict[str, tuple[int, int, int]] = {"blue": (20, 90, 255), "red": (215, 20, 20)}

_LINE_ALPHA = 190  # route legs: opaque enough to follow, thin enough to read the map under
_LINE_PX = 4
_BOX_PX = 2
_INK = (25, 25, 25)
_GREY = (110, 110, 110)
_HEADER_BG = (34, 34, 34)
_PANEL_BG = (250, 250, 248)
_NOT_RECORDED = "not recorded"
_QUESTION_LINES = 30  # the question is shown whole up to this many panel lines (then cut)
_MAX_LISTED = 40  # names, features, steps listed in the panel; then "and K more"
_LINE_WRAPS = 30  # one entry of the panel wraps to at most this many lines (then cut)
_LINE_CHARS = 4000  # and is cut to this many characters before it is wrapped
_MAX_PANEL_PX = 3000  # the panel's height: the lines past it are counted, not drawn


@dataclass(frozen=True)
class MarkerSpot:
    """A marker as the sample's metadata records it: its colour and the point it marks."""

    colour: str
    lat: float
    lon: float


def parse_markers(text: str) -> list[MarkerSpot]:
    """Read the ``markers`` metadata ("blue@43.7392,7.4236;red@43.7372,7.4262").

    Raises ``ValueError`` naming the part that is not "colour@lat,lon"."""
    spots = []
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        colour, at, where = part.partition("@")
        lat_text, comma, lon_text = where.partition(",")
        try:
            if not (at and comma and colour.strip()):
                raise ValueError
            spots.append(MarkerSpot(colour.strip(), float(lat_text), float(lon_text)))
        except ValueError:
            raise ValueError(f"marker {part!r} is not 'colour@lat,lon'") from None
    return spots


# ---------------------------------------------------------------- the canvas


@dataclass
class _Line:
    """One entry of the panel: text, its colour, an optional colour swatch before it."""

    text: str
    colour: tuple[int, int, int] = _INK
    swatch: tuple[int, int, int] | None = None
    bold: bool = False
    size: int = 14
    gap: int = 0
    """Extra space above the entry."""


@dataclass
class _Figure:
    """What a drawer makes: strokes on the map (drawn in order) and the panel's lines."""

    lines: list[_Line] = field(default_factory=list)
    strokes: list[Callable[[ImageDraw.ImageDraw], None]] = field(default_factory=list)
    labels: list[Callable[[ImageDraw.ImageDraw], None]] = field(default_factory=list)
    """Opaque marks drawn last (numbers, tags), above the semi-transparent strokes."""
    panel_art: list[Callable[[ImageDraw.ImageDraw, int, int], int]] = field(default_factory=list)
    """Drawings in the panel after the lines: (draw, x, y) -> height used."""
    taken: list[tuple[float, float, float, float]] = field(default_factory=list)
    """Boxes on the map a tag should not cover (marker rings, tags already placed)."""


@functools.lru_cache(maxsize=16)
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu Sans where the system has it (it covers the Latin, Greek and Cyrillic names
    of OSM data), else Pillow's own font."""
    for name in ("DejaVuSans-Bold.ttf",) * bold + ("DejaVuSans.ttf",):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def _wrap(text: str, font, width: float, draw: ImageDraw.ImageDraw) -> list[str]:
    """``text`` cut into lines no wider than ``width`` (a word wider than that is cut)."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            trial = f"{line} {word}" if line else word
            if draw.textlength(trial, font=font) <= width:
                line = trial
                continue
            if line:
                out.append(line)
            while draw.textlength(word, font=font) > width and len(word) > 1:
                cut = len(word)
                while cut > 1 and draw.textlength(word[:cut], font=font) > width:
                    cut -= 1
                out.append(word[:cut])
                word = word[cut:]
            line = word
        out.append(line)
    return out


def _open(image: Image.Image | Path | str) -> Image.Image:
    if isinstance(image, Image.Image):
        return image.convert("RGBA")
    path = Path(image)
    try:
        with Image.open(path) as im:
            return im.convert("RGBA")
    except FileNotFoundError:
        raise DatasetError(f"image {path} does not exist; check the dataset folder") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise DatasetError(
            f"image {path} cannot be read as an image ({exc}); build the dataset again"
        ) from None


def _meta(sample: Sample, key: str):
    return getattr(sample.metadata, key, None)


def _view(sample: Sample, size: tuple[int, int]) -> View | None:
    """The view the map was made from, or None where its centre or zoom is not recorded."""
    lat, lon, zoom = _meta(sample, "center_lat"), _meta(sample, "center_lon"), sample.metadata.zoom
    if lat is None or lon is None or zoom is None:
        return None
    try:
        return View((float(lat), float(lon)), int(zoom), width=size[0], height=size[1])
    except MapDataError:
        return None


def _markers(sample: Sample) -> tuple[list[MarkerSpot], str | None]:
    """The markers recorded in the metadata, and a note where they are missing or unreadable."""
    text = _meta(sample, "markers")
    if not text:
        return [], f"markers: {_NOT_RECORDED}"
    try:
        return parse_markers(str(text)), None
    except ValueError as exc:
        return [], f"markers: unreadable ({exc})"


def _km_to_m(km) -> float:
    return float(km) * 1000.0


def _fmt_m(m: float) -> str:
    return f"{m:.1f} m" if m < 100 else f"{m:.0f} m"


# ---------------------------------------------------------------- marks on the map


def _circle_marker(fig: _Figure, colour: str, x: float, y: float) -> None:
    """A ring round the marker's pin (it stands above the point it marks) and a cross on the
    point itself."""
    rgb = MARKER_RGB.get(colour, _INK)
    left, top, right, bottom = PIN_BOX_PX
    cx, cy = x + (left + right) / 2, y + (top + bottom) / 2
    r = max(right - left, bottom - top) / 2 + 8

    def ring(d: ImageDraw.ImageDraw) -> None:
        d.ellipse((cx - r - 1, cy - r - 1, cx + r + 1, cy + r + 1), outline=(255, 255, 255, 200))
        d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=(*rgb, 230), width=3)

    def cross(d: ImageDraw.ImageDraw) -> None:
        d.line((x - 6, y, x + 6, y), fill=(*_INK, 255), width=1)
        d.line((x, y - 6, x, y + 6), fill=(*_INK, 255), width=1)

    fig.taken.append((cx - r - 2, cy - r - 2, cx + r + 2, cy + r + 2))
    fig.strokes.append(ring)
    fig.labels.append(cross)


_TAG_H = 17


def _tag(
    d: ImageDraw.ImageDraw,
    text: str,
    beside: tuple[float, float, float, float],
    rgb,
    taken: list[tuple[float, float, float, float]],
    *,
    size: int = 12,
) -> None:
    """A small filled tag with white text next to the box ``beside``: above it, else below,
    left or right, the first place inside the map that covers no box in ``taken`` (above
    where none is free); the tag's box is added to ``taken``.  ``size``: the text's."""
    font = _font(size, bold=True)
    th = _TAG_H + size - 12
    w = d.textlength(text, font=font) + 8
    width, height = d.im.size
    x0, y0, x1, y1 = beside
    spots = [
        (x0, y0 - th - 3),
        (x0, y1 + 3),
        (x0 - w - 3, y0),
        (x1 + 3, y0),
        (x1 - w, y0 - th - 3),
        (x1 - w, y1 + 3),
    ]

    def fits(x: float, y: float) -> bool:
        inside = x >= 0 and x + w <= width and y >= 0 and y + th <= height
        return inside and not any(
            x < b[2] and b[0] < x + w and y < b[3] and b[1] < y + th for b in taken
        )

    x, y = next((p for p in spots if fits(*p)), spots[0])
    x = max(0.0, min(x, width - w))  # kept inside the map: a tag cut by its edge says nothing
    y = max(0.0, min(y, height - th))
    d.rounded_rectangle((x, y, x + w, y + th), radius=4, fill=(*rgb, 235))
    d.text((x + 4, y + 2 * size / 12), text, font=font, fill=(255, 255, 255, 255))
    taken.append((x, y, x + w, y + th))


def _badge(d: ImageDraw.ImageDraw, text: str, x: float, y: float, rgb) -> None:
    """A round badge with a number, centred on (x, y)."""
    r = 9
    d.ellipse((x - r, y - r, x + r, y + r), fill=(*rgb, 255), outline=(255, 255, 255, 255))
    d.text((x, y), text, font=_font(12, bold=True), fill=(255, 255, 255, 255), anchor="mm")


def _along(points: Sequence[tuple[float, float]], dist: float) -> tuple[float, float]:
    """The point ``dist`` pixels along a polyline (its end if it is shorter)."""
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        seg = math.hypot(x1 - x0, y1 - y0)
        if seg >= dist and seg > 0:
            t = dist / seg
            return x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        dist -= seg
    return points[-1]


def _polyline_px(points: Sequence[tuple[float, float]]) -> float:
    return sum(math.hypot(x1 - x0, y1 - y0) for (x0, y0), (x1, y1) in itertools.pairwise(points))


def _box(fig: _Figure, label: LabelBox, rgb, tag: str) -> None:
    """A label box outlined in ``rgb`` with a tag beside it (above it where there is room)."""
    x0, y0, x1, y1 = label.box

    def outline(d: ImageDraw.ImageDraw) -> None:
        d.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), outline=(*rgb, 255), width=_BOX_PX)

    def name(d: ImageDraw.ImageDraw) -> None:
        _tag(d, tag, (x0 - 1, y0 - 1, x1 + 1, y1 + 1), rgb, fig.taken)

    fig.strokes.append(outline)
    fig.labels.append(name)


# ---------------------------------------------------------------- drawers


def _draw_route(sample: Sample, truth: RouteTruth, view: View | None, fig: _Figure) -> None:
    fig.lines.append(_Line("Route (SRN)", bold=True, size=17))
    length = _meta(sample, "length_m")
    fig.lines.append(
        _Line(
            f"{len(truth.legs) or (len(truth.steps) - 2) // 2} steps"
            + (f" · {_fmt_m(float(length))}" if length is not None else "")
            + (f" · {len(truth.nodes)} road-graph nodes" if truth.nodes else ""),
            colour=_GREY,
        )
    )
    if truth.legs:
        for i, leg in enumerate(truth.legs):
            rgb = LEG_COLOURS[i % len(LEG_COLOURS)]
            fig.lines.append(
                _Line(
                    f"{i + 1}. {leg.action} · {leg.road} · {_fmt_m(leg.length_m)} · "
                    f"{leg.length_px:.0f} px",
                    swatch=rgb,
                    gap=4,
                )
            )
            if leg.label is not None:
                x0, y0, x1, y1 = leg.label.box
                fig.lines.append(
                    _Line(
                        f"label “{leg.label.road}” (way {leg.label.osm_id}) at "
                        f"{x0:.0f},{y0:.0f}–{x1:.0f},{y1:.0f}",
                        colour=_GREY,
                        size=12,
                    )
                )
                _box(fig, leg.label, rgb, str(i + 1))
            else:
                fig.lines.append(_Line(f"label: {_NOT_RECORDED}", colour=_GREY, size=12))
            if len(leg.points_px) >= 2:
                pts = [(float(x), float(y)) for x, y in leg.points_px]

                def stroke(d: ImageDraw.ImageDraw, pts=pts, rgb=rgb) -> None:
                    d.line(pts, fill=(*rgb, _LINE_ALPHA), width=_LINE_PX, joint="curve")

                def number(d: ImageDraw.ImageDraw, pts=pts, rgb=rgb, n=i + 1) -> None:
                    x, y = _along(pts, min(18.0, _polyline_px(pts) / 2))
                    _badge(d, str(n), x, y, rgb)

                fig.strokes.append(stroke)
                fig.labels.append(number)
            else:
                fig.lines.append(_Line(f"shape on the image: {_NOT_RECORDED}", _GREY, size=12))
    else:
        pairs = list(zip(truth.steps[1:-1:2], truth.steps[2:-1:2], strict=False))
        if view is not None and truth.network is not None:
            fig.lines.append(
                _Line(
                    f"legs: {_NOT_RECORDED} (a corrected route): each step's road is drawn "
                    "whole, in the step's colour",
                    colour=_GREY,
                    gap=4,
                )
            )
            _route_roads(pairs, truth, view, fig)
        else:
            fig.lines.append(_Line(f"legs: {_NOT_RECORDED} (steps only)", colour=_GREY, gap=4))
        for i, (action, road) in enumerate(pairs[:_MAX_LISTED]):
            fig.lines.append(_Line(f"{i + 1}. {action} · {road}", swatch=LEG_COLOURS[i % 10]))
        if len(pairs) > _MAX_LISTED:
            fig.lines.append(_more(len(pairs) - _MAX_LISTED, "steps"))
        if truth.network is not None:
            from .checks import route_problem

            why = route_problem(truth.model_dump(mode="json"))
            fig.lines.append(
                _Line(
                    "connected on the map's roads"
                    if why is None
                    else f"NOT connected on the map's roads: {why}",
                    colour=_GREY if why is None else _WARN,
                    bold=why is not None,
                    size=13,
                    gap=4,
                )
            )
    _route_nodes(truth, view, fig)
    _route_markers(sample, truth, view, fig)
    net = truth.network
    fig.lines.append(
        _Line(
            f"network: {len(net.nodes)} nodes, {len(net.roads)} roads, "
            f"{len(net.junctions)} junction pairs"
            if net is not None
            else f"network: {_NOT_RECORDED} (connectivity cannot be scored)",
            colour=_GREY,
            gap=6,
        )
    )


def _route_roads(pairs: list[tuple[str, str]], truth: RouteTruth, view: View, fig: _Figure) -> None:
    """A route without legs (a correction): each step's road, all its stretches in the
    network, in the step's colour, its number where the route comes onto it."""
    net = truth.network
    assert net is not None
    names = {n.casefold(): n for n in net.roads}
    previous: str | None = None
    for i, (_action, road) in enumerate(pairs[:_MAX_LISTED]):
        rgb = LEG_COLOURS[i % len(LEG_COLOURS)]
        real = names.get(road.strip().casefold())
        if real is None:
            fig.lines.append(_Line(f"{i + 1}: no road {road!r} on the map", _WARN, size=12))
            previous = None
            continue
        segments = []
        for e in net.roads[real]:
            a, b = net.nodes.get(str(e.u)), net.nodes.get(str(e.v))
            if a is not None and b is not None:
                segments.append((view.pixel(*a), view.pixel(*b)))
        if previous is None:
            start = net.nodes.get(str(net.origin)) if i == 0 else None
        else:
            met = net.junctions.get("|".join(sorted((previous, real))), [])
            start = net.nodes.get(str(met[0])) if met else None

        def stroke(d: ImageDraw.ImageDraw, segments=segments, rgb=rgb) -> None:
            for a, b in segments:
                d.line((a, b), fill=(*rgb, _LINE_ALPHA), width=_LINE_PX)

        fig.strokes.append(stroke)
        if start is not None:
            x, y = view.pixel(*start)

            def number(d: ImageDraw.ImageDraw, x=x, y=y, rgb=rgb, n=i + 1) -> None:
                _badge(d, str(n), x + 8, y - 8, rgb)

            fig.labels.append(number)
        previous = real


def _route_nodes(truth: RouteTruth, view: View | None, fig: _Figure) -> None:
    """Dots on the route's road-graph nodes (from the network's coordinates), else on the legs'
    first points."""
    spots: list[tuple[float, float, bool]] = []  # x, y, is a leg's first node
    starts = {leg.nodes[0] for leg in truth.legs if leg.nodes}
    if view is not None and truth.network is not None and truth.nodes:
        for node in truth.nodes:
            at = truth.network.nodes.get(str(node))
            if at is not None:
                x, y = view.pixel(*at)
                spots.append((x, y, node in starts))
    else:
        spots = [(*leg.points_px[0], True) for leg in truth.legs if leg.points_px]

    def dots(d: ImageDraw.ImageDraw) -> None:
        for x, y, start in spots:
            r = 4 if start else 2.5
            d.ellipse((x - r, y - r, x + r, y + r), fill=(255, 255, 255, 255), outline=(*_INK, 255))

    fig.strokes.append(dots)


def _route_markers(sample: Sample, truth: RouteTruth, view: View | None, fig: _Figure) -> None:
    markers, note = _markers(sample)
    if not markers and view is not None and truth.network is not None:
        net = truth.network
        for colour, node in (("blue", net.origin), ("red", net.destination)):
            at = net.nodes.get(str(node))
            if at is not None:
                markers.append(MarkerSpot(colour, *at))
        note = f"{note or 'markers: none listed'}; drawn at the network's origin and destination"
    _place_markers(markers, view, fig, note)


def _place_markers(
    markers: list[MarkerSpot], view: View | None, fig: _Figure, note: str | None
) -> list[tuple[float, float]]:
    """Circle each marker on the map and list it; returns their pixels."""
    if note:
        fig.lines.append(_Line(note, colour=_GREY, size=12, gap=6))
    if markers and view is None:
        fig.lines.append(
            _Line(f"view centre {_NOT_RECORDED}: markers listed, not drawn", colour=_GREY, size=12)
        )
    placed = []
    for m in markers:
        where = f"{m.lat:.6f}, {m.lon:.6f}"
        if view is not None:
            x, y = view.pixel(m.lat, m.lon)
            placed.append((x, y))
            where += f" → pixel {x:.0f}, {y:.0f}"
            _circle_marker(fig, m.colour, x, y)
        fig.lines.append(
            _Line(f"{m.colour} marker: {where}", size=12, swatch=MARKER_RGB.get(m.colour, _INK))
        )
    return placed


def _draw_road_pair(sample: Sample, truth: RoadPairTruth, view: View | None, fig: _Figure) -> None:
    fig.lines.append(_Line("Road pair (MML)", bold=True, size=17))
    colour = sample.metadata.colour
    fig.lines.append(
        _Line(f"the {colour or '(colour ' + _NOT_RECORDED + ')'} marker's junction", _GREY)
    )
    by_road: dict[str, list[LabelBox]] = {}
    for label in truth.labels:
        by_road.setdefault(label.road, []).append(label)
    for i, road in enumerate((truth.road_1, truth.road_2)):
        rgb = ROAD_COLOURS[i]
        fig.lines.append(_Line(f"road {i + 1}: {road}", swatch=rgb, bold=True, gap=4))
        boxes = by_road.get(road, [])
        if not truth.labels:
            fig.lines.append(_Line(f"label: {_NOT_RECORDED}", colour=_GREY, size=12))
        elif not boxes:
            fig.lines.append(
                _Line("label: none recorded for this road", colour=(190, 0, 0), size=12)
            )
        for label in boxes:
            x0, y0, x1, y1 = label.box
            fig.lines.append(
                _Line(
                    f"label (way {label.osm_id}) at {x0:.0f},{y0:.0f}–{x1:.0f},{y1:.0f}",
                    colour=_GREY,
                    size=12,
                )
            )
            _box(fig, label, rgb, road)
    others = [lb for lb in truth.labels if lb.road not in (truth.road_1, truth.road_2)]
    for label in others:
        fig.lines.append(
            _Line(
                f"label of another road: “{label.road}” (way {label.osm_id})", (190, 0, 0), size=12
            )
        )
        _box(fig, label, _GREY, label.road)
    fig.lines.append(
        _Line(
            f"junction node: {truth.junction if truth.junction is not None else _NOT_RECORDED}",
            colour=_GREY,
            gap=6,
        )
    )
    markers, note = _markers(sample)
    _place_markers(markers, view, fig, note)


def _draw_number(sample: Sample, truth: NumberTruth, view: View | None, fig: _Figure) -> None:
    fig.lines.append(_Line(f"Length ({sample.task.upper()})", bold=True, size=17))
    metres = _metres(truth)
    if metres is not None:
        feet = truth.value if truth.unit == "ft" else truth.equivalents.get("ft", metres / 0.3048)
        fig.lines.append(
            _Line(
                f"truth: {metres:.2f} m = {feet:.2f} ft (asked in {truth.unit})",
                bold=True,
                size=15,
            )
        )
    else:
        fig.lines.append(
            _Line(f"truth: {truth.value:g} {truth.unit or ''}".rstrip(), bold=True, size=15)
        )
    markers, note = _markers(sample)
    lat = _meta(sample, "center_lat")
    if lat is None and markers:
        lat = markers[0].lat
    zoom = sample.metadata.zoom
    if zoom is not None and lat is not None:
        mpp = metres_per_pixel(zoom) * math.cos(math.radians(float(lat)))
        fig.lines.append(
            _Line(f"scale at zoom {zoom}, latitude {float(lat):.4f}: {mpp:.3f} m per pixel", gap=6)
        )
        if metres is not None:
            fig.lines.append(_Line(f"the truth on the image: {metres / mpp:.0f} px of path"))
        fig.panel_art.append(functools.partial(_scale_bar, mpp=mpp))
    else:
        fig.lines.append(_Line(f"scale: {_NOT_RECORDED} (zoom or latitude)", _GREY, gap=6))
    placed = _place_markers(markers, view, fig, note)
    if len(markers) == 2:
        a, b = markers
        straight = _km_to_m(distance_km(a.lat, a.lon, b.lat, b.lon))
        text = f"straight line between the markers: {_fmt_m(straight)}"
        if len(placed) == 2:
            text += f" ({math.dist(*placed):.0f} px)"
        fig.lines.append(_Line(text))
        if metres is not None and straight > 0:
            fig.lines.append(
                _Line(f"path / straight line: {metres / straight:.2f}", _GREY, size=12)
            )


_METRES_PER_UNIT = {"m": 1.0, "km": 1000.0, "ft": 0.3048, "mi": 1609.344}


def _metres(truth: NumberTruth) -> float | None:
    """The truth in metres, from its value or an equivalent; None for a number that is no
    length."""
    for unit, value in ((truth.unit, truth.value), *truth.equivalents.items()):
        if unit in _METRES_PER_UNIT:
            return value * _METRES_PER_UNIT[unit]
    return None


def _scale_bar(d: ImageDraw.ImageDraw, x: int, y: int, *, mpp: float) -> int:
    """A bar of a round length drawn at the map's scale, so it can be laid against the path."""
    steps = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)
    metres = max((s for s in steps if s / mpp <= PANEL_PX - 60), default=steps[0])
    px = metres / mpp
    y0 = y + 8
    d.line((x, y0 + 10, x + px, y0 + 10), fill=(*_INK, 255), width=3)
    for tick in (x, x + px / 2, x + px):
        d.line((tick, y0 + 4, tick, y0 + 16), fill=(*_INK, 255), width=2)
    d.text(
        (x, y0 + 20),
        f"{metres} m at the map's scale ({px:.0f} px)",
        font=_font(12),
        fill=(*_INK, 255),
    )
    return 44


_OPTIONAL_GREY = (150, 150, 150)
_WARN = (190, 0, 0)
_FEATURE_TASKS = {
    "boolean": "Feature presence",
    "count": "Feature count",
    "names": "Feature names",
    "feature_table": "Features of every type",
}
_FeatureTruth = BooleanTruth | CountTruth | NamesTruth | FeatureTableTruth


def _has_features(truth: object) -> TypeGuard[_FeatureTruth]:
    """Whether ``truth`` is a map-feature truth: it carries evidence, asks about a feature
    type, or is a count or table of features."""
    if isinstance(truth, CountTruth | FeatureTableTruth):
        return True
    if isinstance(truth, BooleanTruth | NamesTruth):
        return bool(truth.features) or truth.feature_type is not None
    return False


def _greyed(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """``rgb`` washed towards grey: the colour of an optional feature of its type."""
    r, g, b = (round(0.4 * c + 0.6 * grey) for c, grey in zip(rgb, _OPTIONAL_GREY, strict=True))
    return r, g, b


def _type_text(key: str) -> str:
    """A type's key, with the question's words for it where they differ."""
    known = FEATURE_TYPES.get(key)
    if known is None or known.label == key.replace("_", " "):
        return key
    return f"{key} (“{known.label}”)"


def _name_text(name: str) -> str:
    return name if name else '""'


def _dashed_rect(
    d: ImageDraw.ImageDraw, box: tuple[float, float, float, float], fill, width: int = 1
) -> None:
    """A rectangle outlined in dashes (4 px on, 3 off)."""
    x0, y0, x1, y1 = box
    for (ax, ay), (bx, by) in (
        ((x0, y0), (x1, y0)),
        ((x1, y0), (x1, y1)),
        ((x1, y1), (x0, y1)),
        ((x0, y1), (x0, y0)),
    ):
        length = math.hypot(bx - ax, by - ay)
        t = 0.0
        while t < length:
            e = min(t + 4, length)
            d.line(
                (
                    ax + (bx - ax) * t / length,
                    ay + (by - ay) * t / length,
                    ax + (bx - ax) * e / length,
                    ay + (by - ay) * e / length,
                ),
                fill=fill,
                width=width,
            )
            t += 7


def _feature_line(n: int, f: DrawnFeature) -> str:
    """ "1. restaurant · Le Vistamar · node/123 · shown · label shown · flags: icon_cut"."""
    parts = [f"{n}. {f.type}", _name_text(f.name), f.osm]
    parts.append("shown" if f.counted == "yes" else "optional")
    said = f" “{f.label}”" if f.label is not None and f.label != f.name else ""
    parts.append(
        {"yes": f"label{said} shown", "optional": f"label{said} optional"}.get(
            f.label_counted, "no label"
        )
    )
    if f.icon is None and f.label_box is None:
        parts.append("no box recorded")
    elif f.icon is None:
        parts.append("no icon box")
    if f.flags:
        parts.append("flags: " + ", ".join(f.flags))
    return " · ".join(parts)


def _tally(features: Sequence[DrawnFeature], key: str) -> tuple[int, int]:
    """The evidence's (counted, optional) features of type ``key``."""
    mine = [f for f in features if f.type == key]
    return sum(f.counted == "yes" for f in mine), sum(f.counted == "optional" for f in mine)


def _mark_feature(fig: _Figure, n: int, f: DrawnFeature, rgb: tuple[int, int, int]) -> None:
    """Outline ``f``'s icon box (solid where it counts, dashed and greyed where optional) and
    its label box (thin), and put its number beside the icon (else beside the label)."""
    counted = f.counted == "yes"
    colour = rgb if counted else _greyed(rgb)
    icon, label = f.icon, f.label_box

    def outline(d: ImageDraw.ImageDraw) -> None:
        if icon is not None:
            x0, y0, x1, y1 = icon
            ring = (x0 - 2, y0 - 2, x1 + 2, y1 + 2)
            if counted:
                d.rectangle(ring, outline=(*colour, 225), width=_BOX_PX)
            else:
                _dashed_rect(d, ring, (*colour, 225), width=_BOX_PX)
        if label is not None:
            x0, y0, x1, y1 = label
            ring = (x0 - 1, y0 - 1, x1 + 1, y1 + 1)
            if f.label_counted == "yes":
                d.rectangle(ring, outline=(*colour, 200), width=1)
            else:
                _dashed_rect(d, ring, (*colour, 200), width=1)

    beside = icon if icon is not None else label
    for b in (icon, label):
        if b is not None:
            fig.taken.append((b[0] - 2, b[1] - 2, b[2] + 2, b[3] + 2))
    fig.strokes.append(outline)
    if beside is not None:
        x0, y0, x1, y1 = beside
        spot = (x0 - 2, y0 - 2, x1 + 2, y1 + 2)

        def number(d: ImageDraw.ImageDraw) -> None:
            _tag(d, str(n), spot, colour, fig.taken, size=10)

        fig.labels.append(number)


def _draw_features(sample: Sample, truth: _FeatureTruth, fig: _Figure) -> None:
    """A map-feature truth (STMF presence, count, names; MTMF) and its evidence."""
    title = _FEATURE_TASKS[truth.kind]
    fig.lines.append(_Line(f"{title} ({sample.task})", bold=True, size=17))
    if isinstance(truth, FeatureTableTruth):
        evidence = list(truth.evidence)
        shown = {k: v for k, v in truth.features.items() if v.count > 0 or v.optional_count > 0}
        order = list(shown)
    else:
        evidence = list(truth.features)
        order = [truth.feature_type] if truth.feature_type is not None else []
    order += [f.type for f in evidence if f.type not in order]
    colours = {k: FEATURE_COLOURS[i % len(FEATURE_COLOURS)] for i, k in enumerate(order)}
    if isinstance(truth, FeatureTableTruth):
        # grouped by type, in the table's order, each group in the evidence's order
        evidence.sort(key=lambda f: order.index(f.type))
    counted = sum(f.counted == "yes" for f in evidence)
    optional = len(evidence) - counted

    if not isinstance(truth, FeatureTableTruth):
        key = truth.feature_type
        fig.lines.append(
            _Line(
                f"type: {_type_text(key) if key is not None else _NOT_RECORDED}",
                colour=_GREY,
                swatch=colours.get(key) if key is not None else None,
            )
        )
    if isinstance(truth, BooleanTruth):
        yes, maybe = _tally(evidence, truth.feature_type) if truth.feature_type else (0, 0)
        text = "Yes" if truth.value else "No"
        if evidence and truth.value:
            text += f": {yes} shown" + (f" ({maybe} optional)" if maybe else "")
        elif evidence and maybe:
            text += f" ({maybe} optional shown)"
        fig.lines.append(_Line(text, gap=4, bold=True, size=15))
        if evidence and truth.value != (yes > 0):
            fig.lines.append(
                _Line(f"evidence: {yes} counted, which says otherwise", _WARN, size=12)
            )
    elif isinstance(truth, CountTruth):
        text = str(truth.value)
        if truth.optional:
            text += f" (up to {truth.value + truth.optional} accepted: {truth.optional} optional)"
        fig.lines.append(_Line(text, gap=4, bold=True, size=15))
        got = _tally(evidence, truth.feature_type)
        if evidence and got != (truth.value, truth.optional):
            fig.lines.append(
                _Line(
                    f"evidence: {got[0]} counted, {got[1]} optional: not the truth's",
                    _WARN,
                    size=12,
                )
            )
    elif isinstance(truth, NamesTruth):
        fig.lines.append(
            _Line(
                f"names: {len(truth.names)} required"
                + (f", {len(truth.optional)} optional" if truth.optional else ""),
                gap=4,
                bold=True,
                size=15,
            )
        )
        for name in truth.names[:_MAX_LISTED]:
            fig.lines.append(_Line(_name_text(name), size=13))
        if len(truth.names) > _MAX_LISTED:
            fig.lines.append(_more(len(truth.names) - _MAX_LISTED, "names"))
        for name in truth.optional[:_MAX_LISTED]:
            fig.lines.append(_Line(f"{_name_text(name)} (optional)", colour=_GREY, size=13))
        if len(truth.optional) > _MAX_LISTED:
            fig.lines.append(_more(len(truth.optional) - _MAX_LISTED, "optional names"))
        if not truth.names and not truth.optional:
            fig.lines.append(_Line("(no names)", colour=_GREY, size=13))
    else:
        total = sum(v.count for v in truth.features.values())
        extra = sum(v.optional_count for v in truth.features.values())
        fig.lines.append(
            _Line(
                f"{total} features shown" + (f" (+{extra} optional)" if extra else ""),
                gap=4,
                bold=True,
                size=15,
            )
        )
        for k, v in list(shown.items())[:_MAX_LISTED]:
            names = [_name_text(n) for n in v.names[:_MAX_LISTED]]
            names += [f"{_name_text(n)} (optional)" for n in v.optional_names[:_MAX_LISTED]]
            hidden = max(0, len(v.names) - _MAX_LISTED) + max(
                0, len(v.optional_names) - _MAX_LISTED
            )
            if hidden:
                names.append(f"and {hidden:,} more")
            text = f"{k} {v.count}" + (f" (+{v.optional_count})" if v.optional_count else "")
            fig.lines.append(
                _Line(text + (": " + ", ".join(names) if names else ""), swatch=colours[k])
            )
            got = _tally(evidence, k)
            if evidence and got != (v.count, v.optional_count):
                fig.lines.append(
                    _Line(
                        f"evidence: {got[0]} counted, {got[1]} optional: not the table's",
                        _WARN,
                        size=12,
                    )
                )
        if len(shown) > _MAX_LISTED:
            fig.lines.append(_more(len(shown) - _MAX_LISTED, "types shown"))
        rest = len(truth.features) - len(shown)
        if rest:
            fig.lines.append(_Line(f"{rest} other types: 0", colour=_GREY, size=12))
        if not truth.features:
            fig.lines.append(_Line("(no types in the table)", colour=_GREY, size=12))

    if not evidence:
        fig.lines.append(_Line("evidence: none recorded", colour=_GREY, gap=6))
        return
    fig.lines.append(
        _Line(
            f"evidence: {len(evidence)} features ({counted} counted, {optional} optional)",
            colour=_GREY,
            gap=8,
        )
    )
    for n, f in enumerate(evidence, start=1):
        rgb = colours[f.type]
        if n <= _MAX_LISTED:
            fig.lines.append(
                _Line(
                    _feature_line(n, f),
                    colour=_INK if f.counted == "yes" else _GREY,
                    swatch=rgb if f.counted == "yes" else _greyed(rgb),
                    size=12,
                    gap=2,
                )
            )
        _mark_feature(fig, n, f, rgb)
    if len(evidence) > _MAX_LISTED:
        fig.lines.append(_more(len(evidence) - _MAX_LISTED, "features (marked on the map)"))


def _more(n: int, what: str) -> _Line:
    return _Line(f"… and {n:,} more {what}", colour=_GREY, size=12)


def _draw_other(sample: Sample, fig: _Figure) -> None:
    truth = sample.ground_truth
    fig.lines.append(_Line(f"Truth ({truth.kind})", bold=True, size=17))
    body = truth.model_dump(mode="json", exclude={"kind"})
    text = json.dumps(body, ensure_ascii=False, indent=None)
    if len(text) > 1500:
        text = text[:1500] + " …"
    fig.lines.append(_Line(text, size=13))


# ---------------------------------------------------------------- the whole


def draw_sample(sample: Sample, image: Image.Image | Path | str) -> Image.Image:
    """The audit image of ``sample`` on its map ``image`` (a PIL image or a file).

    The result is RGB: a header strip ``HEADER_PX`` high, the map unscaled at
    (0, ``HEADER_PX``) with the truth drawn over it, and a ``PANEL_PX`` wide panel to its
    right (taller than the map where its text needs it).  ``image`` is not changed.
    Raises ``DatasetError`` when the image file is missing or unreadable."""
    base = _open(image)
    fig = _figure(sample, base.size)

    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    d = ImageDraw.Draw(overlay)
    for stroke in fig.strokes:
        stroke(d)
    marks = Image.new("RGBA", base.size, (0, 0, 0, 0))
    dm = ImageDraw.Draw(marks)
    for label in fig.labels:
        label(dm)
    drawn = Image.alpha_composite(Image.alpha_composite(base, overlay), marks).convert("RGB")

    lines = [*fig.lines, *_footer(sample)]
    scratch = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    laid = _lay_out(lines, scratch)
    total = sum(h for *_, h in laid)
    if total > _MAX_PANEL_PX:  # the lines past the cap are counted, not drawn
        kept, used = [], 0
        for entry in laid:
            if used + entry[2] > _MAX_PANEL_PX - 40:
                break
            kept.append(entry)
            used += entry[2]
        note = _Line(
            f"… and {len(laid) - len(kept):,} more lines: the whole truth is on the review page",
            colour=_GREY,
            size=12,
            gap=6,
        )
        laid = [*kept, *_lay_out([note], scratch)]
    panel_h = sum(h for *_, h in laid) + 24 + 50 * len(fig.panel_art)
    height = max(base.height, panel_h)
    # a small image (a legend symbol) still leaves the header room for its text
    width = max(base.width + PANEL_PX, _header_width(sample))
    canvas = Image.new("RGB", (width, HEADER_PX + height), _PANEL_BG)
    canvas.paste(drawn, (0, HEADER_PX))
    draw = ImageDraw.Draw(canvas)
    _header(draw, sample, canvas.width)
    x0 = base.width
    draw.line((x0, HEADER_PX, x0, canvas.height), fill=(200, 200, 200), width=1)
    y = HEADER_PX + 12
    for line, wrapped, _h in laid:
        y += line.gap
        font = _font(line.size, line.bold)
        tx = x0 + 14
        if line.swatch is not None:
            draw.rectangle((tx, y + 3, tx + 12, y + 3 + line.size - 2), fill=line.swatch)
            tx += 18
        for text in wrapped:
            draw.text((tx, y), text, font=font, fill=line.colour)
            y += line.size + 4
    for art in fig.panel_art:
        y += art(draw, x0 + 14, y + 4) + 6
    return canvas


def describe_sample(sample: Sample, *, size: tuple[int, int] = (WIDTH_PX, HEIGHT_PX)) -> list[str]:
    """The panel's text of ``sample``'s drawing, one entry a line (before wrapping), for a
    map of ``size`` pixels: what the review tool can show as text beside the image."""
    return [line.text for line in (*_figure(sample, size).lines, *_footer(sample))]


def _figure(sample: Sample, size: tuple[int, int]) -> _Figure:
    view = _view(sample, size)
    fig = _Figure()
    truth = sample.ground_truth
    if isinstance(truth, RouteTruth):
        _draw_route(sample, truth, view, fig)
    elif isinstance(truth, RoadPairTruth):
        _draw_road_pair(sample, truth, view, fig)
    elif isinstance(truth, NumberTruth) and sample.prompt.images and _metres(truth) is not None:
        # a length on a map (RLE): the path and its markers drawn over it
        _draw_number(sample, truth, view, fig)
    elif _has_features(truth):
        # a map-feature truth (STMF, MTMF): its evidence drawn over the map
        _draw_features(sample, truth, fig)
    else:
        _draw_other(sample, fig)
    return fig


def _lay_out(lines: list[_Line], d: ImageDraw.ImageDraw) -> list[tuple[_Line, list[str], int]]:
    laid = []
    for line in lines:
        width = PANEL_PX - 28 - (18 if line.swatch is not None else 0)
        text = line.text if len(line.text) <= _LINE_CHARS else line.text[:_LINE_CHARS] + " …"
        wrapped = _wrap(text, _font(line.size, line.bold), width, d)
        cap = _QUESTION_LINES if line.text.startswith("question: ") else _LINE_WRAPS
        if len(wrapped) > cap:
            wrapped = [*wrapped[: cap - 1], wrapped[cap - 1] + " …"]
        laid.append((line, wrapped, line.gap + len(wrapped) * (line.size + 4)))
    return laid


def _footer(sample: Sample) -> list[_Line]:
    """The metadata and the question, for every kind."""
    skip = {"center_lat", "center_lon", "markers", "blank_share"}
    meta = {
        k: v for k, v in sample.metadata.model_dump().items() if v is not None and k not in skip
    }
    lines = [
        _Line(
            "metadata: " + (" · ".join(f"{k} {v}" for k, v in meta.items()) or "none"),
            colour=_GREY,
            size=12,
            gap=10,
        )
    ]
    lines.append(_Line(f"question: {sample.prompt.text}", colour=_GREY, size=12, gap=6))
    return lines


def _header_text(sample: Sample) -> str:
    zoom = sample.metadata.zoom
    blank = _meta(sample, "blank_share")
    parts = [
        sample.id,
        sample.task,
        f"zoom {zoom}" if zoom is not None else f"zoom {_NOT_RECORDED}",
        f"blank {float(blank):.0%}" if blank is not None else f"blank share {_NOT_RECORDED}",
    ]
    return "   ·   ".join(parts)


def _header_width(sample: Sample) -> int:
    """The width the header's text and the attribution need side by side."""
    d = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    text = d.textlength(_header_text(sample), font=_font(15, bold=True))
    return int(text + d.textlength(OSM_ATTRIBUTION, font=_font(13)) + 50)


def _header(d: ImageDraw.ImageDraw, sample: Sample, width: int) -> None:
    d.rectangle((0, 0, width, HEADER_PX - 1), fill=_HEADER_BG)
    font = _font(15, bold=True)
    d.text((10, HEADER_PX // 2), _header_text(sample), font=font, fill=(255, 255, 255), anchor="lm")
    small = _font(13)
    d.text(
        (width - 10, HEADER_PX // 2), OSM_ATTRIBUTION, font=small, fill=(220, 220, 220), anchor="rm"
    )
