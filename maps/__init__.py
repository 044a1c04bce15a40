"""OSM data in, rendered map images out.

- ``maps.extracts``: load, clean and hash OSM extracts (or download one).
- ``maps.database``: the private PostgreSQL + PostGIS cluster, one database per extract.
- ``maps.coastline``: sea polygons from the extract's coastline.
- ``maps.style``: the openstreetmap-carto 5.7.0 style, prepared for a strict offline load.
- ``maps.style_variants``: variants of that style (``without_labels``: no names, no refs;
  ``in_language_style``: names from ``name:XX``).
- ``maps.languages``: the extract's names in another language (views of the tables,
  ``way_names``, ``translated_share``).
- ``maps.tiles``: metatiles rendered by Mapnik, sliced and cached.
- ``maps.page``: the folium page of a view (markers, paths, scale bar, attribution).
- ``maps.assets`` / ``maps.server``: folium's JS and CSS from node_modules, and the local
  server that gives the browser pages, assets and tiles.
- ``maps.browser``: Playwright and Chromium, screenshots in batches.
- ``maps.render``: ``MapEngine`` and ``render_view``, the entry points.
- ``maps.roads``: the drivable road graph of an extract (osmnx), for route ground truth.
- ``maps.routes``: shortest routes and their turn-by-turn steps; the road network of a view.
- ``maps.labels``: which road names a view shows whole, from a colour-coded second render.
- ``maps.feature_pixels``: which icons, names, areas and lines a view shows, likewise.
- ``maps.colour_coded``: what those two colour-coded readers share.
"""

from .extracts import CleaningReport, Extract, default_extract_path, load_extract
from .page import HEIGHT_PX, PATH_COLOUR, WIDTH_PX, Marker, Path, View
from .render import MapEngine, RenderedView, render_view
from .style_variants import in_language_style, translated_share, way_names, without_labels

__all__ = [
    "HEIGHT_PX",
    "PATH_COLOUR",
    "WIDTH_PX",
    "CleaningReport",
    "Extract",
    "MapEngine",
    "Marker",
    "Path",
    "RenderedView",
    "View",
    "default_extract_path",
    "in_language_style",
    "load_extract",
    "render_view",
    "translated_share",
    "way_names",
    "without_labels",
]
