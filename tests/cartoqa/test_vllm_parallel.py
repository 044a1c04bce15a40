"""The vllm adapter fills a GPU node: tensor/data-parallel sizes go to vLLM's engine, batches
are sized to it, and the options are refused where they mean nothing.

vLLM cannot run here (no GPU; not installed), so the plumbing tests put the FAKE vLLM of
tests/cartoqa/fake_vllm.py in ``sys.modules`` (fixture ``fake_vllm``, for that test only):
it records the engine arguments and requests and answers with a digest of each prompt.
The processor and chat template are the real ones of a tiny Qwen2-VL built offline.  The
last test runs that tiny model through REAL vLLM with data parallelism 2 and compares the
answers with the transformers (hf) path; it skips without vLLM or enough CUDA GPUs
(``bash scripts/gpu_check_vllm_dp.sh`` runs it on a GPU machine).
"""

import json
import os

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import ModelError
from cartoqa.models import GenerationSettings, Request, load_model
from cartoqa.runner import open_run_store, run_model
from tests.cartoqa.fake_vllm import FakeVLLMState, install
from tests.cartoqa.model_data import kinds_dataset, png, text_dataset

SETTINGS = GenerationSettings(temperature=0, max_tokens=6, seed=5)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("torch", reason="building the tiny model needs the local extra (torch)")
    pytest.importorskip("transformers", reason="needs the local extra (transformers)")
    from cartoqa.testing.tiny_vlm import build_tiny_qwen2vl

    return build_tiny_qwen2vl(tmp_path_factory.mktemp("tiny-qwen2vl"), seed=0)


@pytest.fixture
def fake_vllm(monkeypatch):
    """The FAKE vllm module (tests/cartoqa/fake_vllm.py) as ``vllm``, for this test only."""
    return install(monkeypatch, FakeVLLMState())


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    paths = []
    for i, size in enumerate([(96, 64), (200, 120)]):
        paths.append(folder / f"im{i}.png")
        paths[-1].write_bytes(png(i * 17, size))
    return paths


