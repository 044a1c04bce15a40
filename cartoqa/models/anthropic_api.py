"""``anthropic:MODEL``: Claude through the official ``anthropic`` SDK (the ``api`` extra).

Images go as base64 image blocks before the text.  Retries, timeouts and
fatal errors as in the OpenAI adapter (529 "overloaded" is retried).  The key
comes from ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import base64
from typing import Any

from cartoqa.errors import MissingDependencyError

from ._api import APIModel, MalformedReplyError, api_key
from ._images import image_bytes
from ._retry import Failure, RetryPolicy
from ._types import Request

__all__ = ["AnthropicModel", "build_anthropic_params"]


def build_anthropic_params(request: Request, model: str) -> dict[str, Any]:
    """The keyword arguments of ``client.messages.create`` for one request."""
    content: list[dict[str, Any]] = []
    for p in request.images:
        data, media = image_bytes(p)
        content.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": media,
                    "data": base64.b64encode(data).decode("ascii"),
                },
            }
        )
    content.append({"type": "text", "text": request.text})
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.settings.max_tokens,
        "temperature": request.settings.temperature,
        "messages": [{"role": "user", "content": content}],
    }
    if request.system:
        params["system"] = request.system
    return params


class AnthropicModel(APIModel):
    """Claude models."""

    def __init__(
        self,
        model: str,
        *,
        api_key_env: str = "ANTHROPIC_API_KEY",
        retry: RetryPolicy | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingDependencyError("anthropic", "api", "the anthropic adapter") from None
        self.model = model
        self.spec = f"anthropic:{model}"
        self.key_env = api_key_env
        self.retry = retry or RetryPolicy()
        key = api_key(api_key_env, self.spec)
        self._client = anthropic.Anthropic(api_key=key, max_retries=0, timeout=self.retry.timeout_s)

    def _params(self, request: Request) -> dict[str, Any]:
        return build_anthropic_params(request, self.model)

    def _call(self, params: dict[str, Any]) -> tuple[str, int | None, int | None]:
        message = self._client.messages.create(**params)
        texts = [b.text for b in message.content if getattr(b, "type", None) == "text"]
        if not texts:
            raise MalformedReplyError("the reply has no text block")
        usage = message.usage
        return "".join(texts), usage.input_tokens, usage.output_tokens

    def _classify(self, exc: BaseException) -> Failure:
        import anthropic

        return self._classify_sdk(exc, anthropic)

    def close(self) -> None:
        self._client.close()
