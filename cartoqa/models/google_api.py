"""``google:MODEL``: Gemini through the ``google-genai`` SDK (the ``api`` extra).

Images go as inline byte parts before the text; the system prompt as the
system instruction.  Retries, timeouts and fatal errors as in the OpenAI
adapter.  The key comes from ``GOOGLE_API_KEY`` (or ``GEMINI_API_KEY``).
"""

from __future__ import annotations

import os
from typing import Any

from cartoqa.errors import MissingDependencyError

from ._api import APIModel, MalformedReplyError, api_key, status_failure
from ._images import image_bytes
from ._retry import Failure, RetryPolicy
from ._types import Request

__all__ = ["GoogleModel", "build_google_request"]


def build_google_request(request: Request) -> tuple[list[Any], Any]:
    """(contents, config) for ``client.models.generate_content`` for one request."""
    try:
        from google.genai import types
    except ImportError:
        raise MissingDependencyError("google-genai", "api", "the google adapter") from None
    contents: list[Any] = []
    for p in request.images:
        data, media = image_bytes(p)
        contents.append(types.Part.from_bytes(data=data, mime_type=media))
    contents.append(request.text)
    s = request.settings
    config = types.GenerateContentConfig(
        system_instruction=request.system,
        temperature=s.temperature,
        max_output_tokens=s.max_tokens,
        seed=s.seed,
    )
    return contents, config


class GoogleModel(APIModel):
    """Gemini models."""

    def __init__(
        self, model: str, *, api_key_env: str | None = None, retry: RetryPolicy | None = None
    ) -> None:
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingDependencyError("google-genai", "api", "the google adapter") from None
        if api_key_env is None:
            api_key_env = "GEMINI_API_KEY" if os.environ.get("GEMINI_API_KEY") else "GOOGLE_API_KEY"
        self.model = model
        self.spec = f"google:{model}"
        self.key_env = api_key_env
        self.retry = retry or RetryPolicy()
        key = api_key(api_key_env, self.spec)
        self._client = genai.Client(
            api_key=key,
            http_options=types.HttpOptions(timeout=int(self.retry.timeout_s * 1000)),
        )

    def _params(self, request: Request) -> tuple[list[Any], Any]:
        return build_google_request(request)

    def _call(self, params: tuple[list[Any], Any]) -> tuple[str, int | None, int | None]:
        contents, config = params
        reply = self._client.models.generate_content(
            model=self.model, contents=contents, config=config
        )
        text = reply.text
        if text is None:
            raise MalformedReplyError("the reply has no text (blocked or empty candidates)")
        usage = reply.usage_metadata
        return (
            text,
            getattr(usage, "prompt_token_count", None),
            getattr(usage, "candidates_token_count", None),
        )

    def _classify(self, exc: BaseException) -> Failure:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            detail = f"HTTP {exc.code}: {str(exc.message)[:200]}"
            return status_failure(int(exc.code or 0), detail, self.key_env, None)
        name = type(exc).__name__.lower()
        if "timeout" in name or "connect" in name:
            return Failure("retry", f"{type(exc).__name__}: {str(exc)[:200]}")
        return Failure("fail", f"{type(exc).__name__}: {str(exc)[:200]}")
