"""Every hosted adapter through its own SDK, against a local server speaking its wire format.

The servers (cartoqa.testing: FakeOpenAIServer, FakeAnthropicServer, FakeGeminiServer) are
real HTTP on 127.0.0.1; nothing here is mocked.  Provider-specific request shapes are in
test_models_openai.py, test_models_anthropic.py and test_models_google.py.
"""

import hashlib
import os
import re
import socket
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from cartoqa.errors import MissingDependencyError, ModelError
from cartoqa.models import GenerationSettings, Request, RetryPolicy, load_model
from cartoqa.runner import open_run_store, run_model
from cartoqa.testing._fake_api import SURROGATE
from cartoqa.testing.fake_anthropic import FakeAnthropicServer
from cartoqa.testing.fake_gemini import FakeGeminiServer
from cartoqa.testing.fake_openai import FakeOpenAIServer, Fault
from tests.cartoqa.model_data import png, text_dataset

ROOT = Path(__file__).resolve().parents[2]
FAST = RetryPolicy(max_retries=3, base_s=0.01, max_s=2.0, timeout_s=0.5)
SETTINGS = GenerationSettings(temperature=0, max_tokens=50, seed=3)

SERVERS = {
    "openai": (FakeOpenAIServer, "openai", "OPENAI_API_KEY"),
    "anthropic": (FakeAnthropicServer, "anthropic", "ANTHROPIC_API_KEY"),
    "google": (FakeGeminiServer, "google.genai", "GOOGLE_API_KEY"),
}


@pytest.fixture(params=sorted(SERVERS))
def hosted(request):
    """(provider, a running fake server that speaks that provider's API)."""
    server_cls, module, _ = SERVERS[request.param]
    pytest.importorskip(module, reason="the api extra is not installed")
    with server_cls() as server:
        yield request.param, server


def model_for(provider, server, retry=FAST):
    return load_model(f"{provider}:fake-vlm@{server.url}", retry=retry)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def request_with_images(tmp_path):
    paths = []
    for i in range(2):
        p = tmp_path / f"map{i}.png"
        p.write_bytes(png(i))
        paths.append(p)
    return Request(
        id="s1",
        text="Which roads meet at the red marker?",
        system="Be brief.",
        images=tuple(paths),
        settings=SETTINGS,
    )


# ------------------------------------------------------------------ requests and replies


def test_images_system_prompt_and_token_counts_go_through_every_sdk(hosted, request_with_images):
    provider, server = hosted
    model = model_for(provider, server)
    [r] = model.generate([request_with_images])
    assert r.ok, r.error
    assert r.text == server.reply_for(request_with_images.text)
    [got] = server.log
    assert got.model == "fake-vlm" and got.text == request_with_images.text
    assert got.system == "Be brief."
    assert got.image_sha256 == [
        hashlib.sha256(p.read_bytes()).hexdigest() for p in request_with_images.images
    ]
    assert r.input_tokens == server.input_tokens_for(request_with_images.text, 2)
    assert r.output_tokens == server.output_tokens_for(r.text)
    assert isinstance(model.notes, list)


@pytest.mark.parametrize("kind", ["429", "500", "529", "hang", "drop", "malformed", "empty"])
def test_transient_faults_are_retried_by_every_adapter(hosted, kind):
    provider, server = hosted
    server.faults = [Fault(kind, times=2, hang_s=3)]
    [r] = model_for(provider, server).generate([Request(id="a", text="hello")])
    assert r.ok, r.error
    assert r.retries == 2 and r.text == server.reply_for("hello")
    assert [e.fault for e in server.log] == [kind, kind, None]


@pytest.mark.parametrize("kind", ["500", "529"])
def test_a_fault_that_never_ends_fails_the_request_after_its_retries(hosted, kind):
    provider, server = hosted
    server.faults = [Fault(kind, times=-1)]
    [r] = model_for(provider, server).generate([Request(id="a", text="hello")])
    assert not r.ok and r.text is None
    assert re.search(r"HTTP 5\d\d", r.error) and "after 4 tries" in r.error
    assert len(server.log) == 4


def test_a_bad_request_fails_alone_and_is_not_retried(hosted):
    provider, server = hosted
    server.faults = [Fault("400", times=-1)]
    [r] = model_for(provider, server).generate([Request(id="a", text="hello")])
    assert "HTTP 400" in r.error and r.retries == 0 and len(server.log) == 1


def test_a_refused_key_stops_the_run(hosted):
    provider, server = hosted
    server.faults = [Fault("401", times=-1)]
    env = SERVERS[provider][2]
    with pytest.raises(ModelError, match=f"refused the API key: check {env}"):
        model_for(provider, server).generate([Request(id="a", text="hello")])
    assert len(server.log) == 1


