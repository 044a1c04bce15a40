"""A fake server that speaks the Anthropic Messages API: real HTTP on 127.0.0.1.

It is not a model.  ``POST /v1/messages`` gets a deterministic reply in the
API's shape (a ``message`` with text content blocks and ``usage``), with
Anthropic's headers (``request-id``) and error JSON (``{"type": "error",
"error": {"type": "rate_limit_error", ...}}``), and the same faults as
``FakeOpenAIServer`` (``Fault``; 529 is ``overloaded_error``).  The request
log holds the decoded images, the system prompt and every other body field.

    with FakeAnthropicServer(faults=[Fault("529")]) as server:
        model = load_model(f"anthropic:claude-x@{server.url}")

From a shell:

    python -m cartoqa.testing.fake_anthropic --port 8001
    cartoqa run DATASET --model anthropic:claude-x@http://127.0.0.1:8001
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from ._fake_api import FakeAPIServer, Fault, LoggedRequest, decode_base64_image

__all__ = ["ERROR_TYPES", "FakeAnthropicServer", "Fault", "LoggedRequest"]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
"""The ``error.type`` Anthropic sends with each status."""


def _system_text(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system
    return "\n".join(block["text"] for block in system)


def _split_messages(messages: list[dict[str, Any]]) -> tuple[str, list[bytes]]:
    texts: list[str] = []
    images: list[bytes] = []
    for m in messages:
        if m["role"] not in ("user", "assistant"):
            raise ValueError(f"messages: unexpected role {m['role']!r}")
        content = m["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content:
            if block["type"] == "text":
                texts.append(block["text"])
            elif block["type"] == "image":
                source = block["source"]
                if source["type"] != "base64":
                    raise ValueError(f"image source type {source['type']!r} is not base64")
                if not str(source["media_type"]).startswith("image/"):
                    raise ValueError(f"image media_type {source['media_type']!r}")
                images.append(decode_base64_image(source["data"]))
            else:
                raise ValueError(f"unknown content block type {block['type']!r}")
    return "\n".join(texts), images


class FakeAnthropicServer(FakeAPIServer):
    """A deterministic Anthropic Messages API server on 127.0.0.1, in a background thread."""

    credential_headers = ("x-api-key", "Authorization")
    _overloaded_status = 529

    def _is_completion_path(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/messages"

    def _read_request(
        self, path: str, body: dict[str, Any]
    ) -> tuple[str, str, str | None, list[bytes], dict[str, Any]]:
        for required in ("model", "max_tokens", "messages"):
            if required not in body:
                raise ValueError(f"{required}: Field required")
        if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
            raise ValueError(f"max_tokens: {body['max_tokens']!r} is not a positive integer")
        text, images = _split_messages(body["messages"])
        params = {k: v for k, v in body.items() if k not in ("messages", "system")}
        return body["model"], text, _system_text(body.get("system")), images, params

    def _completion(
        self, model: str, answer: str, n_in: Any, n_out: Any, request_hash: str
    ) -> dict[str, Any]:
        return {
            "id": "msg_fake" + request_hash,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": n_in,
                "output_tokens": n_out,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def _empty_completion(self, model: str) -> dict[str, Any]:
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 0},
        }

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": "req_fake",
        }

    def _extra_get(self, path: str) -> dict[str, Any] | None:
        if path == "/v1/models":
            return {"data": [], "has_more": False, "first_id": None, "last_id": None}
        return None

    @property
    def url(self) -> str:
        """The base URL to give the SDK: http://127.0.0.1:PORT (it adds /v1/messages)."""
        return f"http://127.0.0.1:{self.port}"


def main() -> None:
    ap = argparse.ArgumentParser(description="A fake Anthropic Messages API server (not a model).")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = ap.parse_args()
    server = FakeAnthropicServer(latency_s=args.latency, port=args.port, keep_log=False)
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
