"""The part every hosted-API adapter shares: one request at a time per thread, retried."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from typing import Any

from cartoqa.errors import ModelError

from ._retry import Failure, RetryPolicy, call_with_retries, parse_retry_after
from ._types import Request, Response

__all__ = ["APIModel", "MalformedReplyError", "api_key"]


class MalformedReplyError(Exception):
    """The server answered with something that is not a usable completion (retried)."""


def api_key(env: str, spec: str, *, required: bool = True) -> str | None:
    """The key from environment variable ``env``; a clear error when it is required and unset."""
    key = os.environ.get(env)
    if not key and required:
        raise ModelError(f"{spec} needs an API key: set the environment variable {env}")
    return key or None


class APIModel:
    """Base of the hosted-API adapters: thread-safe, one request per call, retried.

    A subclass sets ``spec`` and implements ``_params(request)`` (everything
    the API call takes), ``_call(params)`` (returns text, input tokens,
    output tokens; raises on failure, ``MalformedReplyError`` for a reply with no
    text) and ``_classify(exc)``.
    """

    batch_size = 1
    thread_safe = True
    max_concurrency = 8
    """Requests in flight at once when ``generate`` gets several (the runner sends one per
    call from ``--concurrency`` threads instead)."""
    spec: str
    retry: RetryPolicy
    key_env: str

    def _params(self, request: Request) -> Any:
        raise NotImplementedError

    def _call(self, params: Any) -> tuple[str, int | None, int | None]:
        raise NotImplementedError

    def _classify(self, exc: BaseException) -> Failure:
        raise NotImplementedError

    def _classify_sdk(self, exc: BaseException, sdk: Any) -> Failure:
        """The reading of an exception from a Stainless-generated SDK (``openai``,
        ``anthropic``: the same exception classes), given the SDK's module."""
        import json

        if isinstance(exc, sdk.APITimeoutError):
            return Failure("retry", f"timeout: no reply within {self.retry.timeout_s:g} s")
        if isinstance(exc, sdk.APIConnectionError):
            return Failure("retry", f"connection failed: {exc.__cause__ or exc}")
        if isinstance(exc, sdk.APIStatusError):
            headers = exc.response.headers
            after = parse_retry_after(headers.get("retry-after"))
            ms = parse_retry_after(headers.get("retry-after-ms"))
            if ms is not None:
                after = ms / 1000
            detail = f"HTTP {exc.status_code}: {str(exc.message)[:200]}"
            return status_failure(exc.status_code, detail, self.key_env, after)
        if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError):
            return Failure("retry", f"malformed reply: {str(exc)[:200]}")
        return Failure("fail", f"{type(exc).__name__}: {str(exc)[:200]}")

    def _classify_common(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, MalformedReplyError):
            return Failure("retry", f"malformed reply: {exc}")
        if isinstance(exc, ModelError):
            return Failure("fatal", str(exc))
        return None

    def _one(self, request: Request) -> Response:
        t0 = time.perf_counter()
        try:
            params = self._params(request)
        except ModelError as exc:  # an unreadable image fails this sample, not the run
            return Response(text=None, error=str(exc))
        result, error, retries = call_with_retries(
            lambda: self._call(params),
            lambda exc: self._classify_common(exc) or self._classify(exc),
            self.retry,
            rng=random.Random(),
            what=self.spec,
        )
        latency = time.perf_counter() - t0
        if result is None:
            return Response(text=None, error=error, retries=retries, latency_s=latency)
        text, n_in, n_out = result
        return Response(
            text=text, latency_s=latency, input_tokens=n_in, output_tokens=n_out, retries=retries
        )

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        if len(requests) <= 1 or self.max_concurrency <= 1:
            return [self._one(r) for r in requests]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(self.max_concurrency, len(requests))) as pool:
            return list(pool.map(self._one, requests))

    def close(self) -> None:
        pass


def status_failure(status: int, detail: str, key_env: str, retry_after: float | None) -> Failure:
    """The usual reading of an HTTP status: refused key and unknown model stop the run; 408,
    409, 429 and 5xx are retried; other 4xx fail the one request."""
    if status in (401, 403):
        return Failure("fatal", f"{detail}; the server refused the API key: check {key_env}")
    if status == 404:
        return Failure("fatal", f"{detail}; unknown model or wrong base URL")
    if status in (408, 409, 429) or status >= 500:
        return Failure("retry", detail, retry_after)
    return Failure("fail", detail)
