"""The folium page of one map view: centre and zoom, markers, paths, scale bar, attribution.

A view refuses a marker that it would not draw whole: its anchor (the point
it marks) outside the image, or its pin (awesome-markers, 35 x 45 px, reaching
42 px above the point and 17-18 px to either side) cut by the image's edge.
A question about a marker that is not on the map, or only partly, is not a
fair one; the message names the marker, its pixel and the view's bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from cartoqa.errors import MapDataError
from cartoqa.records import OSM_ATTRIBUTION

from .projection import pixel_box, pixel_to_lat_lon, world_pixel

__all__ = [
    "CONTROL_BOXES",
    "HEIGHT_PX",
    "MARKER_COLOURS",
    "PATH_COLOUR",
    "PIN_BOX_PX",
    "WIDTH_PX",
    "Marker",
    "Path",
    "View",
    "build_page",
    "control_boxes",
    "scale_bar_box",
]

WIDTH_PX, HEIGHT_PX = 1366, 768
MARKER_COLOURS = ("blue", "red")
PATH_COLOUR = "#0000ff"
PATH_WEIGHT_PX = 5
MIN_ZOOM, MAX_ZOOM = 15, 19
#: the marker's pin around the point it marks, in pixels (left, top, right, bottom): the
#: awesome-markers icon is 35 x 45 px with its anchor at (17, 42)
PIN_BOX_PX = (-17, -42, 18, 3)
#: the controls Leaflet draws over the map of a WIDTH_PX x HEIGHT_PX page, as boxes (x0, y0,
#: x1, y1) in image pixels that hold them at every zoom (the scale bar's width varies with
#: its round lengths, up to Leaflet's 100 px); what they cover of the map cannot be read
#: (``maps.feature_pixels``). ``RenderedView.controls`` gives the boxes drawn; a test holds them
#: to these.
CONTROL_BOXES: dict[str, tuple[float, float, float, float]] = {
    "zoom": (10.0, 10.0, 44.0, 74.0),
    "scale": (5.0, 719.0, 110.0, 763.0),
    "attribution": (1057.0, 745.5, 1366.0, 768.0),
}
#: Leaflet's scale control: its longest line, its left and its top and bottom in the page
_SCALE_MAX_PX, _SCALE_LEFT, _SCALE_TOP, _SCALE_BOTTOM = 100, 5.0, 719.0, 763.0
_LEAFLET_EARTH_M = 6371000.0  # L.CRS.Earth.R


def _round_num(num: float) -> float:
    """Leaflet's ``_getRoundNum``: 1, 2, 3 or 5 times a power of ten, at most ``num``."""
    pow10 = 10 ** (len(str(math.floor(num))) - 1)
    d = num / pow10
    d = 10 if d >= 10 else 5 if d >= 5 else 3 if d >= 3 else 2 if d >= 2 else 1
    return pow10 * d


def scale_bar_box(view: View) -> tuple[float, float, float, float]:
    """The scale control's box in the image, as Leaflet sizes it: its metric and imperial
    lines are ``maxWidth`` (100 px) times round length / the length of 100 px across the
    map's middle (haversine, Leaflet's Earth radius); the box is the longer line."""
    x0, y0, _, _ = pixel_box(view.center, view.zoom, view.width, view.height)
    x0, y = round(x0), round(y0) + view.height / 2
    lat1, lon1 = pixel_to_lat_lon(x0, y, view.zoom)
    lat2, lon2 = pixel_to_lat_lon(x0 + _SCALE_MAX_PX, y, view.zoom)
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    metres = _LEAFLET_EARTH_M * 2 * math.atan2(math.sqrt(a), math.sqrt(1 - a))
    feet = metres * 3.2808399
    imperial = feet / 5280 if feet > 5280 else feet
    widths = [round(_SCALE_MAX_PX * _round_num(v) / v) for v in (metres, imperial) if v > 0]
    return (_SCALE_LEFT, _SCALE_TOP, _SCALE_LEFT + max(widths, default=0), _SCALE_BOTTOM)


def control_boxes(view: View) -> dict[str, tuple[float, float, float, float]]:
    """The controls drawn over this view's map: ``CONTROL_BOXES`` with the scale bar's box
    as wide as it is drawn at the view's zoom and latitude."""
    return {**CONTROL_BOXES, "scale": scale_bar_box(view)}


@dataclass(frozen=True)
class Marker:
    """A folium marker (awesome-markers pin) at a point."""

    lat: float
    lon: float
    colour: Literal["blue", "red"] = "blue"


