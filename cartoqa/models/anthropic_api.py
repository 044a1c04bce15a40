"""``anthropic:MODEL[@BASE_URL]``: Claude through the ``anthropic`` SDK (the ``api`` extra).

Images go as base64 image blocks before the text, the system prompt as
``system``.  Retries, timeouts and fatal errors as in the OpenAI adapter
(529 "overloaded" is retried).  Settings the installed SDK's
``Messages.create`` does not take are left out and named in ``notes``:
``anthropic`` 2.x takes no ``temperature``, and the Messages API has never
taken a seed.  The key comes from ``ANTHROPIC_API_KEY`` (any key, or none,
for a base URL); a base URL is the server's root, without ``/v1``
(``anthropic:claude-x@http://127.0.0.1:8001``: the SDK adds ``/v1/messages``).
"""

from __future__ import annotations

import base64
from collections.abc import Collection
from typing import Any

from cartoqa.errors import MissingDependencyError

from ._api import (
    APIModel,
    MalformedReplyError,
    api_key,
    bounded_sdk_client,
    check_base_url,
    sdk_takes,
)
from ._images import image_bytes
from ._retry import Failure, RetryPolicy
from ._types import Request

__all__ = ["ANTHROPIC_URL", "OPTIONAL_PARAMS", "AnthropicModel", "build_anthropic_params"]

ANTHROPIC_URL = "https://api.anthropic.com"

OPTIONAL_PARAMS = frozenset({"temperature", "system"})
"""The arguments of ``messages.create`` that are sent only where the SDK takes them."""


def build_anthropic_params(
    request: Request, model: str, *, takes: Collection[str] = OPTIONAL_PARAMS
) -> dict[str, Any]:
    """The keyword arguments of ``client.messages.create`` for one request; of
    ``OPTIONAL_PARAMS``, only those in ``takes`` (what the installed SDK takes)."""
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
        "messages": [{"role": "user", "content": content}],
    }
    if "temperature" in takes:
        params["temperature"] = request.settings.temperature
    if request.system and "system" in takes:
        params["system"] = request.system
    return params


class AnthropicModel(APIModel):
    """Claude models."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        retry: RetryPolicy | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingDependencyError("anthropic", "api", "the anthropic adapter") from None
        super().__init__()
        self.model = model
        spec = f"anthropic:{model}" + (f"@{base_url}" if base_url else "")
        self.base_url = check_base_url(base_url, spec) if base_url else None
        self.spec = f"anthropic:{model}" + (f"@{self.base_url}" if self.base_url else "")
        self.endpoint = self.base_url or ANTHROPIC_URL
        self.key_env = api_key_env
        self.retry = retry or RetryPolicy()
        key = api_key(api_key_env, self.spec, required=base_url is None) or "no-key"
        # each try bounded by wall time, however slowly the server sends (see _wall_clock)
        http = bounded_sdk_client(anthropic.DefaultHttpxClient, timeout=self.retry.timeout_s)
        self._client = anthropic.Anthropic(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.retry.timeout_s,
            http_client=http,
        )
        sdk = f"anthropic {anthropic.__version__}"
        self._takes = sdk_takes(self._client.messages.create, OPTIONAL_PARAMS)
        self._leave_out(sdk, "Messages.create", OPTIONAL_PARAMS - self._takes)
        self.notes.append(f"{sdk}: the Messages API takes no seed; a seed setting is not sent")

    def _params(self, request: Request) -> dict[str, Any]:
        return build_anthropic_params(request, self.model, takes=self._takes)

    def _call(self, params: dict[str, Any], timeout_s: float) -> tuple[str, object, object]:
        message = self._client.messages.create(**params, timeout=timeout_s)
        blocks = getattr(message, "content", None) or []
        texts = [b.text for b in blocks if getattr(b, "type", None) == "text"]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise MalformedReplyError("the reply has no text block")
        usage = getattr(message, "usage", None)
        return (
            "".join(texts),
            getattr(usage, "input_tokens", None),
            getattr(usage, "output_tokens", None),
        )

    def _classify(self, exc: BaseException) -> Failure:
        import anthropic

        return self._classify_sdk(exc, anthropic)

    def close(self) -> None:
        self._client.close()
