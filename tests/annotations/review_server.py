"""The review tool as the tests run it: ``cartoqa review DATASET --port 0`` in its own
process (a real uvicorn server), its address read from what it prints."""

from __future__ import annotations

import http.client
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi", reason="the review tool's extra: pip install 'cartoqa[review]'")


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    """The address printed, with its token."""
    lines: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        u = urlsplit(self.url)
        return f"{u.scheme}://{u.netloc}"

    @property
    def token(self) -> str:
        return urlsplit(self.url).path.strip("/")

    @property
    def base(self) -> str:
        """The tool's root: the origin and the token (no slash at the end)."""
        return f"{self.origin}/{self.token}"

    def request(
        self,
        method: str,
        path: str,
        body: str | bytes | None = None,
        headers: dict[str, str] | None = None,
        token: bool = True,
    ) -> tuple[int, dict[str, str], bytes]:
        """One raw request to ``path`` under the token's root (``token=False``: to ``path``
        itself), sent as written: no client normalises it."""
        u = urlsplit(self.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        h = dict(headers or {})
        if token:
            path = f"/{self.token}{path}"
        if body is not None and "Content-Type" not in h:
            h["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data


def _reader(proc: subprocess.Popen, out: queue.Queue) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        out.put(line)
    out.put(None)


@contextmanager
def review_server(dataset: Path, *args: str, timeout: float = 60) -> Iterator[Server]:
    """Serve ``dataset``; stopped (or killed) at the end."""
    with cartoqa_server(["review", str(dataset), "--port", "0", *args], "review", timeout) as s:
        yield s


@contextmanager
def cartoqa_server(argv: list[str], what: str, timeout: float = 60) -> Iterator[Server]:
    """``cartoqa ARGV`` in its own process (a real uvicorn server), its address read from
    what it prints ("open http://..."); stopped (or killed) at the end."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cartoqa", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc, lines), daemon=True).start()
    seen: list[str] = []
    url = None
    try:
        while url is None:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"the {what} server printed no address: {seen}") from None
            if line is None:
                raise AssertionError(f"the {what} server stopped: {''.join(seen)}")
            seen.append(line)
            m = re.search(r"open (http://\S+)", line)
            if m:
                url = m.group(1)
        yield Server(proc, url, seen)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
