"""The part every hosted-API adapter shares: one request at a time per thread, retried."""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from cartoqa.errors import ModelError

from ._retry import Failure, FailureKind, RetryPolicy, call_with_retries, parse_retry_after
from ._types import Request, Response
from ._wall_clock import bounded_client, bounded_sdk_client, wall_clock

__all__ = [
    "APIModel",
    "MalformedReplyError",
    "TryTimeoutError",
    "api_key",
    "bounded_client",
    "bounded_sdk_client",
    "check_base_url",
    "sdk_takes",
    "status_failure",
    "token_count",
    "transport_failure",
    "try_timeout_message",
]

log = logging.getLogger(__name__)

_MAX_TOKENS = 2**63 - 1


class MalformedReplyError(Exception):
    """The server answered with something that is not a usable completion (retried)."""


class TryTimeoutError(Exception):
    """One try ran out of wall time (``_wall_clock``): with no reply at all, or while the
    server was still sending one (``received`` bytes so far)."""

    def __init__(self, seconds: float, received: int) -> None:
        self.seconds = seconds
        self.received = received
        super().__init__(try_timeout_message(seconds, received))


def try_timeout_message(seconds: float, received: int) -> str:
    """What a try cut by its wall time is called in messages."""
    if received:
        return (
            f"timeout: the reply took longer than {seconds:g} s in all (the server was still "
            f"sending: {received:,} bytes so far)"
        )
    return f"timeout: no reply within {seconds:g} s"


def api_key(env: str, spec: str, *, required: bool = True) -> str | None:
    """The key from environment variable ``env``; a clear error when it is required and unset."""
    key = os.environ.get(env)
    if not key and required:
        raise ModelError(f"{spec} needs an API key: set the environment variable {env}")
    return key or None


def check_base_url(url: str, spec: str) -> str:
    """``url`` without a trailing slash, after checking that a client can use it: an
    http:// or https:// URL with a host (and a port that is a number)."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in ("http", "https"):
        fix = f"http://{url}" if not scheme else "http://" + url.partition("://")[2]
        raise ModelError(
            f"{spec}: the base URL {url!r} does not start with http:// or https://; "
            f"write it as {fix} (or https:// for TLS)"
        )
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 (a bad port raises)
    except ValueError:
        raise ModelError(f"{spec}: the base URL {url!r} has a port that is not a number") from None
    if not parts.hostname:
        raise ModelError(f"{spec}: the base URL {url!r} names no host, e.g. http://127.0.0.1:8000")
    return url.rstrip("/")


def token_count(value: object) -> int | None:
    """A token count as a server reported it, if it is one (a whole number from 0 to
    2**63 - 1); None for anything else: missing, negative, fractional, text, a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= _MAX_TOKENS:
        return value
    return None


def sdk_takes(function: Callable[..., Any], names: Iterable[str]) -> set[str]:
    """Which of ``names`` an SDK function takes as keyword arguments (all of them when it
    takes ``**kwargs``)."""
    names = set(names)
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return names
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return names
    return names & set(params)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def _import_http_modules() -> list[Any]:
    mods = []
    for name in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError):
            mods.append(__import__(name))
    return mods


# Imported once, with this module (on the thread that loads the model): imported first
# from the runner's worker threads, two threads importing httpx and httpx2 at once could
# see a partially initialised module ("has no attribute 'TimeoutException'").
_HTTP_MODULES = _import_http_modules()


def _http_modules() -> list[Any]:
    return _HTTP_MODULES