@pytest.mark.parametrize("kind", ["negative_usage", "garbage_usage"])
def test_token_counts_that_are_not_counts_become_unknown_with_a_note(hosted, kind):
    provider, server = hosted
    server.faults = [Fault(kind)]
    model = model_for(provider, server)
    [bad, good] = model.generate([Request(id="a", text="hello")]) + model.generate(
        [Request(id="b", text="hello")]
    )
    assert bad.ok and bad.text == server.reply_for("hello") and bad.retries == 0
    assert bad.input_tokens is None and bad.output_tokens is None
    assert good.input_tokens == server.input_tokens_for("hello", 0)
    [note] = [n for n in model.notes if "not a count" in n]
    assert ("-5" if kind == "negative_usage" else "'many'") in note


def test_a_lone_surrogate_in_the_reply_is_returned_as_text(hosted):
    provider, server = hosted
    server.faults = [Fault("surrogate")]
    [r] = model_for(provider, server).generate([Request(id="a", text="hello")])
    assert r.ok and r.text == server.reply_for("hello") + SURROGATE


# ------------------------------------------------------------------ dead and hung endpoints


def test_a_closed_port_stops_the_run_after_one_retry(hosted):
    provider, _ = hosted
    port = closed_port()
    model = load_model(f"{provider}:m@http://127.0.0.1:{port}", retry=RetryPolicy(base_s=0.05))
    with pytest.raises(ModelError) as err:
        model.generate([Request(id="a", text="hello")])
    message = str(err.value)
    assert f"cannot connect to http://127.0.0.1:{port}" in message
    assert "after 2 tries" in message and "is it running" in message
    assert "API key" not in message


def test_a_lost_server_after_answers_fails_each_request_alone(hosted):
    provider, server = hosted
    model = load_model(f"{provider}:m@{server.url}", retry=RetryPolicy(base_s=0.05))
    [first] = model.generate([Request(id="a", text="hello")])
    assert first.ok
    server.stop()
    [r] = model.generate([Request(id="b", text="hello")])  # no ModelError: it answered before
    assert not r.ok and "cannot connect" in r.error and "after 2 tries" in r.error
    assert r.retries == 1


def test_a_hung_server_stops_the_run_within_the_deadline(hosted):
    provider, server = hosted
    server.faults = [Fault("hang", times=-1, hang_s=30)]
    policy = RetryPolicy(max_retries=6, base_s=0.01, timeout_s=0.3, deadline_s=1.0)
    with pytest.raises(ModelError, match="has not answered any request yet") as err:
        model_for(provider, server, retry=policy).generate([Request(id="a", text="hello")])
    assert "deadline" in str(err.value)
    assert 2 <= len(server.log) <= 4  # the deadline, not the 7 tries, ends it


def test_a_request_that_hangs_after_answers_fails_alone_at_its_deadline(hosted):
    provider, server = hosted
    policy = RetryPolicy(max_retries=6, base_s=0.01, timeout_s=0.3, deadline_s=1.0)
    model = model_for(provider, server, retry=policy)
    assert model.generate([Request(id="a", text="first")])[0].ok
    server.faults = [Fault("hang", times=-1, hang_s=30)]
    [r] = model.generate([Request(id="b", text="second")])
    assert not r.ok and "timeout" in r.error and "1 s deadline" in r.error
    assert 2 <= len(server.log) - 1 <= 4


# ------------------------------------------------------------------ specs and base URLs


@pytest.mark.parametrize("provider", sorted(SERVERS))
@pytest.mark.parametrize(
    ("address", "fix"),
    [
        ("127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("localhost:8000", "http://localhost:8000"),
        ("ftp://127.0.0.1:8000", "http://127.0.0.1:8000"),
    ],
)
def test_a_base_url_without_http_says_to_add_it(provider, address, fix, monkeypatch):
    pytest.importorskip(SERVERS[provider][1], reason="the api extra is not installed")
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ModelError) as err:
        load_model(f"{provider}:m@{address}")
    message = str(err.value)
    assert repr(address) in message and "http://" in message and fix in message
    assert "API key" not in message


@pytest.mark.parametrize(
    ("url", "problem"),
    [("http://", "names no host"), ("http://127.0.0.1:80a/v1", "port that is not a number")],
)
def test_a_base_url_with_no_host_or_a_bad_port_is_refused(url, problem):
    with pytest.raises(ModelError, match=problem):
        load_model(f"openai:m@{url}")


def test_an_at_sign_in_a_model_name_is_not_a_url(monkeypatch):
    pytest.importorskip("anthropic", reason="the api extra is not installed")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-unused")  # no call is made
    model = load_model("anthropic:claude-x@20240620")
    assert model.model == "claude-x@20240620" and model.endpoint == "https://api.anthropic.com"