def invoke(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(app, ["run", *map(str, args), "--no-progress"])


def test_cartoqa_run_hands_tp_dp_and_the_ray_backend_to_vllm(
    fake_vllm, tiny, tmp_path, monkeypatch
):
    ds = kinds_dataset(tmp_path / "ds")
    result = invoke(
        tmp_path, monkeypatch, ds.path, "--model", f"vllm:{tiny}", "--tasks", "srn,mml,rle",
        "--tp", 2, "--dp", 4, "--parallel-backend", "ray", "--max-tokens", 5,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [engine] = fake_vllm.engines
    args = engine.args
    assert args.model == str(tiny)
    assert (args.tensor_parallel_size, args.data_parallel_size) == (2, 4)
    # vLLM's own Ray backend places the engines, and its Ray executor the GPUs of each copy
    assert (args.data_parallel_backend, args.distributed_executor_backend) == ("ray", "ray")
    [store] = (tmp_path / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in store.read_text().splitlines()]
    assert len(records) == 3 and all(r["response"].startswith("answer ") for r in records)
    assert all("multi_modal_data" in p for p in fake_vllm.prompts)  # the maps went along
    assert {p.max_tokens for p in fake_vllm.params} == {5}
    assert fake_vllm.shut_down == 1  # the engines are stopped when the run ends


def test_the_long_option_names_and_one_node_of_processes(fake_vllm, tiny, tmp_path, monkeypatch):
    ds = text_dataset(tmp_path / "ds", 3)
    result = invoke(
        tmp_path, monkeypatch, ds.path, "--model", f"vllm:{tiny}",
        "--tensor-parallel", 2, "--data-parallel", 4, "--max-tokens", 4,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    args = fake_vllm.engines[0].args
    assert (args.tensor_parallel_size, args.data_parallel_size) == (2, 4)
    assert (args.data_parallel_backend, args.distributed_executor_backend) == ("mp", None)


def test_the_default_batch_fills_every_engine(fake_vllm, tiny):
    for dp in (1, 2, 8):
        model = load_model(f"vllm:{tiny}", data_parallel=dp)
        assert model.batch_size == dp * 256  # the engine's max_num_seqs, once per copy
        model.close()
    fake_vllm.max_num_seqs = 1024  # what vLLM resolves on an H100/H200 when not given
    model = load_model(f"vllm:{tiny}", tensor_parallel=2, data_parallel=4)
    assert model.batch_size == 4 * 1024
    model.close()
    model = load_model(f"vllm:{tiny}", data_parallel=4, batch_size=100)
    assert model.batch_size == 100  # --batch-size wins
    model.close()


def test_a_run_submits_whole_batches_of_dp_times_max_num_seqs(fake_vllm, tiny, tmp_path):
    fake_vllm.max_num_seqs = 3
    ds = text_dataset(tmp_path / "ds", 10)
    model = load_model(f"vllm:{tiny}", data_parallel=2)
    with open_run_store(tmp_path / "runs", ds, model.spec, SETTINGS) as store:
        summary = run_model(ds, model, store, settings=SETTINGS)
    model.close()
    assert summary.answered == 10 and summary.failed == 0
    assert len(fake_vllm.prompts) == 10
    assert len(set(fake_vllm.request_ids)) == 10
    # each call hands vLLM a whole batch at once: 2 engines x 3 sequences in flight
    assert fake_vllm.most_in_flight == 6


def test_parallel_options_for_another_model_are_refused(tmp_path, monkeypatch):
    ds = text_dataset(tmp_path / "ds", 2)
    result = invoke(tmp_path, monkeypatch, ds.path, "--model", "oracle", "--dp", 2)
    assert result.exit_code == 2
    assert "--data-parallel 2 applies only to vllm:MODEL" in result.output
    assert "'oracle'" in result.output
    with pytest.raises(ModelError, match=r"--tensor-parallel 2 .*'hf:x'.*--device-map auto"):
        load_model("hf:x", tensor_parallel=2)
    with pytest.raises(ModelError, match=r"--parallel-backend ray .*'openai:gpt-4o'"):
        load_model("openai:gpt-4o", parallel_backend="ray")
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").glob("*.jsonl"))


def test_more_gpus_than_the_node_has_is_refused_before_loading(fake_vllm, tiny):
    fake_vllm.gpus = 4
    with pytest.raises(ModelError, match=r"needs 8 GPUs; this machine has 4"):
        load_model(f"vllm:{tiny}", tensor_parallel=2, data_parallel=4)
    assert fake_vllm.engines == []
    # on Ray the GPUs are the cluster's: vLLM places the engines over its nodes
    model = load_model(f"vllm:{tiny}", tensor_parallel=2, data_parallel=4, parallel_backend="ray")
    assert model.batch_size == 4 * 256
    model.close()
    fake_vllm.gpus = 0  # one engine is vLLM's to place (a CPU build of vLLM has no GPU)
    load_model(f"vllm:{tiny}").close()
    assert len(fake_vllm.engines) == 2


def test_bad_sizes_and_backends_name_the_value_and_the_fix(fake_vllm, tiny, tmp_path, monkeypatch):
    with pytest.raises(ModelError, match=r"--tensor-parallel 0 .*whole number >= 1"):
        load_model(f"vllm:{tiny}", tensor_parallel=0)
    with pytest.raises(ModelError, match=r"--data-parallel -1 .*whole number >= 1"):
        load_model(f"vllm:{tiny}", data_parallel=-1)
    with pytest.raises(ModelError, match=r"--parallel-backend 'slurm': use mp .* or ray"):
        load_model(f"vllm:{tiny}", parallel_backend="slurm")
    ds = text_dataset(tmp_path / "ds", 1)
    result = invoke(tmp_path, monkeypatch, ds.path, "--model", f"vllm:{tiny}", "--dp", 0)
    assert result.exit_code == 2 and "--data-parallel 0" in result.output
    assert fake_vllm.engines == []


def test_an_older_vllm_is_refused_with_its_version_and_the_fix(monkeypatch, tiny):
    install(monkeypatch, FakeVLLMState(version="0.8.5"))
    with pytest.raises(ModelError, match=r"vllm 0\.8\.5 is installed.*vLLM 0\.9\.2 or later"):
        load_model(f"vllm:{tiny}", data_parallel=2)
    with pytest.raises(ModelError, match=r"pip install -U 'vllm>=0\.9\.2'"):
        load_model(f"vllm:{tiny}")


def test_the_engine_gets_the_prompt_the_hf_adapter_builds(fake_vllm, tiny, images):
    import transformers

    from cartoqa.models.hf_local import _messages

    model = load_model(f"vllm:{tiny}", data_parallel=2)
    reqs = [
        Request(
            id="a", text="Two maps?", system="Be brief.", images=tuple(images), settings=SETTINGS
        ),
        Request(id="b", text="One map?", images=(images[1],), settings=SETTINGS),
        Request(id="c", text="No map.", settings=GenerationSettings(temperature=0.7, max_tokens=9)),
    ]
    out = model.generate(reqs)
    model.close()
    processor = transformers.AutoProcessor.from_pretrained(tiny)
    for r, prompt in zip(reqs, fake_vllm.prompts, strict=True):
        expected = processor.apply_chat_template(
            _messages(r), tokenize=False, add_generation_prompt=True
        )
        assert prompt["prompt"] == expected
    two, one = fake_vllm.prompts[0]["multi_modal_data"]["image"], fake_vllm.prompts[1]
    assert [im.size for im in two] == [(96, 64), (200, 120)]
    assert one["multi_modal_data"]["image"].size == (200, 120)
    assert "multi_modal_data" not in fake_vllm.prompts[2]
    got = [(p.temperature, p.max_tokens, p.seed) for p in fake_vllm.params]
    assert got == [(0, 6, 5), (0, 6, 5), (0.7, 9, None)]
    assert all(r.ok for r in out)
    assert [r.output_tokens for r in out] == [6, 6, 9]  # from the final output, not a partial
    assert [r.input_tokens for r in out] == [len(p["prompt"].split()) for p in fake_vllm.prompts]


def test_one_failing_request_fails_alone(fake_vllm, tiny):
    fake_vllm.fail_on = "BOOM"
    model = load_model(f"vllm:{tiny}")
    out = model.generate(
        [Request(id=str(i), text=t, settings=SETTINGS) for i, t in enumerate(["a", "BOOM", "c"])]
    )
    model.close()
    assert [r.ok for r in out] == [True, False, True]
    assert "refused a prompt holding 'BOOM'" in out[1].error


def text_only_model(tiny, folder):
    """A text-only model's files: the tiny tokenizer, no processor, a BOS that the tokenizer
    adds to whatever it encodes and that the chat template writes too (as Llama 3's do)."""
    folder.mkdir()
    tokenizer = json.loads((tiny / "tokenizer.json").read_text())
    [bos] = [t for t in tokenizer["added_tokens"] if t["content"] == "<|endoftext|>"]
    special = {"id": bos["content"], "type_id": 0}
    tokenizer["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": special}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": special}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {bos["content"]: {
            "id": bos["content"], "ids": [bos["id"]], "tokens": [bos["content"]]}},
    }  # fmt: skip
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    config = json.loads((tiny / "tokenizer_config.json").read_text())
    config.pop("processor_class", None)
    config["bos_token"] = bos["content"]
    config["chat_template"] = (
        "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def test_a_text_only_model_gets_plain_prompts_and_one_bos(fake_vllm, tiny, tmp_path, images):
    import transformers

    folder = text_only_model(tiny, tmp_path / "text-model")
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    assert tokenizer("x")["input_ids"][0] == tokenizer.bos_token_id  # it adds its BOS itself
    model = load_model(f"vllm:{folder}")
    out = model.generate(
        [
            Request(id="a", text="How far is Paris?", system="Be brief.", settings=SETTINGS),
            Request(id="b", text="A map?", images=(images[0],), settings=SETTINGS),
        ]
    )
    model.close()
    [prompt] = fake_vllm.prompts  # the question with a map never reached the engine
    assert prompt["prompt"] == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHow far is Paris?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )  # strings, not a list of parts; no BOS (vLLM adds the tokenizer's)
    assert out[0].ok and not out[1].ok
    assert "loaded no image processor" in out[1].error and "1 image(s)" in out[1].error


