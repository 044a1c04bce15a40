"""The rendering engine: an extract in, map images with markers, paths and a scale bar out.

>>> engine = MapEngine("monaco.osm.pbf")                       # doctest: +SKIP
>>> shot = engine.render(View.make((43.7384, 7.4246), 17,
...                      markers=[Marker(43.7384, 7.4246, "red")]))
>>> shot.save("monaco.png"); shot.markers_px                    # doctest: +SKIP
"""

from __future__ import annotations

import copy
import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cartoqa.errors import CartoqaError, MapDataError, RenderStackError

from .browser import screenshot_views
from .database import ExtractDatabase, PostgresCluster, ensure_database
from .extracts import Extract, load_extract
from .page import View
from .style import CartoStyle, prepare_style
from .tiles import METATILE, TileRenderer

__all__ = ["MapEngine", "RenderedView", "render_view"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RenderedView:
    """A rendered map and what was drawn where (pixels from the image's top left)."""

    view: View
    png: bytes
    """The screenshot, PNG."""
    markers_px: list[tuple[float, float]]
    """Each marker's anchor (the point it marks), in the order of ``view.markers``."""
    paths_px: list[list[tuple[float, float]]]
    """Each path's vertices in pixels, in the order of ``view.paths``."""
    bounds: tuple[float, float, float, float]
    """(south, west, north, east) of the visible map."""
    scale_text: list[str]
    """The scale bar's labels as shown ("50 m", "200 ft")."""
    attribution: str
    """The attribution line as shown."""
    extract_sha256: str
    style_version: str
    aborted: list[str] = field(default_factory=list)
    """Requests that were neither assets nor tiles (empty on success)."""
    controls: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    """The map's controls drawn over it, by name ("scale", "attribution", "zoom"): their
    boxes (x0, y0, x1, y1) in image pixels (what ``maps.page.CONTROL_BOXES`` must hold)."""

    def image(self) -> np.ndarray:
        """The screenshot as an (height, width, 3) uint8 RGB array."""
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(self.png)).convert("RGB"))

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(self.png)
        return p