@pytest.mark.parametrize(
    ("spec", "env"),
    [("anthropic:claude-x", "ANTHROPIC_API_KEY"), ("google:gemini-x", "GOOGLE_API_KEY")],
)
def test_hosted_models_without_a_key_name_the_variable(spec, env, monkeypatch):
    pytest.importorskip(SERVERS[spec.partition(":")[0]][1], reason="the api extra is not installed")
    for var in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ModelError, match=env):
        load_model(spec)


def test_a_local_base_url_needs_no_key(hosted, monkeypatch):
    provider, server = hosted
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    model = model_for(provider, server)
    assert model.spec == f"{provider}:fake-vlm@{server.url}"
    assert model.generate([Request(id="a", text="hello")])[0].ok


# ------------------------------------------------------------------ the runner, end to end


def test_runner_through_every_adapter_answers_or_fails_each_sample(hosted, tmp_path, monkeypatch):
    provider, server = hosted
    secret = "sk-test-" + "q4" * 12
    monkeypatch.setenv(SERVERS[provider][2], secret)
    ds = text_dataset(tmp_path / "ds", 12)
    server.faults = [
        Fault("429", match="q-0001", retry_after=0.05),
        Fault("529", match="q-0002"),
        Fault("drop", match="q-0003"),
        Fault("negative_usage", match="q-0004"),
        Fault("500", match="q-0005", times=-1),
        Fault("400", match="q-0006", times=-1),
    ]
    model = model_for(provider, server)
    with open_run_store(tmp_path / "runs", ds, model.spec, GenerationSettings()) as store:
        summary = run_model(ds, model, store, concurrency=4)
        latest = store.latest()
    assert summary.stopped is None
    assert sorted(summary.failed_ids) == ["q-0005", "q-0006"]
    assert summary.answered == 10
    assert latest["q-0004"].input_tokens is None
    for s in ds:
        if s.id not in ("q-0005", "q-0006"):
            assert latest[s.id].response == server.reply_for(s.prompt.text)
    assert all(secret in (e.authorization or "") for e in server.log)
    for f in (tmp_path / "runs").iterdir():
        assert secret not in f.read_text()


# ------------------------------------------------------------------ the SDK versions


def _api_extra() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for req in project["optional-dependencies"]["api"]:
        name = re.match(r"[A-Za-z0-9_.-]+", req).group(0)
        pins[name] = req[len(name) :]
    return pins


@pytest.mark.parametrize("dist", ["anthropic", "google-genai"])
def test_the_installed_sdk_lies_in_the_range_the_api_extra_pins(dist):
    from packaging.specifiers import SpecifierSet

    pins = _api_extra()
    assert dist in pins, f"the api extra does not name {dist}"
    spec = SpecifierSet(pins[dist])
    assert "0.0.1" not in spec and "999.0" not in spec, f"pin both ends of {dist}: {spec}"
    try:
        installed = metadata.version(dist)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{dist} is not installed (the api extra)")
    assert installed in spec, f"{dist} {installed} is outside the api extra's {spec}"


# ------------------------------------------------------------------ no key, no network


def test_an_unreadable_image_fails_its_request_not_the_run(tmp_path, monkeypatch):
    pytest.importorskip("anthropic", reason="the api extra is not installed")
    bad = tmp_path / "not-an-image.png"
    bad.write_text("hello")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-unused")  # no call is made
    model = load_model("anthropic:claude-x")
    [r] = model.generate([Request(id="a", text="?", images=(bad,))])
    assert not r.ok and "not a PNG, JPEG, GIF or WebP" in r.error


def test_vllm_is_optional_and_says_how_to_install():
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match=r"pip install 'cartoqa\[gpu\]'"):
            load_model("vllm:Qwen/Qwen2.5-VL-7B-Instruct")
    else:
        pytest.skip("vllm is installed here; its live test needs a GPU and weights")


@pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"), reason="needs ANTHROPIC_API_KEY and network"
)
def test_anthropic_live(request_with_images):
    [r] = load_model("anthropic:claude-3-5-haiku-latest").generate([request_with_images])
    assert r.ok, r.error


@pytest.mark.skipif(not os.environ.get("GOOGLE_API_KEY"), reason="needs GOOGLE_API_KEY and network")
def test_google_live(request_with_images):
    [r] = load_model("google:gemini-2.5-flash").generate([request_with_images])
    assert r.ok, r.error


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY and network")
def test_openai_live(request_with_images):
    [r] = load_model("openai:gpt-4o-mini").generate([request_with_images])
    assert r.ok, r.error
