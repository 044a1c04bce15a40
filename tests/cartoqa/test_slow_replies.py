"""A server that is slow, not silent (issue 26, finding 22): it drips its headers or its body
one byte at a time, so no single read ever waits long.  Each try of a request must still end
at its ``--timeout`` of wall time and the request at its ``--deadline``, through every
hosted adapter's own SDK against a real local HTTP server, and the message must say that
the server was still sending."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cartoqa.models import Request, RetryPolicy, load_model
from cartoqa.testing.fake_anthropic import FakeAnthropicServer
from cartoqa.testing.fake_gemini import FakeGeminiServer
from cartoqa.testing.fake_openai import FakeOpenAIServer, Fault
from tests.cartoqa.model_data import text_dataset
from tests.cartoqa.test_runner import store_lines

CARTOQA = Path(sys.executable).with_name("cartoqa")

SERVERS = {
    "openai": (FakeOpenAIServer, "openai"),
    "anthropic": (FakeAnthropicServer, "anthropic"),
    "google": (FakeGeminiServer, "google.genai"),
}

# one try 1 s, the request 2 s in all; the dripped reply would take 20 s and more
POLICY = RetryPolicy(max_retries=6, base_s=0.05, max_s=1.0, timeout_s=1.0, deadline_s=2.0)
DRIP_S = 0.2


@pytest.mark.parametrize("drip", ["drip_headers", "drip_body"])
@pytest.mark.parametrize("provider", sorted(SERVERS))
def test_a_dripping_reply_is_cut_at_the_deadline_and_said_so(provider, drip):
    server_cls, module = SERVERS[provider]
    pytest.importorskip(module, reason="the api extra is not installed")
    with server_cls() as server:
        model = load_model(f"{provider}:fake-vlm@{server.url}", retry=POLICY)
        try:
            assert model.generate([Request(id="a", text="first")])[0].ok
            server.faults = [Fault(drip, times=-1, drip_s=DRIP_S)]
            t0 = time.monotonic()
            [r] = model.generate([Request(id="b", text="second")])
            took = time.monotonic() - t0
        finally:
            model.close()
    assert not r.ok
    assert "the reply took longer than 1 s in all (the server was still sending" in r.error
    assert "2 s deadline" in r.error  # the request's deadline ended it, and says so
    assert "no reply within" not in r.error
    assert took < 2.0 + 1.5, f"one request took {took:.1f} s against a 2 s deadline"


def test_cartoqa_run_bounds_a_dripping_request_and_goes_on(tmp_path):
    """The case as found: ``cartoqa run --timeout T --deadline D`` against a server that drips
    one sample's reply; that sample fails within D, with what happened, and the run goes on."""
    ds = text_dataset(tmp_path / "ds", 3)
    runs = tmp_path / "runs"
    with FakeOpenAIServer() as server:
        server.faults = [Fault("drip_body", match="[q-0001]", times=-1, drip_s=DRIP_S)]
        t0 = time.monotonic()
        done = subprocess.run(
            [CARTOQA, "run", ds.path, "-m", f"openai:fake@{server.url}", "--runs-dir", runs]
            + ["--no-progress", "--concurrency", "1", "--timeout", "1", "--deadline", "2"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr  # two answered: the run went through
    records = {r["sample_id"]: r for r in store_lines(runs)}
    assert records["q-0000"]["error"] is None and records["q-0002"]["error"] is None
    error = records["q-0001"]["error"]
    assert "took longer than 1 s in all (the server was still sending" in error, error
    assert records["q-0001"]["latency_s"] < 2.0 + 1.5
    assert took < 30, f"the run took {took:.0f} s"
    json.dumps(records)  # stored as plain JSON
