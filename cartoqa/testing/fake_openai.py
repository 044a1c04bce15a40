"""A fake OpenAI-compatible server for tests and benchmarks: real HTTP on 127.0.0.1.

It is not a model.  It answers ``POST /v1/chat/completions`` deterministically
(``FakeOpenAIServer.reply_for(text)``, or a canned answer for prompts that
contain a given string), after a fixed latency, and injects faults on
request (``Fault``: 429 with Retry-After, 500, 529, a hang past the client's
timeout, a reply whose headers or body drip a byte at a time, a dropped
connection, malformed JSON, an empty choice list, 401, 400, negative or
garbage token counts, a lone surrogate in the text).  It
logs every request it got, with what it made of the images (decoded bytes
and their SHA-256), so tests can prove what reached the server.

    with FakeOpenAIServer(latency_s=0.1, faults=[Fault("429", match="q-003")]) as server:
        model = OpenAIModel("fake", base_url=server.url)

Or from a shell, for trying the runner by hand:

    python -m cartoqa.testing.fake_openai --port 8000 --latency 0.1
    cartoqa run DATASET --model openai:fake@http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from typing import Any

from ._fake_api import FakeAPIServer, Fault, LoggedRequest, decode_base64_image

__all__ = ["FakeOpenAIServer", "Fault", "LoggedRequest"]


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
                images.append(decode_base64_image(b64))
    return "\n".join(text_parts), system, images


class FakeOpenAIServer(FakeAPIServer):
    """A deterministic OpenAI-compatible HTTP server on 127.0.0.1, in a background thread."""

    credential_headers = ("Authorization",)

    def _is_completion_path(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/chat/completions"

    def _read_request(
        self, path: str, body: dict[str, Any]
    ) -> tuple[str, str, str | None, list[bytes], dict[str, Any]]:
        text, system, images = _split_content(body["messages"])
        params = {k: v for k, v in body.items() if k != "messages"}
        return body.get("model", ""), text, system, images, params

    def _completion(
        self, model: str, answer: str, n_in: Any, n_out: Any, request_hash: str
    ) -> dict[str, Any]:
        total = n_in + n_out if isinstance(n_in, int) and isinstance(n_out, int) else n_in
        return {
            "id": "fake-" + request_hash,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model or "fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": total},
        }

    def _empty_completion(self, model: str) -> dict[str, Any]:
        return {
            "id": "fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [],
        }

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "fake_error", "code": status}}

    def _extra_get(self, path: str) -> dict[str, Any] | None:
        return {"object": "list", "data": []} if path == "/v1/models" else None

    @property
    def url(self) -> str:
        """The base URL to give a client: http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"


def main() -> None:
    ap = argparse.ArgumentParser(description="A fake OpenAI-compatible server (not a model).")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = ap.parse_args()
    server = FakeOpenAIServer(latency_s=args.latency, port=args.port, keep_log=False)
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
