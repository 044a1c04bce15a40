"""Screenshots of map pages in headless Chromium, driven by Playwright, with no network.

Every request a page makes goes to the local ``MapServer`` (the page,
folium's assets from local npm packages, tiles); Chromium resolves no other
name.  Anything that cannot be served is reported with the view, so a
missing asset is an error instead of a silently grey map.  One browser
serves a whole batch, with several pages rendering at once.  When the
database stops answering (a tile or a prefetch raises ``DatabaseError``)
the batch stops at once with that error: no page waits for its timeout.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cartoqa.errors import DatabaseError, RenderStackError

from .page import View, build_page
from .projection import pixel_box
from .server import MapServer
from .tiles import TileRenderer

__all__ = ["CHROMIUM_CANDIDATES", "Shot", "chromium_path", "screenshot_views"]

log = logging.getLogger(__name__)

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--hide-scrollbars",
    "--font-render-hinting=none",
    # no name resolves: only the local server's 127.0.0.1 address can be reached
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


# Wait until the tile layer has loaded every visible tile, marker images are decoded and fonts
# are ready; then report where Leaflet put the markers and path vertices.
_SETTLE_JS = """
async ([mapName, markers, paths]) => {
  const map = window[mapName];
  const layers = [];
  map.eachLayer(l => { if (l instanceof L.TileLayer) layers.push(l); });
  await Promise.all(layers.map(l => new Promise(r => l.isLoading() ? l.once('load', r) : r())));
  await Promise.all([...document.images].map(i => i.complete ? null : new Promise(r => {
      i.addEventListener('load', r); i.addEventListener('error', r); })));
  await document.fonts.ready;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const pt = ([lat, lon]) => {
    const p = map.latLngToContainerPoint([lat, lon]); return [p.x, p.y]; };
  const b = map.getBounds();
  const scale = document.querySelector('.leaflet-control-scale');
  const attribution = document.querySelector('.leaflet-control-attribution');
  const zoom = document.querySelector('.leaflet-control-zoom');
  const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
      return [r.left, r.top, r.right, r.bottom]; };
  return {
    markers: markers.map(pt),
    paths: paths.map(p => p.map(pt)),
    bounds: [b.getSouth(), b.getWest(), b.getNorth(), b.getEast()],
    scale_text: scale ? [...scale.querySelectorAll('.leaflet-control-scale-line')]
        .map(e => e.textContent) : [],
    scale_box: box(scale),
    attribution_text: attribution ? attribution.textContent : null,
    attribution_box: box(attribution),
    zoom_box: box(zoom),
  };
}
"""


class _Abort:
    """The first fatal error of a batch, reported from any thread; ``event`` is set with it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()
        self.error: DatabaseError | None = None
        self._lock = threading.Lock()

    def __call__(self, exc: DatabaseError) -> None:
        with self._lock:
            if self.error is not None:
                return
            self.error = exc
        self.loop.call_soon_threadsafe(self.event.set)

    async def guard(self, coro: Any) -> Any:
        """Await ``coro`` unless the batch fails first; then cancel it and raise the error."""
        work = asyncio.ensure_future(coro)
        stop = asyncio.ensure_future(self.event.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        if self.error is not None and (work.cancelled() or work.exception() is not None):
            raise self.error
        return work.result()


@dataclass
class Shot:
    """What the browser made of one view."""

    png: bytes
    drawn: dict
    aborted: list[str] = field(default_factory=list)
    tile_errors: list[str] = field(default_factory=list)


#: Debian's Chromium builds, best first: the old headless shell (package chromium-headless-shell,
#: what Playwright itself uses for headless pages) renders the same maps with about 40 % less
#: time than the full browser in its headless mode (README, "Speed")
CHROMIUM_CANDIDATES = ("chromium-headless-shell", "chromium")


def chromium_path() -> str:
    """Debian's Chromium (Playwright cannot download its own browser here): CARTOQA_CHROMIUM,
    else the headless shell, else the full browser."""
    path = os.environ.get("CARTOQA_CHROMIUM")
    if path:
        if not os.path.exists(path):
            raise RenderStackError(
                f"CARTOQA_CHROMIUM={path} does not exist; point it at a Chromium binary or unset "
                "it to use Debian's (apt-get install chromium-headless-shell)"
            )
        return path
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise RenderStackError(
        "Chromium is not installed: apt-get install chromium-headless-shell (or chromium; "
        "bash scripts/setup.sh main installs both), or set CARTOQA_CHROMIUM to a Chromium binary"
    )


async def _shoot(page, cdp, view: View, url: str, map_name: str, failed: list[str]) -> Shot:
    failed.clear()
    await page.goto(url, wait_until="load", timeout=120_000)
    drawn = await page.evaluate(
        _SETTLE_JS,
        [
            map_name,
            [[m.lat, m.lon] for m in view.markers],
            [list(map(list, p.points)) for p in view.paths],
        ],
    )
    # the DevTools call with optimizeForSpeed: the same pixels, a faster PNG encoder (about
    # 2.5x less time than page.screenshot here)
    shot = await cdp.send(
        "Page.captureScreenshot",
        {"format": "png", "optimizeForSpeed": True, "captureBeyondViewport": False},
    )
    return Shot(base64.b64decode(shot["data"]), drawn, list(failed), [])


class _Prefetch:
    """Make the tiles a batch needs, metatile by metatile in view order, while the browser works.

    Each metatile is rendered once and only the tiles some view shows are
    encoded; a page asking for a tile before it is made waits on the
    metatile's lock, or renders it itself.
    """

    def __init__(
        self,
        tiles: TileRenderer,
        views: Sequence[View],
        on_fatal: Callable[[DatabaseError], None] | None = None,
    ) -> None:
        groups: dict[tuple[int, int, int], dict[tuple[int, int], None]] = {}
        for v in views:
            box = pixel_box(v.center, v.zoom, v.width, v.height)
            for z, x, y in tiles.tiles_for(v.zoom, *box):
                groups.setdefault(tiles.metatile_of(z, x, y), {})[(x, y)] = None
        self.todo = iter([(key[0], list(wanted)) for key, wanted in groups.items()])
        self.tiles = tiles
        self.on_fatal = on_fatal
        self.stop = threading.Event()
        self.pick = threading.Lock()
        self.threads = [
            threading.Thread(target=self._run, daemon=True, name=f"prefetch-{i}")
            for i in range(tiles.workers)
        ]

    def _run(self) -> None:
        while not self.stop.is_set():
            with self.pick:
                job = next(self.todo, None)
            if job is None:
                return
            try:
                self.tiles.make_tiles(*job)
            except DatabaseError as exc:  # nothing more can be rendered: stop the batch
                self.stop.set()
                if self.on_fatal is not None:
                    self.on_fatal(exc)
                return
            except Exception:  # the page's own request for the tile reports it
                log.debug("prefetch of %s failed", job, exc_info=True)

    def __enter__(self) -> _Prefetch:
        if self.tiles.use_cache:
            for t in self.threads:
                t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            if t.is_alive():
                t.join()


async def _screenshot_all(
    views: Sequence[View],
    tiles: TileRenderer,
    concurrency: int,
    on_done: Callable[[int], None] | None,
) -> list[Shot]:
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    abort = _Abort(asyncio.get_running_loop())
    with MapServer(tiles, on_fatal=abort) as server, _Prefetch(tiles, views, abort):
        pages = []
        for i, v in enumerate(views):
            html, map_name = build_page(v, server.tile_url)
            pages.append((server.add_page(str(i), html), map_name))
        async with async_playwright() as pw:
            try:
                browser = await pw.chromium.launch(
                    executable_path=chromium_path(), args=CHROMIUM_ARGS
                )
            except PlaywrightError as exc:
                raise RenderStackError(f"Chromium did not start: {str(exc)[:500]}") from None
            try:
                queues: dict[tuple[int, int], asyncio.Queue[int]] = {}
                for i, v in enumerate(views):
                    queues.setdefault((v.width, v.height), asyncio.Queue()).put_nowait(i)
                shots: list[Shot | None] = [None] * len(views)

                async def worker(context, queue: asyncio.Queue[int]) -> None:
                    # one page serves many views in turn: each view is still its own folium
                    # page (a navigation), but the tab and its renderer are made once
                    page = await context.new_page()
                    cdp = await context.new_cdp_session(page)
                    failed: list[str] = []
                    page.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})"))
                    try:
                        while not queue.empty():
                            i = queue.get_nowait()
                            errors_before = len(server.errors)
                            shot = await abort.guard(_shoot(page, cdp, views[i], *pages[i], failed))
                            # with pages in flight at once a server error may be a
                            # neighbour's: every view rendered while it happened carries it
                            shot.tile_errors.extend(server.errors[errors_before:])
                            shots[i] = shot
                            if on_done:
                                on_done(i)
                    finally:
                        # a page whose navigation was cancelled may never finish closing
                        # (seen with Chromium here): the browser's close below ends it
                        if abort.error is None:
                            await page.close()

                workers = []
                for (w, h), queue in queues.items():
                    for _ in range(min(concurrency, queue.qsize())):
                        # a context (a window) per worker: a page in a background tab of a
                        # shared window gets no animation frames and stalls the others
                        context = await browser.new_context(
                            viewport={"width": w, "height": h},
                            device_scale_factor=1,
                            service_workers="block",
                        )
                        workers.append(asyncio.ensure_future(worker(context, queue)))
                try:
                    await asyncio.gather(*workers)
                except BaseException:
                    for job in workers:  # one failed: stop the others before the browser closes
                        job.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
                    raise
                if abort.error is not None:
                    raise abort.error
                return [s for s in shots if s is not None]
            finally:
                await browser.close()


def screenshot_views(
    views: Sequence[View],
    tiles: TileRenderer,
    *,
    concurrency: int = 3,
    on_done: Callable[[int], None] | None = None,
) -> list[Shot]:
    """Render each view's page in one headless Chromium; returns one Shot per view, in order."""
    if concurrency < 1:
        raise RenderStackError(f"concurrency={concurrency} must be at least 1")
    return asyncio.run(_screenshot_all(views, tiles, concurrency, on_done))
