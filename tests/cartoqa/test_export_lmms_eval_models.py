"""lmms-eval's own CLI and its own ``qwen2_vl`` and ``llava_hf`` model classes on the
lmms-eval export's map group, in this venv, with tiny random models built offline
(``cartoqa.testing.tiny_vlm``): issue 26, finding 19.

lmms-eval exits with status 0 when a model class cannot be imported (decord missing) or its
evaluator cannot start (filelock 4), so the test reads what it wrote: the results JSON (with
every map task, strict JSON) and the logged samples, whose answers ``cartoqa score``'s
arithmetic must turn into the very numbers lmms-eval reported.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lmms_eval", reason="the lmms-eval export's tests need lmms-eval (dev extra)")
pytest.importorskip("pyarrow", reason="the export extra installs pyarrow")
pytest.importorskip("transformers", reason="the tiny Qwen2-VL needs the local extra")
pytest.importorskip("torch", reason="the tiny Qwen2-VL needs the local extra")

from cartoqa.exports.lmms_eval import EXPORT_MARKER, MAP_GROUP, export_lmms_eval
from cartoqa.records import Metadata, Prompt, Sample
from cartoqa.scoring import score_run
from cartoqa.stores import Dataset, DatasetWriter, load_dataset
from cartoqa.testing.tiny_vlm import build_tiny_llava, build_tiny_qwen2vl
from tests.cartoqa.model_data import CASES, PROV, png

#: a handful of map questions (RLE's r² of one sample is no number: null, never NaN) and one
#: GPS question, which the map group must leave out
MAP_TASKS = ("rle", "srn", "stmf_count", "mfs")
GPS_TASK = "distance"


def small_dataset(folder: Path) -> Dataset:
    with DatasetWriter(folder, name="qwen2vl-cli") as w:
        for n, (task, truth, question) in enumerate(CASES):
            if task not in (*MAP_TASKS, GPS_TASK):
                continue
            images = [w.add_image(f"{task}.png", png(n, (320, 180)))] if task in MAP_TASKS else []
            w.add(
                Sample(
                    id=f"{task}-0",
                    task=task,
                    prompt=Prompt(text=question, system="Answer briefly.", images=images),
                    ground_truth=truth,
                    metadata=Metadata(difficulty="easy"),
                    provenance=PROV,
                )
            )
        w.finish(seeds=[0])
    return load_dataset(folder)


def _refuse_nan(name: str) -> Any:
    raise AssertionError(f"{name} in a JSON file lmms-eval wrote: strict readers refuse it")


def strict_load(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_nan)


#: lmms-eval model class -> (the tiny model's builder, its model_args besides pretrained)
MODEL_CLASSES = {
    "qwen2_vl": (
        lambda folder: build_tiny_qwen2vl(folder, max_pixels=224 * 224),
        f"device=cpu,device_map=cpu,max_pixels={224 * 224}",
    ),
    # the map group is what llava_hf can answer (it fails on a question without an image)
    "llava_hf": (build_tiny_llava, "device=cpu,device_map=cpu"),
}


@pytest.mark.slow
@pytest.mark.parametrize("model_class", sorted(MODEL_CLASSES))
def test_lmms_eval_cli_runs_a_vlm_class_on_the_map_group(tmp_path, model_class):
    ds = small_dataset(tmp_path / "ds")
    out = export_lmms_eval(ds, tmp_path / "export")
    build, model_args = MODEL_CLASSES[model_class]
    model = build(tmp_path / "model")
    results = tmp_path / "results"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LMMS_EVAL_DATASETS_CACHE": str(tmp_path / "hf-cache"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    command = [
        sys.executable, "-m", "lmms_eval",
        "--model", model_class,
        "--model_args", f"pretrained={model},{model_args}",
        "--include_path", str(out),
        "--tasks", MAP_GROUP,
        "--batch_size", "1",
        "--gen_kwargs", "max_new_tokens=12",  # noise either way; the CLI overrides the YAML's
        "--log_samples",
        "--output_path", str(results),
    ]  # fmt: skip
    proc = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    # lmms-eval says "exit 0" whatever happened: what it wrote is what counts
    found = sorted(results.rglob("*_results.json"))
    assert len(found) == 1, f"lmms-eval wrote no results; its output ends:\n{log[-4000:]}"
    report = strict_load(found[0].read_text(encoding="utf-8"))
    lmms_tasks = {f"cartoqa_{t}" for t in MAP_TASKS}
    assert lmms_tasks <= set(report["results"])
    assert f"cartoqa_{GPS_TASK}" not in report["results"]  # the map group holds map tasks only
    assert model_class in json.dumps(report["config"])
    # what the model answered, from the logged samples
    responses: dict[str, str | None] = {}
    for task in lmms_tasks:
        (samples_file,) = results.rglob(f"*_samples_{task}.jsonl")
        for line in samples_file.read_text(encoding="utf-8").splitlines():
            record = strict_load(line)
            item = next(v for v in record.values() if isinstance(v, dict) and "sample" in v)
            answer = record["filtered_resps"]
            answer = answer[0] if isinstance(answer, list) else answer
            assert isinstance(answer, str)
            responses[item["sample"]["id"]] = answer
    map_samples = [s for s in ds if s.task in MAP_TASKS]
    assert set(responses) == {s.id for s in map_samples}
    # the numbers equal cartoqa's for those answers, metric by metric (NaN reported as null)
    tables = score_run(map_samples, responses)
    marker = json.loads((out / EXPORT_MARKER).read_text(encoding="utf-8"))
    compared = 0
    for name in lmms_tasks:
        for metric, (row, column) in marker["tasks"][name]["metrics"].items():
            want = tables[marker["tasks"][name]["cartoqa_task"]][row][column]
            got = report["results"][name][f"{metric},none"]
            if isinstance(want, float) and math.isnan(want):
                assert got is None, (name, metric, got)
            else:
                assert got == want and type(got) is type(want), (name, metric, got, want)
            compared += 1
    assert compared >= 10
    assert report["results"]["cartoqa_rle"]["r2 (all ?),none"] is None  # one sample: no r²
