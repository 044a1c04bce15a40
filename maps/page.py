"""The folium page of one map view: centre and zoom, markers, paths, scale bar, attribution."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from cartoqa.errors import CartoqaError
from cartoqa.records import OSM_ATTRIBUTION

__all__ = [
    "HEIGHT_PX",
    "MARKER_COLOURS",
    "PATH_COLOUR",
    "WIDTH_PX",
    "Marker",
    "Path",
    "View",
    "ViewError",
    "build_page",
]

WIDTH_PX, HEIGHT_PX = 1366, 768
MARKER_COLOURS = ("blue", "red")
PATH_COLOUR = "#0000ff"
PATH_WEIGHT_PX = 5
MIN_ZOOM, MAX_ZOOM = 15, 19


class ViewError(CartoqaError):
    """A view that cannot be drawn as asked."""


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
            raise ViewError(f"center {self.center} is not a (lat, lon) on the Web Mercator map")
        if not (MIN_ZOOM <= self.zoom <= MAX_ZOOM):
            raise ViewError(
                f"zoom {self.zoom} is outside {MIN_ZOOM}-{MAX_ZOOM}; maps are made at zoom 15-19"
            )
        for m in self.markers:
            if m.colour not in MARKER_COLOURS:
                raise ViewError(f"marker colour {m.colour!r} is not one of {MARKER_COLOURS}")
        for p in self.paths:
            if len(p.points) < 2:
                raise ViewError("a path needs at least two points")

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
