"""Anthropic, Google and vLLM adapters: requests built without a key; live calls need one."""

import base64
import hashlib
import os

import pytest

from cartoqa.errors import MissingDependencyError, ModelError
from cartoqa.models import GenerationSettings, Request, load_model
from tests.cartoqa.model_data import png

SETTINGS = GenerationSettings(temperature=0, max_tokens=50, seed=3)


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


def test_anthropic_request_carries_images_before_the_text(request_with_images):
    pytest.importorskip("anthropic", reason="the api extra is not installed")
    from cartoqa.models.anthropic_api import build_anthropic_params

    params = build_anthropic_params(request_with_images, "claude-sonnet-4-5")
    assert params["model"] == "claude-sonnet-4-5" and params["system"] == "Be brief."
    assert params["max_tokens"] == 50 and params["temperature"] == 0
    [msg] = params["messages"]
    blocks = msg["content"]
    assert [b["type"] for b in blocks] == ["image", "image", "text"]
    for block, path in zip(blocks, request_with_images.images, strict=False):
        assert block["source"]["media_type"] == "image/png"
        assert base64.b64decode(block["source"]["data"]) == path.read_bytes()
    assert blocks[-1]["text"] == request_with_images.text


def test_google_request_carries_images_and_settings(request_with_images):
    pytest.importorskip("google.genai", reason="the api extra is not installed")
    from cartoqa.models.google_api import build_google_request

    contents, config = build_google_request(request_with_images)
    assert contents[-1] == request_with_images.text
    for part, path in zip(contents[:2], request_with_images.images, strict=True):
        assert part.inline_data.mime_type == "image/png"
        assert (
            hashlib.sha256(part.inline_data.data).digest()
            == hashlib.sha256(path.read_bytes()).digest()
        )
    assert config.system_instruction == "Be brief."
    assert config.temperature == 0 and config.max_output_tokens == 50 and config.seed == 3


@pytest.mark.parametrize(
    ("spec", "env"),
    [("anthropic:claude-x", "ANTHROPIC_API_KEY"), ("google:gemini-x", "GOOGLE_API_KEY")],
)
def test_hosted_models_without_a_key_name_the_variable(spec, env, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ModelError, match=env):
        load_model(spec)


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
