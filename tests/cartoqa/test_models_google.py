"""The google adapter through the installed ``google-genai`` SDK, against FakeGeminiServer."""

import time

import pytest

from cartoqa.errors import ModelError
from cartoqa.models import GenerationSettings, Request, RetryPolicy, load_model
from cartoqa.testing.fake_gemini import FakeGeminiServer, Fault
from tests.cartoqa.model_data import png

genai_types = pytest.importorskip("google.genai.types", reason="the api extra is not installed")

FAST = RetryPolicy(max_retries=3, base_s=0.01, max_s=2.0, timeout_s=0.5)


@pytest.fixture
def server():
    with FakeGeminiServer() as s:
        yield s


def model_for(server, retry=FAST):
    return load_model(f"google:gemini-fake@{server.url}", retry=retry)


def test_a_request_reaches_generate_content_in_its_shape(server, tmp_path, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-test")
    paths = []
    for i in range(2):
        p = tmp_path / f"map{i}.png"
        p.write_bytes(png(i))
        paths.append(p)
    settings = GenerationSettings(temperature=0.3, max_tokens=77, seed=5)
    model = model_for(server)
    [r] = model.generate(
        [Request(id="a", text="Where?", system="Be brief.", images=tuple(paths), settings=settings)]
    )
    assert r.ok, r.error
    [got] = server.log
    assert got.path.endswith("/models/gemini-fake:generateContent")
    assert got.images == [p.read_bytes() for p in paths] and got.text == "Where?"
    assert got.system == "Be brief." and got.authorization == "AIza-test"
    config = got.params["generationConfig"]
    fields = genai_types.GenerateContentConfig.model_fields
    for field, key, value in [
        ("temperature", "temperature", 0.3),
        ("max_output_tokens", "maxOutputTokens", 77),
        ("seed", "seed", 5),
    ]:
        if field in fields:
            assert config[key] == value
        else:  # an SDK without the field: left out and noted
            assert key not in config and any(repr(field) in n for n in model.notes)
    assert model.notes == [n for n in model.notes if "GenerateContentConfig" in n]


def test_the_config_carries_only_fields_the_sdk_has(tmp_path):
    from cartoqa.models.google_api import build_google_request

    req = Request(id="s", text="?", system="sys", settings=GenerationSettings(seed=9))
    _, config = build_google_request(req, takes={"temperature", "max_output_tokens"})
    assert config.seed is None and config.system_instruction is None
    assert config.temperature == 0 and config.max_output_tokens == 1024
    _, config = build_google_request(req)
    assert config.seed == 9 and config.system_instruction == "sys"


def test_429_waits_at_least_its_retry_info_delay(server):
    server.faults = [Fault("429", retry_after=0.4)]
    t0 = time.perf_counter()
    [r] = model_for(server).generate([Request(id="a", text="hello")])
    assert r.ok and r.retries == 1
    assert time.perf_counter() - t0 >= 0.4


def test_geminis_invalid_key_answer_stops_the_run_but_a_plain_400_fails_alone(server, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    model = model_for(server)
    server.faults = [Fault("400")]
    [r] = model.generate([Request(id="a", text="hello")])
    assert "HTTP 400" in r.error and r.retries == 0
    server.faults = [Fault("401")]  # Gemini's way: 400 INVALID_ARGUMENT, reason API_KEY_INVALID
    with pytest.raises(ModelError, match=r"HTTP 400: API key not valid.*check GOOGLE_API_KEY"):
        model.generate([Request(id="b", text="hello")])


def test_a_blocked_reply_with_no_candidates_is_retried(server):
    server.faults = [Fault("empty", times=-1)]
    [r] = model_for(server).generate([Request(id="a", text="hello")])
    assert "no text" in r.error and "after 4 tries" in r.error
