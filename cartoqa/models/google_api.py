"""``google:MODEL[@BASE_URL]``: Gemini through the ``google-genai`` SDK (the ``api`` extra).

Images go as inline byte parts before the text; the system prompt as the
system instruction.  Retries, timeouts and fatal errors as in the OpenAI
adapter; a 429's wait comes from its RetryInfo ``retryDelay`` (or a
Retry-After header), and a key Gemini refuses (400 with reason
API_KEY_INVALID, or 401/403) stops the run.  Settings the installed SDK's
``GenerateContentConfig`` does not take are left out and named in
``notes``.  The reply is read from its JSON body (the SDK's own parsing
refuses a whole reply over one bad token count), then through the SDK's
response type.  The key comes from ``GOOGLE_API_KEY`` (or ``GEMINI_API_KEY``;
any key, or none, for a base URL); a base URL is the server's root
(``google:gemini-x@http://127.0.0.1:8002``: the SDK adds
``/v1/models/MODEL:generateContent``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from typing import Any

from cartoqa.errors import MissingDependencyError

from ._api import (
    APIModel,
    MalformedReplyError,
    api_key,
    bounded_client,
    check_base_url,
    status_failure,
    transport_failure,
)
from ._images import image_bytes
from ._retry import Failure, RetryPolicy, parse_retry_after
from ._types import Request

__all__ = ["CONFIG_FIELDS", "GOOGLE_URL", "GoogleModel", "build_google_request"]

GOOGLE_URL = "https://generativelanguage.googleapis.com"

CONFIG_FIELDS = frozenset({"system_instruction", "temperature", "max_output_tokens", "seed"})
"""The fields of ``GenerateContentConfig`` set from a request, where the SDK has them."""


def _types() -> Any:
    try:
        from google.genai import types
    except ImportError:
        raise MissingDependencyError("google-genai", "api", "the google adapter") from None
    return types


def build_google_request(
    request: Request, *, takes: Collection[str] = CONFIG_FIELDS
) -> tuple[list[Any], Any]:
    """(contents, config) for ``client.models.generate_content`` for one request; of
    ``CONFIG_FIELDS``, only those in ``takes`` (what the installed SDK has) are set."""
    types = _types()
    contents: list[Any] = []
    for p in request.images:
        data, media = image_bytes(p)
        contents.append(types.Part.from_bytes(data=data, mime_type=media))
    contents.append(request.text)
    s = request.settings
    values = {
        "system_instruction": request.system,
        "temperature": s.temperature,
        "max_output_tokens": s.max_tokens,
        "seed": s.seed,
    }
    config = types.GenerateContentConfig(**{k: v for k, v in values.items() if k in takes})
    return contents, config


def _bounded_http_client(timeout_s: float) -> Any:
    """An httpx2 client (httpx where httpx2 is not installed) bounded by wall time."""
    import importlib

    for name in ("httpx2", "httpx"):
        try:
            http = importlib.import_module(name)
        except ImportError:
            continue
        return bounded_client(http, timeout=timeout_s)
    raise MissingDependencyError("httpx", "api", "the google adapter")


def _retry_delay(details: object) -> float | None:
    """Seconds from a google.rpc.RetryInfo in an error's details ("1.5s"), if there is one."""
    error = details.get("error", details) if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            delay = item.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                return parse_retry_after(delay[:-1])
    return None


def _key_invalid(details: object) -> bool:
    error = details.get("error", details) if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    return any(
        isinstance(item, dict) and item.get("reason") == "API_KEY_INVALID"
        for item in (items if isinstance(items, list) else [])
    )


class GoogleModel(APIModel):
    """Gemini models."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingDependencyError("google-genai", "api", "the google adapter") from None
        super().__init__()
        if api_key_env is None:
            api_key_env = "GEMINI_API_KEY" if os.environ.get("GEMINI_API_KEY") else "GOOGLE_API_KEY"
        self.model = model
        spec = f"google:{model}" + (f"@{base_url}" if base_url else "")
        self.base_url = check_base_url(base_url, spec) if base_url else None
        self.spec = f"google:{model}" + (f"@{self.base_url}" if self.base_url else "")
        self.endpoint = self.base_url or GOOGLE_URL
        self.key_env = api_key_env
        self.retry = retry or RetryPolicy()
        key = api_key(api_key_env, self.spec, required=base_url is None) or "no-key"
        options: dict[str, Any] = {"timeout": int(self.retry.timeout_s * 1000)}
        if self.base_url:
            options["base_url"] = self.base_url
        if "httpx_client" in types.HttpOptions.model_fields:
            # each try bounded by wall time, however slowly the server sends (_wall_clock)
            options["httpx_client"] = _bounded_http_client(self.retry.timeout_s)
        self._client = genai.Client(api_key=key, http_options=types.HttpOptions(**options))
        fields = set(types.GenerateContentConfig.model_fields)
        self._takes = CONFIG_FIELDS & fields
        version = getattr(genai, "__version__", "?")
        self._leave_out(f"google-genai {version}", "GenerateContentConfig", CONFIG_FIELDS - fields)
        self._raw = "should_return_http_response" in fields

    def _params(self, request: Request) -> tuple[list[Any], Any]:
        return build_google_request(request, takes=self._takes)

    def _call(self, params: tuple[list[Any], Any], timeout_s: float) -> tuple[str, object, object]:
        types = _types()
        contents, config = params
        update: dict[str, Any] = {
            "http_options": types.HttpOptions(timeout=max(1, int(timeout_s * 1000)))
        }
        if self._raw:
            update["should_return_http_response"] = True
        reply = self._client.models.generate_content(
            model=self.model, contents=contents, config=config.model_copy(update=update)
        )
        usage: Any = None
        if self._raw:
            body = getattr(reply.sdk_http_response, "body", None)
            try:
                data = json.loads(body or "")
            except ValueError as exc:
                raise MalformedReplyError(f"the reply is not JSON: {exc}") from None
            if not isinstance(data, dict):
                raise MalformedReplyError("the reply is not a JSON object")
            # the token counts are read here, leniently: the SDK's model refuses a bad one
            usage = data.pop("usageMetadata", None)
            try:
                reply = types.GenerateContentResponse.model_validate(data)
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                raise MalformedReplyError(f"the reply does not parse: {str(exc)[:200]}") from None
            usage = usage if isinstance(usage, dict) else {}
            n_in, n_out = usage.get("promptTokenCount"), usage.get("candidatesTokenCount")
        else:
            meta = reply.usage_metadata
            n_in = getattr(meta, "prompt_token_count", None)
            n_out = getattr(meta, "candidates_token_count", None)
        text = reply.text
        if not isinstance(text, str):
            raise MalformedReplyError("the reply has no text (blocked or empty candidates)")
        return text, n_in, n_out

    def _classify(self, exc: BaseException) -> Failure:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            code = int(exc.code or 0)
            detail = f"HTTP {code}: {str(exc.message)[:200]}"
            if code == 400 and _key_invalid(exc.details):
                refused = f"{detail}; the server refused the API key: check {self.key_env}"
                return Failure("fatal", refused)
            after = _retry_delay(exc.details)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            if after is None and headers is not None:
                after = parse_retry_after(headers.get("retry-after"))
            return status_failure(code, detail, self.key_env, after)
        found = transport_failure(exc, self.endpoint, self.retry.timeout_s)
        if found is not None:
            return found
        if isinstance(exc, json.JSONDecodeError):
            return Failure("retry", f"malformed reply: {str(exc)[:200]}")
        return Failure("fail", f"{type(exc).__name__}: {str(exc)[:200]}")