def transport_failure(exc: BaseException, endpoint: str, timeout_s: float) -> Failure | None:
    """The reading of a failure below HTTP (found anywhere in the exception's causes): no
    connection (refused, unknown host), a timeout, a dropped connection; None when the
    exception is none of these."""
    mods = _http_modules()
    kind: FailureKind | None = None
    for e in _causes(exc):
        for mod in mods:
            if isinstance(e, mod.TimeoutException):
                kind = "timeout"
            elif isinstance(e, mod.ConnectError):
                kind = "connect"
            elif isinstance(e, mod.TransportError):
                kind = "dropped"
        if kind is None:
            if isinstance(e, TimeoutError):
                kind = "timeout"
            elif isinstance(e, ConnectionRefusedError):
                kind = "connect"
            elif isinstance(e, ConnectionError):
                kind = "dropped"
        if kind is not None:
            break
    if kind is None:
        return None
    root = list(_causes(exc))[-1]
    reason = f"{root}" or type(root).__name__
    if kind == "timeout":
        return Failure("retry", f"timeout: no reply within {timeout_s:g} s", kind="timeout")
    if kind == "connect":
        return Failure("retry", f"cannot connect to {endpoint}: {reason}", kind="connect")
    return Failure("retry", f"connection dropped before a reply: {reason}", kind="dropped")


