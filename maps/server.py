"""The local HTTP server behind every map page: the page, folium's assets and the tiles.

The browser talks to nothing else.  Chromium is started with a host-resolver
rule under which no name resolves; the pages reach this server on 127.0.0.1,
and the asset URLs folium writes (https://cdn.jsdelivr.net/npm/leaflet@1.9.3/
...) are rewritten to ``/cdn/<host>/<path>`` on it and answered from local
npm packages (``maps.assets``).  A request for anything that is not a page,
an asset or a tile gets a 404 and is recorded as an error, and so is a tile
that fails to render.  A tile that fails because the database stopped
answering (``DatabaseError``) is answered 503 and also handed to
``on_fatal``, so that the batch can stop at once.

Why not Playwright's request routing: it passes every body through the
Python process and the driver, and it turns the browser's HTTP cache off.
Serving from here lets each browser context fetch the assets once; the
measured difference is in benchmarks/render.py's table (README).
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cartoqa.errors import DatabaseError

from .assets import resolve
from .tiles import TileRenderer

__all__ = ["MapServer", "rewrite_assets"]

log = logging.getLogger(__name__)

_TILE = re.compile(r"^/tiles/(\d+)/(\d+)/(\d+)\.png$")
_PAGE = re.compile(r"^/view/([A-Za-z0-9_.-]+)\.html$")
_CDN = re.compile(r"^/cdn/(.+)$")
_ASSET_URL = re.compile(r"""(["'(])https://([A-Za-z0-9.-]+)/""")


def rewrite_assets(html: str, origin: str) -> str:
    """Point every https asset URL in folium's HTML at ``origin``/cdn/<host>/..."""
    return _ASSET_URL.sub(lambda m: f"{m.group(1)}{origin}/cdn/{m.group(2)}/", html)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # a browser closed while its requests were answered (a batch that stopped): not news
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        log.warning("map server: request from %s failed", client_address, exc_info=True)


class MapServer:
    """Serves pages added with ``add_page``, assets, and ``renderer``'s tiles on 127.0.0.1.

    Thread-safe; use as a context manager.  ``errors`` lists what could not be served;
    ``on_fatal`` (when set) is called, from a server thread, with each ``DatabaseError``.
    """

    def __init__(
        self,
        renderer: TileRenderer,
        *,
        on_fatal: Callable[[DatabaseError], None] | None = None,
    ) -> None:
        self.renderer = renderer
        self.errors: list[str] = []
        self.on_fatal = on_fatal
        self._pages: dict[str, bytes] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, body: bytes, ctype: str, cache: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                if cache:
                    self.send_header("Cache-Control", "public, max-age=86400, immutable")
                self.end_headers()
                self.wfile.write(body)

            def _fail(self, code: int, why: str) -> None:
                server.errors.append(why)
                body = why.encode()[:500]
                self.send_response(code)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if m := _TILE.match(path):
                    z, x, y = (int(v) for v in m.groups())
                    try:
                        body = server.renderer.tile(z, x, y)
                    except DatabaseError as exc:
                        if server.on_fatal is not None:
                            server.on_fatal(exc)
                        self._fail(503, f"tile {z}/{x}/{y}: {exc}")
                        return
                    except Exception as exc:
                        self._fail(500, f"tile {z}/{x}/{y}: {exc}")
                        return
                    self._send(body, "image/png", cache=True)
                elif m := _PAGE.match(path):
                    page = server._pages.get(m.group(1))
                    if page is None:
                        self._fail(404, f"no page {path}")
                    else:
                        self._send(page, "text/html; charset=utf-8", cache=False)
                elif m := _CDN.match(path):
                    asset = resolve("https://" + m.group(1))
                    if asset is None:
                        self._fail(404, f"asset https://{m.group(1)} is not in node_modules")
                    else:
                        self._send(asset.body, asset.content_type, cache=True)
                elif path == "/favicon.ico":
                    self.send_response(204)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._fail(404, f"unknown request {path}")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = _HTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, daemon=True, name="map-server"
        )

    @property
    def origin(self) -> str:
        host, port = self._httpd.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://{host}:{port}"

    @property
    def tile_url(self) -> str:
        return self.origin + "/tiles/{z}/{x}/{y}.png"

    def add_page(self, key: str, html: str) -> str:
        """Serve a page (built with ``tile_url``) at the URL returned, its assets pointed here."""
        self._pages[key] = rewrite_assets(html, self.origin).encode("utf-8")
        return f"{self.origin}/view/{key}.html"

    def __enter__(self) -> MapServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
