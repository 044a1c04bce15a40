"""Serving folium's CDN assets from local npm packages, so the browser needs no network.

``resolve(url)`` maps each URL that folium's pages name (and the files those
stylesheets load in turn) to a file under node_modules, or to a small
stylesheet cartoqa makes; anything else is None and will be aborted.
"""

from __future__ import annotations

import mimetypes
import re
from functools import lru_cache
from pathlib import Path

from cartoqa.errors import RenderStackError
from cartoqa.settings import assets_dir

__all__ = ["Asset", "resolve"]

_NPM = re.compile(r"^https://cdn\.jsdelivr\.net/npm/((?:@[^/@]+/)?[^/@]+)@([^/]+)/(.+)$")
_FIXED = {
    "https://code.jquery.com/jquery-3.7.1.min.js": ("jquery", "dist/jquery.min.js"),
}
_AWESOME = re.compile(
    r"^https://cdnjs\.cloudflare\.com/ajax/libs/Leaflet\.awesome-markers/[^/]+/(.+)$"
)
_GLYPHICONS_CSS = "https://netdna.bootstrapcdn.com/bootstrap/3.0.0/css/bootstrap-glyphicons.css"
_GLYPHICONS_FONTS = re.compile(r"^https://netdna\.bootstrapcdn\.com/bootstrap/3\.0\.0/fonts/(.+)$")
_ROTATE_CSS = "leaflet.awesome.rotate.min.css"


class Asset:
    """Bytes and content type to answer one request with."""

    def __init__(self, body: bytes, content_type: str) -> None:
        self.body = body
        self.content_type = content_type


def _root() -> Path:
    root = assets_dir()
    if not (root / "leaflet" / "dist" / "leaflet.js").is_file():
        raise RenderStackError(
            f"the map page assets are not in {root}: run 'npm ci' in the cartoqa checkout "
            "(bash scripts/setup.sh main does it), or set CARTOQA_ASSETS to a node_modules folder "
            "holding leaflet, leaflet.awesome-markers, bootstrap, bootstrap3, jquery and "
            "@fortawesome/fontawesome-free"
        )
    return root


def _file(path: Path) -> Asset | None:
    if not path.is_file():
        return None
    ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if path.suffix == ".woff2":
        ctype = "font/woff2"
    return Asset(path.read_bytes(), ctype)


@lru_cache(maxsize=1)
def _glyphicons_css() -> bytes:
    """Only the glyphicon rules of Bootstrap 3 (folium's marker icons), fonts from bootstrap3."""
    css = (_root() / "bootstrap3" / "dist" / "css" / "bootstrap.css").read_text()
    start = css.index("@font-face")
    end = css.index("}", css.index(".glyphicon-menu-up:before")) + 1
    return css[start:end].encode()


def resolve(url: str) -> Asset | None:
    """The local answer for an asset URL, or None when the URL is not an asset."""
    url = url.split("#", 1)[0].split("?", 1)[0]
    root = _root()
    if url.endswith(_ROTATE_CSS):
        return Asset(b"/* rotation of marker icons: not used */\n", "text/css")
    if url in _FIXED:
        pkg, rel = _FIXED[url]
        return _file(root / pkg / rel)
    if url == _GLYPHICONS_CSS:
        return Asset(_glyphicons_css(), "text/css")
    m = _GLYPHICONS_FONTS.match(url)
    if m:
        return _file(root / "bootstrap3" / "dist" / "fonts" / m.group(1))
    m = _AWESOME.match(url)
    if m:
        return _file(root / "leaflet.awesome-markers" / "dist" / m.group(1))
    m = _NPM.match(url)
    if m:
        pkg, _version, rel = m.groups()
        return _file(root / pkg / rel)
    return None
