"""The anthropic adapter through the installed ``anthropic`` SDK, against FakeAnthropicServer.

Issue 11, item 20: with anthropic 2.x every request failed with ``TypeError:
Messages.create() got an unexpected keyword argument 'temperature'``, and no test had
called the SDK.  These do, over real HTTP on 127.0.0.1.
"""

import base64
import inspect
import time

import pytest

from cartoqa.models import GenerationSettings, Request, RetryPolicy, load_model
from cartoqa.runner import open_run_store, run_model
from cartoqa.testing.fake_anthropic import FakeAnthropicServer, Fault
from tests.cartoqa.model_data import png, text_dataset

anthropic = pytest.importorskip("anthropic", reason="the api extra is not installed")

FAST = RetryPolicy(max_retries=3, base_s=0.01, max_s=2.0, timeout_s=0.5)


def create_takes(name: str) -> bool:
    create = anthropic.Anthropic(api_key="unused").messages.create
    return name in inspect.signature(create).parameters


@pytest.fixture
def server():
    with FakeAnthropicServer() as s:
        yield s


def model_for(server, retry=FAST):
    return load_model(f"anthropic:claude-fake@{server.url}", retry=retry)


def test_a_request_reaches_the_messages_api_in_its_shape(server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    image = tmp_path / "map.png"
    image.write_bytes(png(3))
    settings = GenerationSettings(temperature=0.7, max_tokens=77, seed=5)
    model = model_for(server)
    [r] = model.generate(
        [Request(id="a", text="Where?", system="Be brief.", images=(image,), settings=settings)]
    )
    assert r.ok, r.error
    [got] = server.log
    assert got.path == "/v1/messages" and got.model == "claude-fake"
    assert got.images == [image.read_bytes()] and got.text == "Where?"
    assert got.system == "Be brief." and got.params["max_tokens"] == 77
    assert "anthropic-version" in got.headers
    assert "sk-ant-test" in got.authorization
    # what the installed SDK does not take is left out and noted, never sent
    assert "seed" not in got.params
    assert any("takes no seed" in n for n in model.notes)
    if create_takes("temperature"):
        assert got.params["temperature"] == 0.7
        assert not any("'temperature'" in n for n in model.notes)
    else:
        assert "temperature" not in got.params
        [note] = [n for n in model.notes if "'temperature'" in n]
        assert note.startswith(f"anthropic {anthropic.__version__}: Messages.create takes no")
        assert "sent without it" in note


def test_the_installed_sdk_answers_every_sample_of_a_run(server, tmp_path):
    """The issue's reproduction: a run through the real SDK; before the fix, all failed."""
    ds = text_dataset(tmp_path / "ds", 8)
    model = model_for(server)
    settings = GenerationSettings(temperature=0.2, max_tokens=64)
    with open_run_store(tmp_path / "runs", ds, model.spec, settings) as store:
        summary = run_model(ds, model, store, settings=settings, concurrency=3)
    assert summary.failed == 0 and summary.answered == 8, summary.failed_ids
    assert len(server.log) == 8


def test_image_blocks_come_before_the_text(tmp_path):
    from cartoqa.models.anthropic_api import build_anthropic_params

    paths = []
    for i in range(2):
        p = tmp_path / f"map{i}.png"
        p.write_bytes(png(i))
        paths.append(p)
    req = Request(id="s", text="Which roads?", system="Be brief.", images=tuple(paths))
    params = build_anthropic_params(req, "claude-x", takes={"system"})
    assert "temperature" not in params and params["system"] == "Be brief."
    blocks = params["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["image", "image", "text"]
    for block, path in zip(blocks, paths, strict=False):
        assert block["source"]["media_type"] == "image/png"
        assert base64.b64decode(block["source"]["data"]) == path.read_bytes()
    assert build_anthropic_params(req, "claude-x", takes={"temperature"})["temperature"] == 0


def test_429_waits_at_least_its_retry_after_header(server):
    server.faults = [Fault("429", retry_after=0.4)]
    t0 = time.perf_counter()
    [r] = model_for(server).generate([Request(id="a", text="hello")])
    assert r.ok and r.retries == 1
    assert time.perf_counter() - t0 >= 0.4


def test_overloaded_529_is_retried_and_named_when_it_never_ends(server):
    server.faults = [Fault("529", times=-1)]
    [r] = model_for(server).generate([Request(id="a", text="hello")])
    assert "HTTP 529" in r.error and "overloaded" in r.error and "after 4 tries" in r.error