def _cuda_gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


DP = int(os.environ.get("CARTOQA_VLLM_DP", "2"))


@pytest.mark.skipif(_cuda_gpus() < DP, reason=f"needs {DP} CUDA GPUs (data parallelism {DP})")
def test_tiny_model_through_real_vllm_data_parallel(tmp_path, images):
    """REAL vLLM (no fake): the tiny Qwen2-VL as DP engines, greedy, float32; the answers
    equal the transformers path's.  CARTOQA_VLLM_DP=1 runs it on one GPU."""
    pytest.importorskip("vllm", reason="vLLM is not installed (pip install 'cartoqa[gpu]')")
    from cartoqa.testing.tiny_vlm import build_tiny_qwen2vl

    folder = build_tiny_qwen2vl(tmp_path / "tiny", seed=0)
    reqs = [
        Request(id=str(i), text=f"Question {i} about this map?", images=(images[i % 2],),
                settings=SETTINGS)
        for i in range(8)
    ] + [Request(id="t", text="A question without a map.", settings=SETTINGS)]  # fmt: skip
    hf = load_model(f"hf:{folder}", device_map="cpu", dtype="float32", batch_size=1)
    expected = [hf.generate([r])[0] for r in reqs]
    hf.close()
    model = load_model(f"vllm:{folder}", data_parallel=DP, dtype="float32")
    try:
        assert model.batch_size == DP * model.max_num_seqs
        got = model.generate(reqs)
    finally:
        model.close()
    assert all(r.ok for r in got), [r.error for r in got]
    assert [r.image_tokens for r in got] == [r.image_tokens for r in expected]
    assert [r.text for r in got] == [r.text for r in expected]
