"""Screenshots of map pages in headless Chromium, driven by Playwright, with no network.

Every request the page makes is answered here: the page itself, folium's
assets from local npm packages (``maps.assets``), and tiles from a
``TileRenderer``.  Any other request is aborted and reported, so a missing
asset is an error instead of a silently grey map.  One browser serves a
whole batch, with several pages rendering at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from cartoqa.errors import CartoqaError

from .assets import resolve
from .page import PAGE_ORIGIN, View, build_page
from .tiles import TileRenderer

__all__ = ["BrowserError", "Shot", "chromium_path", "screenshot_views"]

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
]
_TILE = re.compile(r"^/tiles/(\d+)/(\d+)/(\d+)\.png$")
_PAGE = re.compile(r"^/view/(\d+)\.html$")

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
  };
}
"""


class BrowserError(CartoqaError):
    """The browser could not start or a page could not be rendered."""


@dataclass
class Shot:
    """What the browser made of one view."""

    png: bytes
    drawn: dict
    aborted: list[str] = field(default_factory=list)
    tile_errors: list[str] = field(default_factory=list)


def chromium_path() -> str:
    """Debian's Chromium (Playwright cannot download its own browser here), or CARTOQA_CHROMIUM."""
    path = os.environ.get("CARTOQA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise BrowserError(
            f"Chromium is not installed ({path} missing): apt-get install chromium "
            "(bash scripts/setup.sh main does it), or set CARTOQA_CHROMIUM to a Chromium binary"
        )
    return path


async def _shoot(
    context,
    view: View,
    number: int,
    html: str,
    map_name: str,
    tiles: TileRenderer,
    executor: ThreadPoolExecutor,
) -> Shot:
    loop = asyncio.get_running_loop()
    aborted: list[str] = []
    tile_errors: list[str] = []
    page = await context.new_page()

    async def handle(route) -> None:
        url = route.request.url
        if url.startswith(PAGE_ORIGIN):
            path = url[len(PAGE_ORIGIN) :].split("?", 1)[0]
            if _PAGE.match(path):
                await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
                return
            m = _TILE.match(path)
            if m:
                z, x, y = (int(v) for v in m.groups())
                try:
                    body = await loop.run_in_executor(executor, tiles.tile, z, x, y)
                except Exception as exc:
                    tile_errors.append(f"{z}/{x}/{y}: {exc}")
                    await route.fulfill(status=500, body=str(exc))
                    return
                await route.fulfill(
                    status=200,
                    content_type="image/png",
                    body=body,
                    headers={"Cache-Control": "max-age=86400"},
                )
                return
            if path == "/favicon.ico":
                await route.fulfill(status=204, body=b"")
                return
        else:
            asset = resolve(url)
            if asset is not None:
                await route.fulfill(
                    status=200,
                    content_type=asset.content_type,
                    body=asset.body,
                    headers={"Access-Control-Allow-Origin": "*"},
                )
                return
        aborted.append(url)
        await route.abort()

    await page.route("**/*", handle)
    try:
        await page.goto(f"{PAGE_ORIGIN}/view/{number}.html", wait_until="load", timeout=120_000)
        drawn = await page.evaluate(
            _SETTLE_JS,
            [
                map_name,
                [[m.lat, m.lon] for m in view.markers],
                [list(map(list, p.points)) for p in view.paths],
            ],
        )
        png = await page.screenshot(type="png", timeout=60_000)
    finally:
        await page.close()
    return Shot(png, drawn, aborted, tile_errors)


async def _screenshot_all(
    views: Sequence[View],
    tiles: TileRenderer,
    concurrency: int,
    on_done: Callable[[int], None] | None,
) -> list[Shot]:
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    pages = [build_page(v) for v in views]
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tiles")
    try:
        async with async_playwright() as pw:
            try:
                browser = await pw.chromium.launch(
                    executable_path=chromium_path(), args=CHROMIUM_ARGS
                )
            except PlaywrightError as exc:
                raise BrowserError(f"Chromium did not start: {str(exc)[:500]}") from None
            try:
                sizes = {(v.width, v.height) for v in views}
                contexts = {
                    s: await browser.new_context(
                        viewport={"width": s[0], "height": s[1]},
                        device_scale_factor=1,
                        service_workers="block",
                    )
                    for s in sizes
                }
                sem = asyncio.Semaphore(concurrency)

                async def one(i: int) -> Shot:
                    async with sem:
                        v = views[i]
                        shot = await _shoot(
                            contexts[(v.width, v.height)],
                            v,
                            i,
                            pages[i][0],
                            pages[i][1],
                            tiles,
                            executor,
                        )
                    if on_done:
                        on_done(i)
                    return shot

                return list(await asyncio.gather(*(one(i) for i in range(len(views)))))
            finally:
                await browser.close()
    finally:
        executor.shutdown(wait=True)


def screenshot_views(
    views: Sequence[View],
    tiles: TileRenderer,
    *,
    concurrency: int = 3,
    on_done: Callable[[int], None] | None = None,
) -> list[Shot]:
    """Render each view's page in one headless Chromium; returns one Shot per view, in order."""
    if concurrency < 1:
        raise BrowserError(f"concurrency={concurrency} must be at least 1")
    return asyncio.run(_screenshot_all(views, tiles, concurrency, on_done))
