"""OSM data in, rendered map images out.

Planned contents (see ../shared/spec/architecture.md and render-stack.md):
extract loading and cleaning, the PostGIS import, Mapnik tiles with the
openstreetmap-carto style, folium pages with markers, paths and a scale bar,
Playwright screenshots, road graphs and route ground truth.  Nothing is
implemented here yet; the package exists so that the layout is fixed.
"""

__all__: list[str] = []