class APIModel:
    """Base of the hosted-API adapters: thread-safe, one request per call, retried.

    A subclass calls ``super().__init__()``, sets ``spec``, ``endpoint``, ``retry`` and
    ``key_env``, and implements ``_params(request)`` (everything the API call takes),
    ``_call(params, timeout_s)`` (returns text, input tokens, output tokens as the server
    reported them; raises on failure, ``MalformedReplyError`` for a reply with no text)
    and ``_classify(exc)``.

    When no request of this model has reached the server yet and one gives up because it
    could not connect or got no reply in time, the model raises ``ModelError``: the
    endpoint is dead (or hung) and every other request would wait the same way.  Once the
    server has answered once, the same failures fail one request only.
    """

    batch_size = 1
    thread_safe = True
    max_concurrency = 8
    """Requests in flight at once when ``generate`` gets several (the runner sends one per
    call from ``--concurrency`` threads instead)."""
    spec: str
    endpoint: str
    """The URL requests go to, for messages."""
    retry: RetryPolicy
    key_env: str
    notes: list[str]
    """What this adapter leaves out or changes, for the run's metadata: settings the
    installed SDK does not take (sent without them), token counts the server reported that
    are not counts (recorded as unknown).  Empty when there is nothing to say."""

    def __init__(self) -> None:
        self.notes = []
        self._reached = False
        self._bad_counts_noted = False

    def _params(self, request: Request) -> Any:
        raise NotImplementedError

    def _call(self, params: Any, timeout_s: float) -> tuple[str, object, object]:
        raise NotImplementedError

    def _classify(self, exc: BaseException) -> Failure:
        raise NotImplementedError

    def _leave_out(self, sdk: str, what: str, names: Iterable[str]) -> None:
        """Note each setting in ``names`` that ``what`` (an SDK function) does not take."""
        for name in sorted(names):
            self.notes.append(f"{sdk}: {what} takes no {name!r}; requests are sent without it")

    def _classify_sdk(self, exc: BaseException, sdk: Any) -> Failure:
        """The reading of an exception from a Stainless-generated SDK (``openai``,
        ``anthropic``: the same exception classes), given the SDK's module."""
        if isinstance(exc, sdk.APIConnectionError):  # APITimeoutError is one too
            found = transport_failure(exc, self.endpoint, self.retry.timeout_s)
            if found is not None:
                return found
            if isinstance(exc, sdk.APITimeoutError):
                return Failure(
                    "retry", f"timeout: no reply within {self.retry.timeout_s:g} s", kind="timeout"
                )
            return Failure("retry", f"connection failed: {exc}", kind="dropped")
        if isinstance(exc, sdk.APIStatusError):
            headers = exc.response.headers
            after = parse_retry_after(headers.get("retry-after"))
            ms = parse_retry_after(headers.get("retry-after-ms"))
            if ms is not None:
                after = ms / 1000
            message = getattr(exc, "api_message", None) or _body_message(exc.body) or exc.message
            detail = f"HTTP {exc.status_code}: {str(message)[:200]}"
            return status_failure(exc.status_code, detail, self.key_env, after)
        if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError):
            return Failure("retry", f"malformed reply: {str(exc)[:200]}")
        return Failure("fail", f"{type(exc).__name__}: {str(exc)[:200]}")

    def _classify_common(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, TryTimeoutError):
            return Failure("retry", str(exc), kind="timeout")
        if isinstance(exc, MalformedReplyError):
            return Failure("retry", f"malformed reply: {exc}")
        if isinstance(exc, ModelError):
            return Failure("fatal", str(exc))
        return None

    def _classify_any(self, exc: BaseException) -> Failure:
        failure = self._classify_common(exc) or self._classify(exc)
        if failure.kind == "other":
            self._reached = True
        return failure

    def _count(self, value: object, what: str) -> int | None:
        n = token_count(value)
        if n is None and value is not None and not self._bad_counts_noted:
            self._bad_counts_noted = True
            note = (
                f"{self.endpoint} reported {what} tokens as {value!r}, not a count; "
                "such counts are recorded as unknown"
            )
            log.warning("%s: %s", self.spec, note)
            self.notes.append(note)
        return n

    def _dead_endpoint(self, failure: Failure) -> ModelError:
        if failure.kind == "connect":
            return ModelError(
                f"{self.spec}: {failure.message}; no request has reached the server yet: "
                "is it running, and is the URL right?"
            )
        return ModelError(
            f"{self.spec}: {failure.message}; {self.endpoint} has not answered any request yet: "
            "is the server hung or still loading? If it is only slow, allow more time "
            f"(now {self.retry.timeout_s:g} s a try, {self.retry.deadline_s:g} s a request)"
        )

    def _bounded_call(self, params: Any, timeout_s: float) -> tuple[str, object, object]:
        """One try, bounded by ``timeout_s`` of wall time in all (connecting, sending, the
        reply's headers and body), however slowly the server sends."""
        with wall_clock(timeout_s) as t:
            try:
                return self._call(params, timeout_s)
            except Exception as exc:
                if t.cut:
                    raise TryTimeoutError(timeout_s, t.received) from exc
                raise

    def _one(self, request: Request) -> Response:
        t0 = time.perf_counter()
        try:
            params = self._params(request)
        except ModelError as exc:  # an unreadable image fails this sample, not the run
            return Response(text=None, error=str(exc))
        result, failure, retries = call_with_retries(
            lambda timeout_s: self._bounded_call(params, timeout_s),
            self._classify_any,
            self.retry,
            rng=random.Random(),
            what=self.spec,
        )
        latency = time.perf_counter() - t0
        if result is None:
            assert failure is not None
            if failure.kind in ("connect", "timeout") and not self._reached:
                raise self._dead_endpoint(failure)
            return Response(text=None, error=failure.message, retries=retries, latency_s=latency)
        self._reached = True
        text, n_in, n_out = result
        return Response(
            text=text,
            latency_s=latency,
            input_tokens=self._count(n_in, "input"),
            output_tokens=self._count(n_out, "output"),
            retries=retries,
        )

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        if len(requests) <= 1 or self.max_concurrency <= 1:
            return [self._one(r) for r in requests]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(self.max_concurrency, len(requests))) as pool:
            return list(pool.map(self._one, requests))

    def close(self) -> None:
        pass


def _body_message(body: object) -> str | None:
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    message = body.get("message")
    return message if isinstance(message, str) else None


def status_failure(status: int, detail: str, key_env: str, retry_after: float | None) -> Failure:
    """The usual reading of an HTTP status: refused key and unknown model stop the run; 408,
    409, 429 and 5xx (529 "overloaded" too) are retried; other 4xx fail the one request."""
    if status in (401, 403):
        return Failure("fatal", f"{detail}; the server refused the API key: check {key_env}")
    if status == 404:
        return Failure("fatal", f"{detail}; unknown model or wrong base URL")
    if status in (408, 409, 429) or status >= 500:
        return Failure("retry", detail, retry_after)
    return Failure("fail", detail)
