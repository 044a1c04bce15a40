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
- A request whose Host is not this machine's address (an IP address, ``localhost``,
  or a name the tool was started with) is refused: a page of another site whose name
  is made to resolve to 127.0.0.1 (DNS rebinding) sends its own name as the Host.
- A request body is at most ``max_body`` bytes, counted as it arrives (a chunked body
  has no Content-Length to check): past that it is refused (413) and no more is read.
- ``image_file`` names a file inside the dataset's ``images/`` (or an imported release's
  ``release/``) or nothing: no
  ``..``, no absolute path, no link out, no folder.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "CSP",
    "IMAGE_FOLDERS",
    "MAX_BODY",
    "TokenGate",
    "host_allowed",
    "image_file",
    "same_origin",
    "sample_image",
]

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
#: the largest request body read (a decision form is a few kilobytes)
MAX_BODY = 1_000_000


def _host_name(host: str) -> str:
    """The name or address of a Host header, without its port or brackets, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    return host.rstrip(".")


def host_allowed(host: str | None, names: Iterable[str] = ()) -> bool:
    """Whether a request's Host header names this machine: an IP address, ``localhost``,
    or one of ``names``; a request with none (HTTP/1.0) passes."""
    if host is None:
        return True
    name = _host_name(host)
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    return (
        name == "localhost"
        or name.endswith(".localhost")
        or name in {n.lower().rstrip(".") for n in names}
    )


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

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        *,
        hosts: Iterable[str] = (),
        max_body: int = MAX_BODY,
    ) -> None:
        if not token or not token.replace("-", "").replace("_", "").isalnum():
            raise ValueError("the token must be URL-safe letters, digits, '-' and '_'")
        self.app = app
        self.prefix = "/" + token
        self.hosts = tuple(hosts)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not host_allowed(headers.get("host"), self.hosts):
            await _refuse(
                send,
                403,
                "wrong host",
                "This tool answers only at the address cartoqa review printed.",
            )
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
        if scope["method"] not in SAFE_METHODS and not same_origin(headers):
            await _refuse(send, 403, "refused", "A form from another site changes nothing.")
            return
        if scope["method"] not in SAFE_METHODS:
            body = await self._body(headers, receive)
            if body is None:
                await _refuse(
                    send,
                    413,
                    "too large",
                    f"A request to this tool is at most {self.max_body:,} bytes.",
                )
                return
            receive = _replay(body, receive)

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = list(HEADERS)
                if b"cache-control" not in have:
                    extra.append((b"cache-control", b"no-store"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app({**scope, "root_path": self.prefix}, receive, with_headers)

    async def _body(self, headers: dict[str, str], receive: Receive) -> bytes | None:
        """The request's body, read as it arrives; None once it passes ``max_body`` (or its
        Content-Length says it will), nothing more being read."""
        try:
            if int(headers.get("content-length") or 0) > self.max_body:
                return None
        except ValueError:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then waits on the real one (a disconnect)."""
    sent = False

    async def again() -> MutableMapping[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


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


#: the folders of a dataset whose files are its images: cartoqa's own, and an imported
#: release's (``cartoqa import-release``: a link to the release, or a copy of its images)
IMAGE_FOLDERS = ("images", "release")


def image_file(dataset_path: Path, relative: str, folder: str = "images") -> Path | None:
    """The file ``relative`` names inside ``dataset_path/folder`` (one of ``IMAGE_FOLDERS``),
    or None when it names anything else (``..``, an absolute path, a link out of that folder,
    a folder, nothing)."""
    if folder not in IMAGE_FOLDERS:
        return None
    root = (dataset_path / folder).resolve()
    if not relative or "\x00" in relative or "\\" in relative:
        return None
    try:
        path = (root / relative).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if not path.is_relative_to(root) or path == root or not path.is_file():
        return None
    return path


def sample_image(dataset_path: Path, image: str) -> Path | None:
    """The file a sample's image path ("images/x.png", "release/MapNavigation/_maps/1.png")
    names inside the dataset's image folders, or None."""
    folder, _, relative = image.partition("/")
    return image_file(dataset_path, relative, folder)
