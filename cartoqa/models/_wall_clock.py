"""HTTP clients for the hosted-API SDKs whose every request is bounded by wall time.

An HTTP client's own timeouts are per operation: a read timeout restarts with
every byte, so a server that drips its headers or its body a byte at a time
holds a request for as long as it likes.  The clients made here read, write and
connect through a network layer that checks a clock: a try opened with
``wall_clock(seconds)`` (on the thread that makes the SDK call, as the sync SDKs
do) gives every socket operation at most the time the try has left, and fails
the request with the HTTP library's own timeout once that time is spent,
headers and body alike.  The try records whether the clock cut it and how many
bytes of the reply had come by then, so the message can say what happened.

``httpx`` and its fork ``httpx2`` (what the ``openai`` and ``anthropic`` SDKs
import) are both served: the client is made of whichever one the SDK uses.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Try", "bounded_client", "bounded_sdk_client", "wall_clock"]

log = logging.getLogger(__name__)

_state = threading.local()


@dataclass
class Try:
    """One try of a request on this thread: when its time is up, what came, whether it was cut."""

    seconds: float
    end: float
    received: int = 0
    """Bytes read from the server during the try (headers and body)."""
    cut: bool = False
    """True when the try's wall time ran out (the HTTP library then raised a timeout)."""


@contextlib.contextmanager
def wall_clock(seconds: float) -> Iterator[Try]:
    """Bound every HTTP operation of a bounded client on this thread, for the block, to
    ``seconds`` of wall time in all."""
    t = Try(seconds, time.monotonic() + seconds)
    before = getattr(_state, "current", None)
    _state.current = t
    try:
        yield t
    finally:
        _state.current = before


def _current() -> Try | None:
    return getattr(_state, "current", None)


def _bounded(t: Try | None, timeout: float | None, timeout_exc: type[Exception]) -> float | None:
    """The timeout an operation gets: its own, cut to what the try has left; raises the HTTP
    library's timeout (and marks the try cut) when nothing is left."""
    if t is None:
        return timeout
    left = t.end - time.monotonic()
    if left <= 0:
        t.cut = True
        raise timeout_exc(f"the request took longer than {t.seconds:g} s in all")
    return left if timeout is None else min(timeout, left)


def _mark_cut(t: Try | None) -> None:
    if t is not None and time.monotonic() >= t.end - 0.005:
        t.cut = True


def _classes(core: Any) -> tuple[type, type]:
    """(NetworkStream, NetworkBackend) of an httpcore-like module, and wrappers around them."""

    class Stream(core.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            t = _current()
            bounded = _bounded(t, timeout, core.ReadTimeout)
            try:
                data = self._inner.read(max_bytes, bounded)
            except core.ReadTimeout:
                _mark_cut(t)
                raise
            if t is not None:
                t.received += len(data)
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            t = _current()
            try:
                self._inner.write(buffer, _bounded(t, timeout, core.WriteTimeout))
            except core.WriteTimeout:
                _mark_cut(t)
                raise

        def close(self) -> None:
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            t = _current()
            bounded = _bounded(t, timeout, core.ConnectTimeout)
            return Stream(self._inner.start_tls(ssl_context, server_hostname, bounded))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class Backend(core.NetworkBackend):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            t = _current()
            bounded = _bounded(t, timeout, core.ConnectTimeout)
            try:
                stream = self._inner.connect_tcp(host, port, bounded, local_address, socket_options)
            except core.ConnectTimeout:
                _mark_cut(t)
                raise
            return Stream(stream)

        def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Any = None
        ) -> Any:
            t = _current()
            bounded = _bounded(t, timeout, core.ConnectTimeout)
            return Stream(self._inner.connect_unix_socket(path, bounded, socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return Stream, Backend


_BACKENDS: dict[str, type] = {}
_LOCK = threading.Lock()


def bounded_client(http: Any, client_class: Any = None, **kwargs: Any) -> Any:
    """An HTTP client (``client_class``, default ``http.Client``, where ``http`` is the
    ``httpx`` or ``httpx2`` module) whose connections go through the wall clock."""
    core_name = "httpcore2" if http.__name__.startswith("httpx2") else "httpcore"
    core = importlib.import_module(core_name)
    with _LOCK:
        if core_name not in _BACKENDS:
            _BACKENDS[core_name] = _classes(core)[1]
    backend = _BACKENDS[core_name]
    limits = kwargs.pop("limits", None) or http.Limits(
        max_connections=1000, max_keepalive_connections=100
    )
    transport = http.HTTPTransport(limits=limits)
    pool = getattr(transport, "_pool", None)  # the connection pool the transport made
    if pool is None or not hasattr(pool, "_network_backend"):  # no hook in this version
        log.warning(
            "%s %s: cannot bound requests by wall time; a server that sends slowly can hold "
            "a request past --timeout",
            http.__name__,
            getattr(http, "__version__", "?"),
        )
        return (client_class or http.Client)(limits=limits, **kwargs)
    pool._network_backend = backend(pool._network_backend)
    return (client_class or http.Client)(transport=transport, **kwargs)


def bounded_sdk_client(client_class: type, **kwargs: Any) -> Any:
    """A bounded client of an SDK's own client class (``openai.DefaultHttpxClient``, a
    subclass of ``httpx.Client`` or ``httpx2.Client``: the one the SDK accepts)."""
    for base in client_class.__mro__:
        top = base.__module__.partition(".")[0]
        if top in ("httpx", "httpx2") and base.__name__ == "Client":
            return bounded_client(importlib.import_module(top), client_class, **kwargs)
    raise TypeError(f"{client_class!r} is not an httpx client class")