@dataclass(frozen=True)
class Path:
    """A polyline through (lat, lon) vertices, drawn in PATH_COLOUR."""

    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class View:
    """One map image to make: where, how close, and what to draw on it."""

    center: tuple[float, float]
    zoom: int
    markers: tuple[Marker, ...] = ()
    paths: tuple[Path, ...] = ()
    width: int = WIDTH_PX
    height: int = HEIGHT_PX
    id: str = field(default="view")

    def __post_init__(self) -> None:
        lat, lon = self.center
        if not (-85 <= lat <= 85 and -180 <= lon <= 180):
            raise MapDataError(f"center {self.center} is not a (lat, lon) on the Web Mercator map")
        if not (MIN_ZOOM <= self.zoom <= MAX_ZOOM):
            raise MapDataError(
                f"zoom {self.zoom} is outside {MIN_ZOOM}-{MAX_ZOOM}; maps are made at zoom 15-19"
            )
        for m in self.markers:
            if m.colour not in MARKER_COLOURS:
                raise MapDataError(f"marker colour {m.colour!r} is not one of {MARKER_COLOURS}")
        for p in self.paths:
            if len(p.points) < 2:
                raise MapDataError("a path needs at least two points")
        for m in self.markers:
            self._check_marker(m)

    def pixel(self, lat: float, lon: float) -> tuple[float, float]:
        """Where a point falls in the image, from its top left (Leaflet rounds the map's pixel
        origin)."""
        x0, y0, _, _ = pixel_box(self.center, self.zoom, self.width, self.height)
        x, y = world_pixel(lat, lon, self.zoom)
        return x - round(x0), y - round(y0)

    def bounds(self) -> tuple[float, float, float, float]:
        """(south, west, north, east) of what the image shows."""
        x0, y0, x1, y1 = pixel_box(self.center, self.zoom, self.width, self.height)
        north, west = pixel_to_lat_lon(x0, y0, self.zoom)
        south, east = pixel_to_lat_lon(x1, y1, self.zoom)
        return south, west, north, east

    def _check_marker(self, m: Marker) -> None:
        x, y = self.pixel(m.lat, m.lon)
        left, top, right, bottom = PIN_BOX_PX
        if 0 <= x < self.width and 0 <= y < self.height:
            cut = [
                edge
                for edge, out in (
                    ("left", x + left < 0),
                    ("top", y + top < 0),
                    ("right", x + right > self.width),
                    ("bottom", y + bottom > self.height),
                )
                if out
            ]
            if not cut:
                return
            where = (
                f"inside the image, but its pin would be cut by the {' and '.join(cut)} edge (a "
                f"pin needs {-left} px left, {-top} px above, {right} px right and {bottom} px "
                "below the point it marks)"
            )
        else:
            where = "outside the image"
        s, w, n, e = self.bounds()
        raise MapDataError(
            f"{m.colour} marker at ({m.lat:.6f}, {m.lon:.6f}) falls at pixel ({x:.0f}, {y:.0f}), "
            f"{where}; the {self.width}x{self.height} view centred on "
            f"({self.center[0]:.6f}, {self.center[1]:.6f}) at zoom {self.zoom} shows "
            f"({s:.6f}, {w:.6f}) to ({n:.6f}, {e:.6f}) (south, west to north, east). Move the "
            "centre towards the marker, or zoom out (a lower zoom shows more)"
        )

    @classmethod
    def make(
        cls,
        center: tuple[float, float],
        zoom: int,
        *,
        markers: Sequence[Marker] = (),
        paths: Sequence[Sequence[tuple[float, float]]] = (),
        id: str = "view",
    ) -> View:
        return cls(
            (float(center[0]), float(center[1])),
            zoom,
            tuple(markers),
            tuple(Path(tuple((float(a), float(b)) for a, b in p)) for p in paths),
            id=id,
        )


def build_page(view: View, tile_url: str) -> tuple[str, str]:
    """The page's HTML and the JavaScript name of its Leaflet map.

    ``tile_url`` is the tile template, "http://host:port/tiles/{z}/{x}/{y}.png".
    """
    import folium

    m = folium.Map(
        location=list(view.center),
        zoom_start=view.zoom,
        tiles=None,
        control_scale=True,  # Leaflet's scale bar, bottom left, metres and feet
        fade_animation=False,
        zoom_animation=False,
        marker_zoom_animation=False,
    )
    folium.TileLayer(
        tiles=tile_url,
        attr=OSM_ATTRIBUTION,
        name="OpenStreetMap",
        max_zoom=19,
        max_native_zoom=19,
    ).add_to(m)
    for p in view.paths:
        folium.PolyLine(
            [list(pt) for pt in p.points], color=PATH_COLOUR, weight=PATH_WEIGHT_PX, opacity=1.0
        ).add_to(m)
    for mk in view.markers:
        folium.Marker([mk.lat, mk.lon], icon=folium.Icon(color=mk.colour)).add_to(m)
    return m.get_root().render(), m.get_name()