class MapEngine:
    """Everything one extract needs to be drawn: its database, the style and a tile renderer.

    ``extract``: a path, an ``Extract``, or None for the embedded default.
    ``carto_files``: folder with carto's patterns/ and shields (else CARTOQA_CARTO_FILES).
    ``dsn``: a PostgreSQL server to use instead of the private cluster.
    ``metatile``: tiles per metatile side (8, as renderd; smaller wastes less on sparse views).
    """

    def __init__(
        self,
        extract: str | Path | Extract | None = None,
        *,
        carto_files: Path | None = None,
        dsn: str | None = None,
        cache: Path | None = None,
        cluster: PostgresCluster | None = None,
        metatile: int = METATILE,
    ) -> None:
        self.extract = (
            extract if isinstance(extract, Extract) else load_extract(extract, cache=cache)
        )
        self.database: ExtractDatabase = ensure_database(self.extract, cluster=cluster, dsn=dsn)
        self.style: CartoStyle = prepare_style(carto_files=carto_files, cache=cache)
        self.tiles = TileRenderer(self.style, self.database, cache=cache, metatile=metatile)
        self.language: str | None = None
        """The language labels are drawn in (``in_language``); None: each object's ``name``."""

    def in_language(self, lang: str) -> MapEngine:
        """An engine drawing the same extract with every label from ``name:<lang>`` where the
        object has it, else ``name`` (``maps.languages``): the database gets that language's
        views (once), the style a copy reading them (``maps.style_variants.
        in_language_style``, tiles cached apart), and the truth readers (``maps.labels``,
        ``maps.feature_pixels``) read names from them too.  ``language`` is the code as OSM
        writes it ("de", "pt-BR"); a bad code raises ``CartoqaError`` naming it."""
        from .languages import ensure_language_views, language_code
        from .style_variants import in_language_style

        code = language_code(lang)
        if self.language == code:
            return self
        if self.language is not None:
            raise CartoqaError(
                f"this engine draws names in {self.language!r}: ask the base engine for "
                f"in_language({code!r})"
            )
        ensure_language_views(self.database, code)
        twin = self.restyled(in_language_style(self.style, code))
        twin.language = code
        return twin

    def restyled(self, style: CartoStyle) -> MapEngine:
        """An engine drawing the same extract from the same database in ``style`` (e.g.
        ``maps.style_variants.without_labels(engine.style)``): nothing is imported again; it
        has a ``TileRenderer`` of its own (same cache, metatile size and settings), whose
        tiles live in the style's own folder of the tile cache."""
        twin = copy.copy(self)  # (``language`` too: a restyled language engine keeps it)
        twin.style = style
        t = self.tiles
        twin.tiles = TileRenderer(
            style,
            self.database,
            cache=t.folder.parents[2],  # <cache>/tiles/<style key>/<extract hash>
            metatile=t.metatile,
            use_cache=t.use_cache,
            image_format=t.image_format,
            workers=t.workers,
            keep=t.keep,
        )
        return twin

    def _check_inside(self, view: View) -> None:
        s, w, n, e = view.bounds()
        es, ew, en, ee = self.extract.bounds
        if s > en or n < es or w > ee or e < ew:
            raise MapDataError(
                f"view {view.id!r} at {view.center} zoom {view.zoom} shows ({s:.5f}, {w:.5f}) to "
                f"({n:.5f}, {e:.5f}), which is outside the extract {self.extract.name} "
                f"({es:.5f}, {ew:.5f}) to ({en:.5f}, {ee:.5f}): the map would be empty. Pick a "
                "centre inside the extract, or load an extract that covers the place"
            )

    def render(self, view: View) -> RenderedView:
        """Render one view (a fresh browser; for many views use ``render_many``)."""
        return self.render_many([view], progress=False)[0]

    def render_many(
        self,
        views: Sequence[View],
        *,
        concurrency: int = 3,
        progress: bool = True,
        strict: bool = True,
    ) -> list[RenderedView]:
        """Render views with one browser and ``concurrency`` pages at once, in order.

        With ``strict`` a view with an aborted request or a failed tile raises
        ``RenderStackError`` naming them; otherwise they are listed in ``aborted``.  A database
        that stops answering stops the batch at once with ``DatabaseError`` (strict or not).
        """
        if not views:
            return []
        for v in views:
            self._check_inside(v)
        if progress:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task(f"rendering {len(views)} maps", total=len(views))
                shots = screenshot_views(
                    views, self.tiles, concurrency=concurrency, on_done=lambda _i: bar.advance(task)
                )
        else:
            shots = screenshot_views(views, self.tiles, concurrency=concurrency)
        out = []
        for view, shot in zip(views, shots, strict=True):
            problems = shot.aborted + shot.tile_errors
            if problems and strict:
                raise RenderStackError(
                    f"view {view.id!r} made {len(problems)} request(s) that could not be served: "
                    f"{problems[:5]}; {_hint(problems)}"
                )
            d = shot.drawn
            out.append(
                RenderedView(
                    view=view,
                    png=shot.png,
                    markers_px=[tuple(p) for p in d["markers"]],
                    paths_px=[[tuple(p) for p in path] for path in d["paths"]],
                    bounds=tuple(d["bounds"]),
                    scale_text=list(d["scale_text"]),
                    attribution=d["attribution_text"] or "",
                    extract_sha256=self.extract.sha256,
                    style_version=self.style.version,
                    aborted=problems,
                    controls={
                        name: tuple(d[f"{name}_box"])
                        for name in ("scale", "attribution", "zoom")
                        if d.get(f"{name}_box")
                    },
                )
            )
        return out


def _hint(problems: list[str]) -> str:
    if any("node_modules" in p for p in problems):
        return "an asset is missing from node_modules: run 'npm ci' in the cartoqa checkout"
    if any(p.startswith("tile ") for p in problems):
        return "tiles failed to render (Mapnik's message is quoted above)"
    return "the page asked for something the map server does not have"


def render_view(
    view: View,
    *,
    extract: str | Path | Extract | None = None,
    carto_files: Path | None = None,
    dsn: str | None = None,
) -> RenderedView:
    """Render one view of an extract (the embedded default when None)."""
    return MapEngine(extract, carto_files=carto_files, dsn=dsn).render(view)
