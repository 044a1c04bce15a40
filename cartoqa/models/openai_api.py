"""``openai:MODEL[@BASE_URL]``: any OpenAI-compatible chat completions server.

OpenAI itself, vLLM's and SGLang's servers, OpenRouter, Ollama.  Images go
as base64 data URIs.  The official ``openai`` SDK is used with its own
retries off: this adapter retries 429, 5xx, timeouts, dropped connections
and malformed replies with exponential backoff and jitter, waiting at least
what Retry-After says, and records a request as failed when the retries run
out.  A refused key or an unknown model stops the run (every request would
fail the same way), and so does an endpoint that never answered this model
(connection refused, no reply in time): see ``APIModel``.  Settings the
installed SDK does not take are left out and named in ``notes``.  The key
comes from an environment variable (``OPENAI_API_KEY`` by default; any key,
or none, for a base URL) and is never logged or stored.
"""

from __future__ import annotations

from typing import Any

from ._api import (
    APIModel,
    MalformedReplyError,
    api_key,
    bounded_sdk_client,
    check_base_url,
    sdk_takes,
)
from ._images import data_uri
from ._retry import Failure, RetryPolicy
from ._types import Request

__all__ = ["OPENAI_URL", "OpenAIModel", "build_messages"]

OPENAI_URL = "https://api.openai.com/v1"


def build_messages(request: Request) -> list[dict[str, Any]]:
    """The chat messages for one request: system, then the images and the text."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    if request.images:
        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": data_uri(p)}} for p in request.images
        ]
        content.append({"type": "text", "text": request.text})
        messages.append({"role": "user", "content": content})
    else:
        messages.append({"role": "user", "content": request.text})
    return messages


class OpenAIModel(APIModel):
    """Chat completions from an OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        retry: RetryPolicy | None = None,
    ) -> None:
        import openai

        super().__init__()
        self.model = model
        spec = f"openai:{model}" + (f"@{base_url}" if base_url else "")
        self.base_url = check_base_url(base_url, spec) if base_url else OPENAI_URL
        self.spec = f"openai:{model}" + (f"@{self.base_url}" if base_url else "")
        self.endpoint = self.base_url
        self.key_env = api_key_env
        self.retry = retry or RetryPolicy()
        # a local server (a base URL was given) takes any key
        key = api_key(api_key_env, self.spec, required=base_url is None) or "no-key"
        self._official = self.base_url == OPENAI_URL
        # each try bounded by wall time, however slowly the server sends (see _wall_clock)
        http = bounded_sdk_client(openai.DefaultHttpxClient, timeout=self.retry.timeout_s)
        self._client = openai.OpenAI(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.retry.timeout_s,
            http_client=http,
        )
        # OpenAI's newer models take only max_completion_tokens; other servers know max_tokens
        self._max_tokens_name = "max_completion_tokens" if self._official else "max_tokens"
        wanted = {"temperature", "seed", self._max_tokens_name}
        self._takes = sdk_takes(self._client.chat.completions.create, wanted)
        self._leave_out(
            f"openai {openai.__version__}", "chat.completions.create", wanted - self._takes
        )

    def _params(self, request: Request) -> dict[str, Any]:
        s = request.settings
        params: dict[str, Any] = {"model": self.model, "messages": build_messages(request)}
        if "temperature" in self._takes:
            params["temperature"] = s.temperature
        if self._max_tokens_name in self._takes:
            params[self._max_tokens_name] = s.max_tokens
        if s.seed is not None and "seed" in self._takes:
            params["seed"] = s.seed
        return params

    def _call(self, params: dict[str, Any], timeout_s: float) -> tuple[str, object, object]:
        completion = self._client.chat.completions.create(**params, timeout=timeout_s)
        if not getattr(completion, "choices", None):
            raise MalformedReplyError("the reply has no choices")
        text = completion.choices[0].message.content
        if not isinstance(text, str):
            raise MalformedReplyError("the reply's first choice has no content")
        usage = getattr(completion, "usage", None)
        return (
            text,
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
        )

    def _classify(self, exc: BaseException) -> Failure:
        import openai

        return self._classify_sdk(exc, openai)

    def close(self) -> None:
        self._client.close()
