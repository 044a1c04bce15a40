"""Retries with exponential backoff and jitter, honouring Retry-After, for API adapters.

One request gets at most ``max_retries + 1`` tries, each cut off after
``timeout_s``, and all of them together, with the waits between them, stay
within ``deadline_s``.  A failure to connect at all (connection refused, an
unknown host) is retried only ``connect_retries`` times: a dead endpoint
fails fast instead of backing off for a minute.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from cartoqa.errors import ModelError

__all__ = ["Failure", "FailureKind", "RetryPolicy", "call_with_retries", "parse_retry_after"]

T = TypeVar("T")

FailureKind = Literal["connect", "timeout", "dropped", "other"]


@dataclass(frozen=True)
class RetryPolicy:
    """How hard an API adapter tries before it records a request as failed.

    The defaults: 6 retries (7 tries), backoff from 1 s doubling to at most 60 s,
    120 s a try, 300 s for the whole request, 1 retry after a failure to connect.
    A server that hangs costs one request at most ``deadline_s`` (about 300 s), not
    7 x 120 s; a closed port costs it about one second.
    """

    max_retries: int = 6
    """Retries after the first try (so at most max_retries + 1 tries)."""
    base_s: float = 1.0
    """The first backoff; each retry doubles it."""
    max_s: float = 60.0
    """The longest backoff, and the longest Retry-After honoured."""
    timeout_s: float = 120.0
    """Seconds one try may take before it counts as a timeout (and is retried)."""
    deadline_s: float = 300.0
    """Seconds one request may take in all: every try and every wait between tries.  A try
    is cut to the time left; no retry starts once the wait before it would pass the
    deadline."""
    connect_retries: int = 1
    """Retries after a failure to connect (connection refused, unknown host, unreachable
    network); a connection dropped after it was made is retried like a 5xx."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries={self.max_retries} must be 0 or more")
        if self.base_s < 0 or self.max_s < self.base_s:
            raise ValueError(
                f"backoff base {self.base_s} s and cap {self.max_s} s: need 0 <= base <= cap"
            )
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s={self.timeout_s} must be positive")
        if self.deadline_s <= 0:
            raise ValueError(f"deadline_s={self.deadline_s} must be positive")
        if self.connect_retries < 0:
            raise ValueError(f"connect_retries={self.connect_retries} must be 0 or more")

    def backoff_s(self, retry: int, rng: random.Random, retry_after: float | None) -> float:
        """The wait before retry number ``retry`` (0-based): "equal jitter" exponential
        backoff, and never less than the server's Retry-After (capped at ``max_s``)."""
        ceiling = min(self.max_s, self.base_s * 2**retry)
        wait = ceiling / 2 + rng.uniform(0, ceiling / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_s))
        return wait


@dataclass(frozen=True)
class Failure:
    """What an adapter makes of an exception from one try."""

    action: Literal["retry", "fail", "fatal"]
    """retry: try again after a backoff; fail: record the request as failed; fatal: stop the
    run (no request can succeed, for example a refused key)."""
    message: str
    """A one-line reason, with the status code where there is one; never a key."""
    retry_after: float | None = None
    """Seconds the server asked to wait, if it said."""
    kind: FailureKind = "other"
    """connect: no connection could be made; timeout: no reply within the try's time;
    dropped: the connection broke before a reply; other: the server answered (an HTTP
    error, a malformed reply) or the request was refused before it was sent."""


def _tries(n: int) -> str:
    return f"{n} try" if n == 1 else f"{n} tries"


def call_with_retries(
    call: Callable[[float], T],
    classify: Callable[[BaseException], Failure],
    policy: RetryPolicy,
    *,
    rng: random.Random,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[T | None, Failure | None, int]:
    """Run ``call(timeout_s)`` until it succeeds, fails for good, or the retries or the
    request's deadline run out; ``timeout_s`` is the time this try may take.

    Returns (result, failure, retries): the result and None on success; None and the last
    failure otherwise (its message says how many tries were made when they ran out).  A
    fatal failure raises ModelError.
    """
    end = clock() + policy.deadline_s
    shortest_try = min(policy.timeout_s, 1.0)
    retries = 0
    connect_failures = 0
    while True:
        left = end - clock()
        try:
            return call(max(min(policy.timeout_s, left), 0.001)), None, retries
        except Exception as exc:
            failure = classify(exc)
        if failure.action == "fatal":
            raise ModelError(f"{what}: {failure.message}")
        if failure.action == "fail":
            return None, failure, retries
        tries = retries + 1
        connect_failures += failure.kind == "connect"
        if retries >= policy.max_retries or connect_failures > policy.connect_retries:
            message = f"{failure.message} (after {_tries(tries)})"
            return None, replace(failure, message=message), retries
        wait = policy.backoff_s(retries, rng, failure.retry_after)
        if end - (clock() + wait) < shortest_try:
            message = (
                f"{failure.message} (gave up after {_tries(tries)}: the request's "
                f"{policy.deadline_s:g} s deadline would pass)"
            )
            return None, replace(failure, message=message), retries
        sleep(wait)
        retries += 1


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms style) header value, else None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN: no wait said
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
