"""What the fake API servers share: real HTTP on 127.0.0.1, faults on request, a request log.

A subclass speaks one provider's wire format: it says which path takes
completions, reads the request body into a ``LoggedRequest`` (decoding the
images), and writes the provider's reply and error JSON.  Faults, latency,
the log and the life cycle are here, the same for every provider.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

__all__ = [
    "FAULT_KINDS",
    "SURROGATE",
    "FakeAPIServer",
    "Fault",
    "FaultKind",
    "LoggedRequest",
    "decode_base64_image",
]

FaultKind = Literal[
    "429",
    "500",
    "529",
    "hang",
    "drop",
    "malformed",
    "empty",
    "401",
    "400",
    "negative_usage",
    "garbage_usage",
    "surrogate",
    "drip_headers",
    "drip_body",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]

_REPLY_FAULTS = ("negative_usage", "garbage_usage", "surrogate", "drip_headers", "drip_body")
"""Faults that still answer, with something odd in the reply (or in how it is sent)."""

SURROGATE = "\ud800"
"""The lone surrogate the ``surrogate`` fault puts in a reply (JSON-escaped as ``\\ud800``)."""


@dataclass
class Fault:
    """Answer requests whose user text contains ``match`` with a fault, ``times`` times."""

    kind: FaultKind
    """429: rate limited, with Retry-After (``retry_after``); 500: internal error; 529:
    overloaded (Anthropic's 529 ``overloaded_error``; OpenAI-style servers send 529 too,
    Gemini its 503 UNAVAILABLE); hang: no reply for ``hang_s``; drop: the connection is closed
    without a reply; malformed: 200 with a body that is not JSON; empty: 200 with no text
    (no choices, no content blocks, no candidates); 401: the key refused, the way the provider
    does it (Gemini: 400 INVALID_ARGUMENT with reason API_KEY_INVALID); 400: bad request;
    negative_usage: a normal reply whose token counts are -5; garbage_usage: a normal reply
    whose token counts are the string "many"; surrogate: a normal reply whose text ends in a
    lone surrogate, JSON-escaped (``SURROGATE``); drip_headers: a normal reply whose status
    line and headers are sent one byte every ``drip_s`` seconds (then the body at once);
    drip_body: a normal reply whose headers come at once and its body one byte every
    ``drip_s`` seconds (a server that is slow, not silent: no read ever waits long)."""
    match: str = "*"
    """A substring of the user text; "*" matches every request."""
    times: int = 1
    """How many matching requests get the fault; -1 for all of them."""
    retry_after: float | None = 0.0
    """The Retry-After header of a 429, in seconds (None: no header)."""
    hang_s: float = 30.0
    """How long a hang lasts."""
    drip_s: float = 0.5
    """The pause between two bytes of a dripped reply."""
    hits: int = 0
    """How many requests got this fault so far."""

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"fault kind {self.kind!r} is not one of {', '.join(FAULT_KINDS)}")

    def take(self, text: str) -> bool:
        if self.match != "*" and self.match not in text:
            return False
        if self.times >= 0 and self.hits >= self.times:
            return False
        self.hits += 1
        return True


@dataclass
class LoggedRequest:
    """What the server received in one request."""

    model: str
    text: str
    """The user text, parts joined by newlines."""
    system: str | None
    images: list[bytes]
    """The images, decoded from base64."""
    params: dict[str, Any]
    """The rest of the request body (settings), as sent."""
    authorization: str | None
    """The credential header as sent: ``Authorization`` (OpenAI; Anthropic's SDK 2.x sends its
    key this way too), ``x-api-key`` (Anthropic), ``x-goog-api-key`` (Gemini)."""
    fault: str | None = None
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    """Every request header, names lower-cased."""
    at: float = field(default_factory=time.time)

    @property
    def image_sha256(self) -> list[str]:
        return [hashlib.sha256(b).hexdigest() for b in self.images]


def decode_base64_image(data: str, *, urlsafe: bool = False) -> bytes:
    """Image bytes from base64 text (also the URL-safe alphabet, ``-`` and ``_``, where
    ``urlsafe``: Google's JSON writes bytes so); ValueError when it is not base64 (the server
    says 400)."""
    if urlsafe:
        return base64.b64decode(data, altchars=b"-_", validate=True)
    return base64.b64decode(data, validate=True)


class FakeAPIServer:
    """A deterministic HTTP server on 127.0.0.1, in a background thread (not a model).

    Subclasses implement ``_is_completion_path``, ``_read_request``, ``_completion``,
    ``_empty_completion`` and ``_error_body``, and may change the status codes of the
    faults (``_overloaded_status``, ``_key_refused``).
    """

    credential_headers: tuple[str, ...] = ("Authorization",)
    """The request headers that may carry the key, the first one present is logged."""
    _overloaded_status = 529

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        faults: list[Fault] | None = None,
        answers: dict[str, str] | None = None,
        port: int = 0,
        keep_log: bool = True,
    ) -> None:
        self.latency_s = latency_s
        self.faults = list(faults or [])
        self.answers = dict(answers or {})
        self.keep_log = keep_log
        self.log: list[LoggedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        """The most requests the server was answering at one time."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ the provider's format

    def _is_completion_path(self, path: str) -> bool:
        raise NotImplementedError

    def _read_request(
        self, path: str, body: dict[str, Any]
    ) -> tuple[str, str, str | None, list[bytes], dict[str, Any]]:
        """(model, user text, system prompt, images, other params); ValueError, KeyError or
        TypeError for a request the provider would refuse with 400."""
        raise NotImplementedError

    def _completion(
        self, model: str, answer: str, n_in: Any, n_out: Any, request_hash: str
    ) -> dict[str, Any]:
        """The reply body for an answer with these token counts."""
        raise NotImplementedError

    def _empty_completion(self, model: str) -> dict[str, Any]:
        """A 200 reply with no text in it."""
        raise NotImplementedError

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def _key_refused(self) -> tuple[int, dict[str, Any]]:
        """The status and body of a refused key."""
        return 401, self._error_body(401, "invalid API key (fake)")

    def _rate_limited(self, retry_after: float | None) -> tuple[dict[str, Any], dict[str, str]]:
        """The body and headers of a 429: a Retry-After header when ``retry_after`` is set."""
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        return self._error_body(429, "rate limited (fake)"), headers

    def _extra_get(self, path: str) -> dict[str, Any] | None:
        """A body for a GET the provider answers (a model list), else None (404)."""
        return None

    # ------------------------------------------------------------ answers

    @staticmethod
    def reply_for(text: str) -> str:
        """The default answer: a function of the user text alone."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
        return f"Fake reply {digest}.\nFINAL ANSWER: {digest}"

    @staticmethod
    def input_tokens_for(text: str, n_images: int) -> int:
        """The prompt tokens the server reports: words of the text, 85 per image."""
        return len(text.split()) + 85 * n_images

    @staticmethod
    def output_tokens_for(answer: str) -> int:
        """The answer tokens the server reports: words of the answer."""
        return len(answer.split())

    def _answer(self, text: str) -> str:
        for needle, answer in self.answers.items():
            if needle in text:
                return answer
        return self.reply_for(text)

    def _fault_for(self, text: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.take(text):
                    return f
        return None

    # ------------------------------------------------------------ HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)
                # headers and body go out as separate writes: without this, Nagle's algorithm
                # and the client's delayed ACK add about 40 ms to every reply
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _json(
                self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                # ensure_ascii (the default) writes a lone surrogate as the escape \ud800
                self._send(status, json.dumps(body).encode("ascii"), headers)

            def _error(
                self, status: int, message: str, headers: dict[str, str] | None = None
            ) -> None:
                self._json(status, server._error_body(status, message), headers)

            def do_GET(self) -> None:
                body = server._extra_get(self.path.split("?")[0].rstrip("/"))
                if body is None:
                    self._error(404, f"no route {self.path}")
                else:
                    self._json(200, body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?")[0]
                if not server._is_completion_path(path):
                    self._error(404, f"no route {self.path}")
                    return
                try:
                    body = json.loads(raw)
                    model, text, system, images, params = server._read_request(path, body)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    self._error(400, f"bad request: {exc}")
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer_request(raw, path, model, text, system, images, params)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer_request(
                self,
                raw: bytes,
                path: str,
                model: str,
                text: str,
                system: str | None,
                images: list[bytes],
                params: dict[str, Any],
            ) -> None:
                fault = server._fault_for(text)
                if server.keep_log:
                    entry = LoggedRequest(
                        model=model,
                        text=text,
                        system=system,
                        images=images,
                        params=params,
                        authorization=next(
                            (
                                self.headers[h]
                                for h in server.credential_headers
                                if h in self.headers
                            ),
                            None,
                        ),
                        fault=fault.kind if fault else None,
                        path=path,
                        headers={k.lower(): v for k, v in self.headers.items()},
                    )
                    with server._lock:
                        server.log.append(entry)
                if server.latency_s:
                    time.sleep(server.latency_s)
                kind = fault.kind if fault else None
                if fault is not None and kind not in _REPLY_FAULTS:
                    self._fault(fault)
                    return
                answer = server._answer(text)
                n_in: Any = server.input_tokens_for(text, len(images))
                n_out: Any = server.output_tokens_for(answer)
                if kind == "negative_usage":
                    n_in = n_out = -5
                elif kind == "garbage_usage":
                    n_in = n_out = "many"
                elif kind == "surrogate":
                    answer += SURROGATE
                digest = hashlib.sha256(raw).hexdigest()[:12]
                reply = server._completion(model, answer, n_in, n_out, digest)
                if fault is not None and kind in ("drip_headers", "drip_body"):
                    self._drip(json.dumps(reply).encode("ascii"), fault)
                    return
                self._json(200, reply)

            def _drip(self, body: bytes, fault: Fault) -> None:
                """A 200 reply sent slowly: the head or the body one byte at a time."""
                head = (
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n"
                ).encode("ascii")
                slow, fast = (head, b"") if fault.kind == "drip_headers" else (b"", head)
                self.close_connection = True
                try:
                    if fast:
                        self.wfile.write(fast)
                        self.wfile.flush()
                    for i in range(len(slow)):
                        self.wfile.write(slow[i : i + 1])
                        self.wfile.flush()
                        if server._stop.wait(fault.drip_s):
                            return
                    if fault.kind == "drip_headers":
                        self.wfile.write(body)
                        return
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        if server._stop.wait(fault.drip_s):
                            return
                except OSError:  # the client gave up and closed the connection
                    return

            def _fault(self, fault: Fault) -> None:
                if fault.kind == "429":
                    body, headers = server._rate_limited(fault.retry_after)
                    self._json(429, body, headers)
                elif fault.kind == "500":
                    self._error(500, "internal error (fake)")
                elif fault.kind == "529":
                    self._error(server._overloaded_status, "overloaded (fake)")
                elif fault.kind == "401":
                    status, body = server._key_refused()
                    self._json(status, body)
                elif fault.kind == "400":
                    self._error(400, "bad request (fake)")
                elif fault.kind == "hang":
                    server._stop.wait(fault.hang_s)
                    self.close_connection = True
                elif fault.kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                elif fault.kind == "malformed":
                    self._send(200, b'{"id": "fake", "content": [{"type": ')
                elif fault.kind == "empty":
                    self._json(200, server._empty_completion("fake"))

        return Handler

    # ------------------------------------------------------------ life cycle

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give a client."""
        raise NotImplementedError

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (for ``python -m`` use)."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        """Stop listening and close every open connection (kept-alive ones too), as a server
        that goes away does."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            live = list(self._connections)
        for conn in live:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
