"""Retries with exponential backoff and jitter, honouring Retry-After, for API adapters."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from cartoqa.errors import ModelError

__all__ = ["Failure", "RetryPolicy", "call_with_retries", "parse_retry_after"]

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard an API adapter tries before it records a request as failed."""

    max_retries: int = 6
    """Retries after the first try (so at most max_retries + 1 tries)."""
    base_s: float = 1.0
    """The first backoff; each retry doubles it."""
    max_s: float = 60.0
    """The longest backoff, and the longest Retry-After honoured."""
    timeout_s: float = 120.0
    """Seconds one try may take before it counts as a timeout (and is retried)."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries={self.max_retries} must be 0 or more")
        if self.base_s < 0 or self.max_s < self.base_s:
            raise ValueError(
                f"backoff base {self.base_s} s and cap {self.max_s} s: need 0 <= base <= cap"
            )
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s={self.timeout_s} must be positive")

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


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms style) header value, else None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def call_with_retries(
    call: Callable[[], T],
    classify: Callable[[BaseException], Failure],
    policy: RetryPolicy,
    *,
    rng: random.Random,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T | None, str | None, int]:
    """Run ``call`` until it succeeds, fails for good, or the retries run out.

    Returns (result, error, retries): the result and None on success; None and
    the last failure's message otherwise.  A fatal failure raises ModelError.
    """
    retries = 0
    while True:
        try:
            return call(), None, retries
        except Exception as exc:
            failure = classify(exc)
        if failure.action == "fatal":
            raise ModelError(f"{what}: {failure.message}")
        if failure.action == "fail" or retries >= policy.max_retries:
            suffix = f" (after {retries + 1} tries)" if failure.action == "retry" else ""
            return None, failure.message + suffix, retries
        sleep(policy.backoff_s(retries, rng, failure.retry_after))
        retries += 1
