"""What stands between the review tool and anyone else: the token, the origin of forms, the
security headers, and which image files may be served (issue 17, item 5).

- ``TokenGate`` wraps the app: every address starts with ``/<token>/`` (the address
  ``cartoqa review`` prints); any other answers 403 and reaches nothing.  The token
  travels in the path, not in a cookie, because browsers send a cookie for
  127.0.0.1 to every port of it, so any other local server would receive it.
- A request that can change something (not GET or HEAD) whose Origin (else
  Referer) is another site is refused.
- Every answer carries a Content-Security-Policy that lets pages run this server's
  own script and style only, and refuses framing.
- ``image_file`` names a file inside the dataset's ``images/`` or nothing: no
  ``..``, no absolute path, no link out, no folder.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["CSP", "TokenGate", "image_file", "same_origin"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # "no-referrer" would make Chromium send "Origin: null" with the tool's own forms
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
_REFUSED = (
    "<!doctype html><meta charset=utf-8><title>cartoqa review: {title}</title>"
    "<h1>{title}</h1><p>{text}</p>"
)
SAFE_METHODS = ("GET", "HEAD")


def same_origin(headers: dict[str, str]) -> bool:
    """A request's Origin (else its Referer) is the host it was sent to; one with neither
    (a script that knows the token) passes, an opaque "null" origin does not."""
    origin = headers.get("origin") or headers.get("referer")
    if origin is None:
        return True
    got = urlsplit(origin)
    return got.scheme in ("http", "https") and got.netloc == headers.get("host")


class TokenGate:
    """The app behind ``/<token>/`` (module docstring)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token or not token.replace("-", "").replace("_", "").isalnum():
            raise ValueError("the token must be URL-safe letters, digits, '-' and '_'")
        self.app = app
        self.prefix = "/" + token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        head, rest = path[: len(self.prefix)], path[len(self.prefix) :]
        if not hmac.compare_digest(head.encode("utf-8", "replace"), self.prefix.encode()) or (
            rest and not rest.startswith("/")
        ):
            await _refuse(send, 403, "token needed", "Open the address cartoqa review printed.")
            return
        if path == self.prefix:
            await _answer(send, 307, b"", [(b"location", (self.prefix + "/").encode())])
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if scope["method"] not in SAFE_METHODS and not same_origin(headers):
            await _refuse(send, 403, "refused", "A form from another site changes nothing.")
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = list(HEADERS)
                if b"cache-control" not in have:
                    extra.append((b"cache-control", b"no-store"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app({**scope, "root_path": self.prefix}, receive, with_headers)


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, *HEADERS, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, status: int, title: str, text: str) -> None:
    body = _REFUSED.format(title=title, text=text).encode()
    await _answer(send, status, body, [(b"content-type", b"text/html; charset=utf-8")])


def image_file(dataset_path: Path, relative: str) -> Path | None:
    """The file ``relative`` names inside ``dataset_path/images``, or None when it names
    anything else (``..``, an absolute path, a link out, a folder, nothing)."""
    root = (dataset_path / "images").resolve()
    if not relative or "\x00" in relative or "\\" in relative:
        return None
    try:
        path = (root / relative).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if not path.is_relative_to(root) or path == root or not path.is_file():
        return None
    return path
