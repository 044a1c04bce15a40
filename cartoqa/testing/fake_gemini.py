"""A fake server that speaks the Gemini generateContent API: real HTTP on 127.0.0.1.

It is not a model.  ``POST /{version}/models/{model}:generateContent`` (what
``google-genai`` sends when given ``HttpOptions(base_url=...)``) gets a
deterministic reply in the API's shape (``candidates`` with text parts,
``usageMetadata``), and errors in Google's JSON (``{"error": {"code": 429,
"status": "RESOURCE_EXHAUSTED", "details": [RetryInfo]}}``).  The faults are
``FakeOpenAIServer``'s (``Fault``), told the Gemini way: 429 carries its wait
as a RetryInfo ``retryDelay``, not a header; the overloaded fault is 503
UNAVAILABLE; a refused key is 400 INVALID_ARGUMENT with reason
API_KEY_INVALID, as Gemini answers one.

    with FakeGeminiServer() as server:
        model = load_model(f"google:gemini-x@{server.url}")

From a shell:

    python -m cartoqa.testing.fake_gemini --port 8002
    cartoqa run DATASET --model google:gemini-x@http://127.0.0.1:8002
"""

from __future__ import annotations

import argparse
import contextlib
import re
from typing import Any

from ._fake_api import FakeAPIServer, Fault, LoggedRequest, decode_base64_image

__all__ = ["STATUS_NAMES", "FakeGeminiServer", "Fault", "LoggedRequest"]

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""The ``error.status`` Google sends with each HTTP status."""

_PATH = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:]+):generateContent$")


def _parts_text_and_images(parts: list[dict[str, Any]]) -> tuple[list[str], list[bytes]]:
    texts: list[str] = []
    images: list[bytes] = []
    for part in parts:
        if "text" in part:
            texts.append(part["text"])
        elif "inlineData" in part or "inline_data" in part:
            blob = part.get("inlineData") or part["inline_data"]
            mime = blob.get("mimeType") or blob.get("mime_type") or ""
            if not mime.startswith("image/"):
                raise ValueError(f"inlineData mimeType {mime!r} is not an image")
            images.append(decode_base64_image(blob["data"], urlsafe=True))
        else:
            raise ValueError(f"unknown part {sorted(part)}")
    return texts, images


class FakeGeminiServer(FakeAPIServer):
    """A deterministic Gemini API server on 127.0.0.1, in a background thread."""

    credential_headers = ("x-goog-api-key",)
    _overloaded_status = 503

    def _is_completion_path(self, path: str) -> bool:
        return _PATH.match(path) is not None

    def _read_request(
        self, path: str, body: dict[str, Any]
    ) -> tuple[str, str, str | None, list[bytes], dict[str, Any]]:
        match = _PATH.match(path)
        assert match is not None
        texts: list[str] = []
        images: list[bytes] = []
        for content in body["contents"]:
            t, i = _parts_text_and_images(content["parts"])
            texts += t
            images += i
        system = None
        instruction = body.get("systemInstruction") or body.get("system_instruction")
        if instruction is not None:
            system = "\n".join(_parts_text_and_images(instruction["parts"])[0])
        params = {
            k: v
            for k, v in body.items()
            if k not in ("contents", "systemInstruction", "system_instruction")
        }
        params["api_version"] = match.group(1)
        return match.group(2), "\n".join(texts), system, images, params

    def _completion(
        self, model: str, answer: str, n_in: Any, n_out: Any, request_hash: str
    ) -> dict[str, Any]:
        total = n_in + n_out if isinstance(n_in, int) and isinstance(n_out, int) else n_in
        return {
            "candidates": [
                {
                    "content": {"parts": [{"text": answer}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": n_in,
                "candidatesTokenCount": n_out,
                "totalTokenCount": total,
            },
            "modelVersion": model,
            "responseId": "fake" + request_hash,
        }

    def _empty_completion(self, model: str) -> dict[str, Any]:
        return {
            "candidates": [],
            "promptFeedback": {"blockReason": "OTHER"},
            "usageMetadata": {"promptTokenCount": 1, "totalTokenCount": 1},
            "modelVersion": model,
        }

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {"code": status, "message": message, "status": STATUS_NAMES.get(status, "")}
        }

    def _rate_limited(self, retry_after: float | None) -> tuple[dict[str, Any], dict[str, str]]:
        body = self._error_body(429, "Resource has been exhausted (fake)")
        if retry_after is not None:
            body["error"]["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{retry_after:g}s",
                }
            ]
        return body, {}

    def _key_refused(self) -> tuple[int, dict[str, Any]]:
        body = self._error_body(400, "API key not valid. Please pass a valid API key. (fake)")
        body["error"]["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ]
        return 400, body

    @property
    def url(self) -> str:
        """The base URL to give the SDK: http://127.0.0.1:PORT (it adds /VERSION/models/...)."""
        return f"http://127.0.0.1:{self.port}"


def main() -> None:
    ap = argparse.ArgumentParser(description="A fake Gemini API server (not a model).")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    args = ap.parse_args()
    server = FakeGeminiServer(latency_s=args.latency, port=args.port, keep_log=False)
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
