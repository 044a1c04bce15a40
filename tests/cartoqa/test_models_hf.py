"""The hf adapter, for real, on a tiny randomly initialised Qwen2-VL built offline."""

import json
import shutil

import pytest

torch = pytest.importorskip("torch", reason="the hf adapter needs the local extra (torch)")
transformers = pytest.importorskip("transformers", reason="needs the local extra (transformers)")

from typer.testing import CliRunner  # noqa: E402

from cartoqa.cli import app  # noqa: E402
from cartoqa.errors import ModelError  # noqa: E402
from cartoqa.models import GenerationSettings, Request, load_model  # noqa: E402
from cartoqa.testing.tiny_vlm import build_tiny_llava, build_tiny_qwen2vl  # noqa: E402
from tests.cartoqa.model_data import kinds_dataset, png  # noqa: E402

SETTINGS = GenerationSettings(max_tokens=6)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_qwen2vl(tmp_path_factory.mktemp("tiny-qwen2vl"), seed=0)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    paths = []
    for i, size in enumerate([(96, 64), (200, 120)]):
        p = folder / f"im{i}.png"
        p.write_bytes(png(i * 17, size))
        paths.append(p)
    return paths


def vision_calls(model):
    """Record the pixel tensors the vision tower is called with."""
    seen = []
    tower = model.model.model.visual
    tower.register_forward_hook(lambda mod, args, out: seen.append(tuple(args[0].shape)))
    return seen


def expected_image_tokens(model, path):
    from PIL import Image

    proc = model.processor.image_processor
    grid = proc(images=[Image.open(path).convert("RGB")], return_tensors="pt")["image_grid_thw"]
    return int(grid.prod()) // proc.merge_size**2


def test_an_image_reaches_the_model_and_text_comes_back(tiny, images):
    model = load_model(f"hf:{tiny}", device_map="cpu", batch_size=2)
    assert isinstance(model.processor, transformers.ProcessorMixin)
    seen = vision_calls(model)
    [r] = model.generate(
        [Request(id="a", text="Where is the blue marker?", images=(images[0],), settings=SETTINGS)]
    )
    assert r.ok and isinstance(r.text, str)
    assert 1 <= r.output_tokens <= 6
    assert seen and seen[0][0] > 0  # the vision tower ran on pixel patches
    assert r.image_tokens == expected_image_tokens(model, images[0]) > 0
    assert r.input_tokens > r.image_tokens
    [t] = model.generate([Request(id="b", text="No image here.", settings=SETTINGS)])
    assert t.ok and t.image_tokens == 0


def test_a_llava_style_model_runs_through_the_same_path(tmp_path, images):
    folder = build_tiny_llava(tmp_path / "tiny-llava", seed=0)
    model = load_model(f"hf:{folder}", device_map="cpu", batch_size=2)
    seen = []
    model.model.model.vision_tower.register_forward_hook(
        lambda mod, args, out: seen.append(tuple(args[0].shape))
    )
    reqs = [
        Request(id=str(i), text=f"Question {i} about the map?", images=(p,), settings=SETTINGS)
        for i, p in enumerate(images)
    ]
    together = model.generate(reqs)
    assert seen and seen[0][-2:] == (224, 224)  # both images, resized by the CLIP processor
    assert [r.image_tokens for r in together] == [256, 256]  # (224 / 14)^2, CLS dropped
    assert [r.text for r in together] == [model.generate([r])[0].text for r in reqs]


def test_a_batch_gives_what_each_request_gives_alone(tiny, images):
    model = load_model(f"hf:{tiny}", device_map="cpu", batch_size=2)
    reqs = [
        Request(id="a", text="Short question?", images=(images[0],), settings=SETTINGS),
        Request(
            id="b",
            text="A much longer question about a map",
            images=(images[1],),
            settings=SETTINGS,
        ),
    ]
    together = model.generate(reqs)
    alone = [model.generate([r])[0] for r in reqs]
    assert [r.text for r in together] == [r.text for r in alone]
    assert [r.image_tokens for r in together] == [r.image_tokens for r in alone]
    assert together[0].image_tokens != together[1].image_tokens  # two image sizes


def test_the_same_seed_builds_the_same_model(tiny, tmp_path):
    again = build_tiny_qwen2vl(tmp_path / "again", seed=0)
    for name in ("model.safetensors", "tokenizer.json"):
        assert (again / name).read_bytes() == (tiny / name).read_bytes()


def test_a_model_whose_processor_is_a_bare_tokenizer_is_refused_not_run_blind(tiny, tmp_path):
    # AutoProcessor falls back to the tokenizer for a text-only model: images would be dropped
    blind = tmp_path / "blind"
    blind.mkdir()
    shutil.copy(tiny / "tokenizer.json", blind / "tokenizer.json")
    config = json.loads((tiny / "tokenizer_config.json").read_text())
    config.pop("processor_class", None)  # a text model's tokenizer names no processor
    (blind / "tokenizer_config.json").write_text(json.dumps(config))
    transformers.LlamaConfig(
        vocab_size=600,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
    ).save_pretrained(blind)
    with pytest.raises(ModelError, match="images would never reach the model"):
        load_model(f"hf:{blind}", device_map="cpu")


def test_a_folder_missing_its_image_processor_is_an_error(tiny, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(tiny, broken)
    (broken / "processor_config.json").unlink()
    with pytest.raises(ModelError, match="cannot load .*image processor"):
        load_model(f"hf:{broken}", device_map="cpu")


def test_a_missing_model_says_what_to_give(tmp_path):
    with pytest.raises(ModelError, match="cannot load"):
        load_model(f"hf:{tmp_path / 'nothing-here'}", device_map="cpu")


def test_cartoqa_run_with_the_hf_adapter_on_map_tasks(tiny, tmp_path, monkeypatch):
    ds = kinds_dataset(tmp_path / "ds")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(ds.path),
            "--model",
            f"hf:{tiny}",
            "--tasks",
            "srn,mml,rle",
            "--device-map",
            "cpu",
            "--batch-size",
            "2",
            "--max-tokens",
            "5",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    [store] = (tmp_path / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in store.read_text().splitlines()]
    assert len(records) == 3 and all(r["error"] is None for r in records)
    assert all(r["image_tokens"] > 0 for r in records)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_tiny_model_on_cuda(tiny, images):
    model = load_model(f"hf:{tiny}", device_map="cuda", batch_size=2)
    assert model.device.startswith("cuda")
    [r] = model.generate([Request(id="a", text="Where?", images=(images[0],), settings=SETTINGS)])
    assert r.ok and r.image_tokens == expected_image_tokens(model, images[0])
