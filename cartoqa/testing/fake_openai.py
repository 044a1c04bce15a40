"""A fake OpenAI-compatible server for tests and benchmarks: real HTTP on 127.0.0.1.

It is not a model.  It answers ``POST /v1/chat/completions`` deterministically
(``FakeOpenAIServer.reply_for(text)``, or a canned answer for prompts that
contain a given string), after a fixed latency, and injects faults on
request: 429 with Retry-After, 500, a hang past the client's timeout,
malformed JSON, an empty choice list, 401.  It logs every request it got,
with what it made of the images (decoded bytes and their SHA-256), so tests
can prove what reached the server.

    with FakeOpenAIServer(latency_s=0.1, faults=[Fault("429", match="q-003")]) as server:
        model = OpenAIModel("fake", base_url=server.url)

Or from a shell, for trying the runner by hand:

    python -m cartoqa.testing.fake_openai --port 8000 --latency 0.1
    cartoqa run DATASET --model openai:fake@http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["FakeOpenAIServer", "Fault", "LoggedRequest"]

FaultKind = Literal["429", "500", "hang", "malformed", "empty", "401", "400"]


@dataclass
class Fault:
    """Answer requests whose user text contains ``match`` with a fault, ``times`` times."""

    kind: FaultKind
    """429 (with Retry-After), 500, hang (no reply for ``hang_s``), malformed (200 with a body
    that is not JSON), empty (200 with no choices), 401 (key refused), 400 (bad request)."""
    match: str = "*"
    """A substring of the user text; "*" matches every request."""
    times: int = 1
    """How many matching requests get the fault; -1 for all of them."""
    retry_after: float | None = 0.0
    """The Retry-After header of a 429, in seconds (None: no header)."""
    hang_s: float = 30.0
    """How long a hang lasts."""
    hits: int = 0
    """How many requests got this fault so far."""

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
    system: str | None
    images: list[bytes]
    params: dict[str, Any]
    authorization: str | None
    fault: str | None = None
    at: float = field(default_factory=time.time)

    @property
    def image_sha256(self) -> list[str]:
        return [hashlib.sha256(b).hexdigest() for b in self.images]


def _split_content(messages: list[dict]) -> tuple[str, str | None, list[bytes]]:
    text_parts: list[str] = []
    system = None
    images: list[bytes] = []
    for m in messages:
        content = m.get("content")
        if m.get("role") == "system":
            system = content if isinstance(content, str) else json.dumps(content)
            continue
        if isinstance(content, str):
            text_parts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                text_parts.append(part["text"])
            elif part.get("type") == "image_url":
                url = part["image_url"]["url"]
                header, _, b64 = url.partition(",")
                if not header.startswith("data:image/") or ";base64" not in header:
                    raise ValueError(f"image URL is not a base64 data URI: {url[:40]!r}")
                images.append(base64.b64decode(b64, validate=True))
    return "\n".join(text_parts), system, images


class FakeOpenAIServer:
    """A deterministic OpenAI-compatible HTTP server on 127.0.0.1, in a background thread."""

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
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ answers

    @staticmethod
    def reply_for(text: str) -> str:
        """The default answer: a function of the user text alone."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
        return f"Fake reply {digest}.\nFINAL ANSWER: {digest}"

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
                # headers and body go out as separate writes: without this, Nagle's algorithm
                # and the client's delayed ACK add about 40 ms to every reply
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

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

            def _error(
                self, status: int, message: str, headers: dict[str, str] | None = None
            ) -> None:
                body = {"error": {"message": message, "type": "fake_error", "code": status}}
                self._send(status, json.dumps(body).encode(), headers)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, json.dumps({"object": "list", "data": []}).encode())
                else:
                    self._error(404, f"no route {self.path}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._error(404, f"no route {self.path}")
                    return
                try:
                    body = json.loads(raw)
                    text, system, images = _split_content(body["messages"])
                except (ValueError, KeyError, TypeError) as exc:
                    self._error(400, f"bad request: {exc}")
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer_request(raw, body, text, system, images)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer_request(
                self, raw: bytes, body: dict, text: str, system: str | None, images: list[bytes]
            ) -> None:
                fault = server._fault_for(text)
                if server.keep_log:
                    params = {k: v for k, v in body.items() if k != "messages"}
                    entry = LoggedRequest(
                        model=body.get("model", ""),
                        text=text,
                        system=system,
                        images=images,
                        params=params,
                        authorization=self.headers.get("Authorization"),
                        fault=fault.kind if fault else None,
                    )
                    with server._lock:
                        server.log.append(entry)
                if server.latency_s:
                    time.sleep(server.latency_s)
                if fault is not None:
                    self._fault(fault)
                    return
                answer = server._answer(text)
                completion = {
                    "id": "fake-" + hashlib.sha256(raw).hexdigest()[:12],
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": len(text.split()) + 85 * len(images),
                        "completion_tokens": len(answer.split()),
                        "total_tokens": len(text.split()) + 85 * len(images) + len(answer.split()),
                    },
                }
                self._send(200, json.dumps(completion).encode())

            def _fault(self, fault: Fault) -> None:
                if fault.kind == "429":
                    headers = {}
                    if fault.retry_after is not None:
                        headers["Retry-After"] = f"{fault.retry_after:g}"
                    self._error(429, "rate limited (fake)", headers)
                elif fault.kind == "500":
                    self._error(500, "internal error (fake)")
                elif fault.kind == "401":
                    self._error(401, "invalid API key (fake)")
                elif fault.kind == "400":
                    self._error(400, "bad request (fake)")
                elif fault.kind == "hang":
                    server._stop.wait(fault.hang_s)
                    self.close_connection = True
                elif fault.kind == "malformed":
                    self._send(200, b'{"id": "fake", "choices": [{"message": ')
                elif fault.kind == "empty":
                    body = {
                        "id": "fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "fake",
                        "choices": [],
                    }
                    self._send(200, json.dumps(body).encode())

        return Handler

    # ------------------------------------------------------------ life cycle

    @property
    def url(self) -> str:
        """The base URL to give a client: http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description="A fake OpenAI-compatible server (not a model).")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = ap.parse_args()
    server = FakeOpenAIServer(latency_s=args.latency, port=args.port, keep_log=False)
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server._httpd.serve_forever()


if __name__ == "__main__":
    main()
