"""Every export carries the paired variants (issue 32): a small dataset made by hand with
base samples, ``@text`` copies without an image, ``@greyscale`` copies with an image of
their own and ``@nolabels`` copies (answerable for STMF count, ``answerable: false`` for
STMF names), exported to each format, read back with each harness's own loader or classes,
and scored by each harness's scoring: a variant's number never mixes with its base's."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

datasets = pytest.importorskip("datasets", reason="the dev extra installs datasets")
pytest.importorskip("pyarrow", reason="the export extra installs pyarrow")
yaml = pytest.importorskip("yaml", reason="datasets installs PyYAML")

from PIL import Image  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from cartoqa.cli import app  # noqa: E402
from cartoqa.errors import CartoqaError  # noqa: E402
from cartoqa.exports import folder  # noqa: E402
from cartoqa.exports.cartomapqa import export_cartomapqa  # noqa: E402
from cartoqa.exports.hf import CARD_FILE, export_hf  # noqa: E402
from cartoqa.exports.vlmevalkit import export_vlmevalkit, tsv_name  # noqa: E402
from cartoqa.scoring import score_run  # noqa: E402
from cartoqa.stores import Dataset  # noqa: E402
from tests.cartoqa.variant_data import variant_answers, variant_dataset  # noqa: E402

#: the parts the dataset holds, as every export names them, in their order
PARTS = [
    "distance",
    "stmf_count",
    "stmf_count__text",
    "stmf_count__nolabels",
    "stmf_count__greyscale",
    "stmf_names",
    "stmf_names__nolabels__unanswerable",
]
#: part -> its score key (the table ``cartoqa score`` prints its scores in)
KEYS = {
    "distance": "distance",
    "stmf_count": "stmf_count",
    "stmf_count__text": "stmf_count@text",
    "stmf_count__nolabels": "stmf_count@nolabels",
    "stmf_count__greyscale": "stmf_count@greyscale",
    "stmf_names": "stmf_names",
    "stmf_names__nolabels__unanswerable": "stmf_names@nolabels/unanswerable",
}


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return variant_dataset(tmp_path_factory.mktemp("variants") / "ds")


@pytest.fixture(scope="module")
def want(ds: Dataset) -> dict[str, Any]:
    """cartoqa's own tables of the answers, by score key."""
    return score_run(list(ds), variant_answers(ds))


def _by_part(ds: Dataset) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for s in ds:
        out.setdefault(folder.part_of(s).name, []).append(s)
    return out


def _fields(sample: Any) -> tuple[Any, str, bool]:
    extra = sample.metadata.model_extra or {}
    return extra.get("variant"), extra.get("base", sample.id), extra.get("answerable", True)


def _same(a: Any, b: Any) -> bool:
    """Equal numbers, NaN or None equal to NaN (harnesses write no NaN)."""
    if isinstance(b, float) and math.isnan(b):
        return a is None or (isinstance(a, float) and math.isnan(a))
    return a == b


def test_the_parts_and_their_score_keys(ds: Dataset, want: dict[str, Any]) -> None:
    parts = folder.samples_by_part(ds)
    assert [p.name for p in parts] == PARTS
    assert {p.name: p.key for p in parts} == KEYS
    assert set(KEYS.values()) <= set(want)  # every part is a table of cartoqa score's
    # the answers make mixing visible: the base counts are right, the text copies unread
    assert want["stmf_count"]["all"]["unanswered"] == 0
    assert want["stmf_count@text"]["all"]["unanswered"] == 2


# -- Hugging Face --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hf(ds: Dataset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_hf(ds, tmp_path_factory.mktemp("hf") / "out").out


def test_hf_one_config_per_task_and_variant_with_the_variant_columns(
    ds: Dataset, hf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    datasets.disable_progress_bars()
    card = (hf / CARD_FILE).read_text("utf-8")
    front = yaml.safe_load(card.split("---")[1])
    assert [c["config_name"] for c in front["configs"]] == PARTS
    assert "## Paired variants" in card
    parts = _by_part(ds)
    for name in PARTS:
        loaded = datasets.load_dataset(str(hf), name=name, cache_dir=str(tmp_path))["test"]
        samples = parts[name]
        assert loaded["id"] == [s.id for s in samples]
        for row, s in zip(loaded, samples, strict=True):
            variant, base, answerable = _fields(s)
            assert (row["variant"], row["base_id"], row["answerable"]) == (
                variant,
                base,
                answerable,
            )
            assert json.loads(row["metadata"]) == s.metadata.model_dump(mode="json")
            if s.prompt.images:
                image = row["image"]
                assert isinstance(image, Image.Image)
                with Image.open(ds.image_path(s.prompt.images[0])) as own:
                    assert image.tobytes() == own.tobytes()
        # the text copies of a map task: no image column, as GPS configs have none
        has_image = "image" in loaded.column_names
        assert has_image == (name not in ("distance", "stmf_count__text")), name
    text = datasets.load_dataset(str(hf), name="stmf_count__text", cache_dir=str(tmp_path))
    assert text["test"]["id"] == ["stmf_count-0001@text", "stmf_count-0002@text"]
    assert text["test"]["base_id"] == ["stmf_count-0001", "stmf_count-0002"]
    grey = datasets.load_dataset(str(hf), name="stmf_count__greyscale", cache_dir=str(tmp_path))
    first = grey["test"][0]["image"]
    assert first.mode == "L"  # the greyscale copy's own image, not the base's
    names = datasets.load_dataset(
        str(hf), name="stmf_names__nolabels__unanswerable", cache_dir=str(tmp_path)
    )
    assert names["test"]["answerable"] == [False]


def test_hf_without_variants_has_no_variant_columns(tmp_path: Path) -> None:
    from tests.cartoqa.model_data import kinds_dataset

    out = export_hf(kinds_dataset(tmp_path / "ds"), tmp_path / "out").out
    card = (out / CARD_FILE).read_text("utf-8")
    assert "variant" not in card and "base_id" not in card
    import pyarrow.parquet as pq

    for f in (out / "data").rglob("*.parquet"):
        assert not {"variant", "base_id", "answerable"} & set(pq.read_schema(f).names)


# -- lmms-eval ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lmms(ds: Dataset, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The lmms-eval export, loaded by lmms-eval's task manager, offline."""
    pytest.importorskip("lmms_eval", reason="the lmms-eval export's tests need lmms-eval")
    import lmms_eval.api.task as lmms_task_module
    from lmms_eval.tasks import TaskManager

    from cartoqa.exports.lmms_eval import export_lmms_eval

    base = tmp_path_factory.mktemp("lmms")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(datasets.config, "HF_HUB_OFFLINE", True)
        mp.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
        mp.setenv("LMMS_EVAL_DATASETS_CACHE", str(base / "hf-cache"))
        lmms_task_module._resolve_hf_datasets_cache_dir.cache_clear()
        datasets.disable_progress_bars()
        out = export_lmms_eval(ds, base / "out")
        yield {"out": out, "manager": TaskManager(include_path=str(out))}
        lmms_task_module._resolve_hf_datasets_cache_dir.cache_clear()


def _leaves(task_dict: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in task_dict.items():
        out.update(_leaves(value) if isinstance(value, dict) else {key: value})
    return out


def test_lmms_eval_tasks_and_groups_per_variant(lmms: Any, ds: Dataset) -> None:
    from lmms_eval.tasks import get_task_dict

    out, manager = lmms["out"], lmms["manager"]
    marker = json.loads((out / "cartoqa-lmms-eval.json").read_text("utf-8"))
    assert sorted(marker["tasks"]) == sorted(f"cartoqa_{p}" for p in PARTS)
    assert marker["groups"] == {
        "cartoqa": ["cartoqa_distance", "cartoqa_stmf_count", "cartoqa_stmf_names"],
        "cartoqa_map": ["cartoqa_stmf_count", "cartoqa_stmf_names"],
        "cartoqa_gps": ["cartoqa_distance"],
        "cartoqa_variant_text": ["cartoqa_stmf_count__text"],
        "cartoqa_variant_nolabels": [
            "cartoqa_stmf_count__nolabels",
            "cartoqa_stmf_names__nolabels__unanswerable",
        ],
        "cartoqa_variant_greyscale": ["cartoqa_stmf_count__greyscale"],
    }
    info = marker["tasks"]["cartoqa_stmf_names__nolabels__unanswerable"]
    assert (info["cartoqa_task"], info["variant"], info["answerable"]) == (
        "stmf_names",
        "nolabels",
        False,
    )
    # lmms-eval's own loader reads every group; the base group holds no variant's rows
    base = _leaves(get_task_dict(["cartoqa"], manager))
    assert all("@" not in i for t in base.values() for i in t.test_docs()["id"])
    text = _leaves(get_task_dict(["cartoqa_variant_text"], manager))
    [task] = text.values()
    docs = task.test_docs()
    assert docs["id"] == ["stmf_count-0001@text", "stmf_count-0002@text"]
    assert docs["variant"] == ["text", "text"] and docs["answerable"] == [True, True]
    assert docs["base_id"] == ["stmf_count-0001", "stmf_count-0002"]
    for doc in docs:  # a map task's question without its map
        assert task.config.doc_to_visual(doc) == []
        [user] = task.config.doc_to_messages(doc)
        assert [c["type"] for c in user["content"]] == ["text"]
    grey = _leaves(get_task_dict(["cartoqa_variant_greyscale"], manager))
    [task] = grey.values()
    for doc, s in zip(task.test_docs(), _by_part(ds)["stmf_count__greyscale"], strict=True):
        [image] = task.config.doc_to_visual(doc)
        with Image.open(ds.image_path(s.prompt.images[0])) as own:
            assert image.mode == "L" and image.tobytes() == own.tobytes()
    yaml_text = (out / "cartoqa_stmf_count__text.yaml").read_text("utf-8")
    assert 'cartoqa_variant: "text"' in yaml_text and "cartoqa_task: stmf_count" in yaml_text


def test_lmms_eval_scores_each_variant_apart(lmms: Any, ds: Dataset, want: dict) -> None:
    from lmms_eval.tasks import get_task_dict

    from cartoqa.exports.lmms_eval import aggregate

    out, manager = lmms["out"], lmms["manager"]
    marker = json.loads((out / "cartoqa-lmms-eval.json").read_text("utf-8"))
    groups = ["cartoqa", *(g for g in marker["groups"] if g.startswith("cartoqa_variant_"))]
    tasks = _leaves(get_task_dict(groups, manager))
    assert sorted(tasks) == sorted(f"cartoqa_{p}" for p in PARTS)
    answers = variant_answers(ds)
    items_of: dict[str, list[Any]] = {}
    for name, obj in tasks.items():
        part = name.removeprefix("cartoqa_")
        items: dict[str, list[Any]] = {}
        for doc in obj.eval_docs_no_media:
            for metric, item in obj.process_results(doc, [answers[doc["id"]]]).items():
                items.setdefault(metric, []).append(item)
        aggregation = obj.aggregation()
        table = want[KEYS[part]]
        for metric, (group, column) in marker["tasks"][name]["metrics"].items():
            got = aggregation[metric](items[metric])
            assert _same(got, table[group][column]), (name, metric, got)
        items_of[part] = next(iter(items.values()))
    # the base count answered right, its text copy unread: apart, never a mean of the two
    assert aggregate(items_of["stmf_count"], "all", "unanswered") == 0
    assert aggregate(items_of["stmf_count__text"], "all", "unanswered") == 2
    with pytest.raises(CartoqaError, match="stmf_count, stmf_count@text"):
        aggregate(items_of["stmf_count"] + items_of["stmf_count__text"], "all", "rmse")
    with pytest.raises(CartoqaError, match="never mix"):
        aggregate(items_of["stmf_count__nolabels"] + items_of["stmf_count"], "all", "rmse")


def test_lmms_eval_evaluator_runs_the_text_variant_end_to_end(lmms: Any, ds: Dataset) -> None:
    """lmms-eval's own evaluator on a variant's group, with a chat model that replays the
    answers: the text copies are asked without a map, and scored as cartoqa scores them."""
    import lmms_eval.evaluator as lmms_evaluator
    from lmms_eval.api.model import lmms as lmms_model
    from lmms_eval.protocol import ChatMessages

    try:
        import filelock._api  # noqa: F401
    except ImportError:  # filelock 4 (see test_export_lmms_eval._lmms_eval_runs_here)
        lmms_evaluator._enable_reentrant_filelocks._patched = True  # type: ignore[attr-defined]
    answers = variant_answers(ds)

    class Replay(lmms_model):
        def __init__(self) -> None:
            super().__init__()
            self.is_simple = False
            self.seen: dict[str, Any] = {}

        def generate_until(self, requests):
            out = []
            for req in requests:
                _, doc_to_messages, _, doc_id, task, split = req.args
                doc = self.task_dict[task][split][doc_id]
                images, _, _ = ChatMessages(messages=doc_to_messages(doc)).extract_media()
                self.seen[doc["id"]] = images
                out.append(answers[doc["id"]])
            return out

        def loglikelihood(self, requests):
            raise NotImplementedError

        def generate_until_multi_round(self, requests):
            raise NotImplementedError

    lm = Replay()
    results = lmms_evaluator.simple_evaluate(
        model=lm,
        tasks=["cartoqa_variant_text", "cartoqa_variant_greyscale"],
        task_manager=lmms["manager"],
        bootstrap_iters=0,
        log_samples=False,
    )
    assert results is not None
    text = results["results"]["cartoqa_stmf_count__text"]
    grey = results["results"]["cartoqa_stmf_count__greyscale"]
    assert text["unanswered,none"] == 2 and grey["unanswered,none"] == 0
    assert grey["rmse,none"] == 0.0
    assert {sid: len(v) for sid, v in lm.seen.items()} == {
        "stmf_count-0001@text": 0,
        "stmf_count-0002@text": 0,
        "stmf_count-0001@greyscale": 1,
        "stmf_count-0002@greyscale": 1,
    }


# -- VLMEvalKit ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vlm(ds: Dataset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vlmeval") / "out"
    export_vlmevalkit(ds, out)
    return out


def test_vlmevalkit_one_benchmark_per_variant_with_the_variant_columns(
    vlm: Path, ds: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cartoqa.test_export_vlmevalkit import decode, load_class_module, read_tsv

    assert sorted(p.name for p in vlm.glob("*.tsv")) == sorted(tsv_name(p) for p in PARTS)
    parts = _by_part(ds)
    for name in PARTS:
        frame = read_tsv(vlm / tsv_name(name))  # as VLMEvalKit reads it
        samples = parts[name]
        assert list(frame["cartoqa_id"]) == [s.id for s in samples]
        cols = list(frame.columns)
        assert cols[cols.index("split") + 1 : cols.index("split") + 4] == [
            "variant",
            "base_id",
            "answerable",
        ]
        for (_, row), s in zip(frame.iterrows(), samples, strict=True):
            variant, base, answerable = _fields(s)
            got_variant = row["variant"] if isinstance(row["variant"], str) else None
            assert (got_variant, row["base_id"], row["answerable"]) == (
                variant,
                base,
                answerable,  # pandas reads "true"/"false" as booleans
            )
            assert row["category"] == s.task
            if s.prompt.images:
                with Image.open(ds.image_path(s.prompt.images[0])) as own:
                    assert decode(row["resolved"]).tobytes() == own.tobytes()
        assert ("image" in frame) == (name not in ("distance", "stmf_count__text")), name
    # the dataset class asks the text copies without a map
    monkeypatch.setenv("LMUData", str(vlm))
    module = load_class_module(vlm)
    text = module.CartoQADataset("CartoQA_stmf_count__text")
    assert text.task == "stmf_count"
    assert text.build_prompt(0) == [
        {"type": "text", "value": _by_part(ds)["stmf_count__text"][0].prompt.text}
    ]
    grey = module.CartoQADataset("CartoQA_stmf_count__greyscale")
    msgs = grey.build_prompt(0)
    assert [m["type"] for m in msgs] == ["image", "text"]
    with Image.open(msgs[0]["value"]) as shown:
        assert shown.mode == "L"
    readme = (vlm / "README.md").read_text("utf-8")
    assert "## Paired variants" in readme and "CartoQA_stmf_count__text" in readme


def test_vlmevalkit_scores_each_variant_apart(
    vlm: Path, ds: Dataset, want: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.cartoqa.test_export_vlmevalkit import load_class_module, predictions_file

    monkeypatch.setenv("LMUData", str(vlm))
    module = load_class_module(vlm)
    answers = variant_answers(ds)
    files = {}
    for name in PARTS:
        obj = module.CartoQADataset(tsv_name(name).removesuffix(".tsv"))
        files[name] = predictions_file(obj, answers, tmp_path / f"pred_{name}.tsv")
        got = obj.evaluate(str(files[name]))
        assert next(iter(got)) == obj.headline, name  # the task's headline first, as for base
        table = want[KEYS[name]]
        assert got.keys() >= table["all"].keys(), name
        for metric, value in table["all"].items():
            assert _same(got[metric], value), (name, metric)
    # files of a base and its variant scored together: each under its own key, never mixed
    both = module.score_predictions([str(files["stmf_count"]), str(files["stmf_count__text"])])
    assert both["stmf_count: unanswered"] == 0 and both["stmf_count@text: unanswered"] == 2
    assert not any(k.startswith("unanswered") for k in both)


# -- inspect_ai ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inspected(ds: Dataset, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The inspect export, every task of its module run by ``inspect_ai.eval`` with a mock
    model that answers as ``variant_answers`` (each sample known by its question and map),
    the logs read back."""
    inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai runs the export")
    import base64

    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, ModelOutput, ModelUsage

    from cartoqa.exports.inspect_ai import MODULE_FILE, export_inspect

    base = tmp_path_factory.mktemp("inspect")
    out = export_inspect(ds, base / "out")
    answers = variant_answers(ds)
    known = {}
    for s in ds:
        images = tuple(ds.image_path(r).read_bytes() for r in s.prompt.images)
        known[(s.prompt.text, images)] = s
    assert len(known) == len(ds)
    seen: dict[str, Any] = {}

    def generate(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        [user] = [m for m in input if isinstance(m, ChatMessageUser)]
        assert not isinstance(user.content, str)
        [text] = [c.text for c in user.content if isinstance(c, ContentText)]
        images = tuple(
            base64.b64decode(c.image.partition(",")[2])
            for c in user.content
            if isinstance(c, ContentImage)
        )
        sample = known[(text, images)]
        seen[sample.id] = images
        output = ModelOutput.from_content(model="mockllm/model", content=answers[sample.id])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    with pytest.MonkeyPatch.context() as mp:
        home = base / "inspect-home"
        mp.setenv("INSPECT_LOG_DIR", str(home / "logs"))
        mp.setenv("XDG_DATA_HOME", str(home / "data"))
        mp.setenv("XDG_CACHE_HOME", str(home / "cache"))
        results = inspect_ai.eval(
            [f"{out / MODULE_FILE}@{p}" for p in PARTS],
            model="mockllm/model",
            model_args={"custom_outputs": generate},
            display="none",
            log_dir=str(home / "logs"),
            log_format="eval",
            max_tasks=4,
        )
    logs = {}
    for log in results:
        assert log.status == "success", (log.eval.task, log.error)
        logs[log.eval.task] = read_eval_log(log.location)
    return {"out": out, "logs": logs, "seen": seen}


def test_inspect_one_task_per_variant_with_the_variant_metadata(
    inspected: dict[str, Any], ds: Dataset
) -> None:
    logs = inspected["logs"]
    assert sorted(logs) == sorted(PARTS)
    parts = _by_part(ds)
    for name, log in logs.items():
        samples = {s.id: s for s in parts[name]}
        assert sorted(str(s.id) for s in log.samples) == sorted(samples)  # ids with "@" kept
        for logged in log.samples:
            s = samples[str(logged.id)]
            variant, base, answerable = _fields(s)
            md = logged.metadata
            assert (md["variant"], md["base_id"], md["answerable"]) == (variant, base, answerable)
        variant = parts[name][0].metadata.model_extra.get("variant")
        assert log.eval.metadata["task"] == parts[name][0].task
        assert log.eval.metadata.get("variant") == variant
    # the text copies were asked without their map, the greyscale ones with their own
    seen = inspected["seen"]
    assert seen["stmf_count-0001@text"] == ()
    grey = _by_part(ds)["stmf_count__greyscale"][0]
    assert seen[grey.id] == (ds.image_path(grey.prompt.images[0]).read_bytes(),)
    assert (inspected["out"] / grey.prompt.images[0]).is_file()  # images/...@greyscale.png


def test_inspect_scores_each_variant_apart(inspected: dict[str, Any], want: dict) -> None:
    for name, log in inspected["logs"].items():
        [score] = [s for s in log.results.scores if s.name == "cartoqa_scorer" and not s.reducer]
        got = {m.name: m.value for m in score.metrics.values() if "/" not in m.name}
        table = want[KEYS[name]]["all"]
        expected = {k: v for k, v in table.items() if not (isinstance(v, float) and math.isnan(v))}
        assert got == pytest.approx(expected), name
    # cartoqa's metric refuses scores of two keys (a base task's and a variant's)
    from inspect_ai.scorer import SampleScore

    from cartoqa.exports import inspect_runtime

    out = inspected["out"]
    marker = json.loads((out / "cartoqa-export.json").read_text("utf-8"))
    metric = inspect_runtime._metrics(
        "stmf_count", out / "samples.jsonl", marker["files_sha256"]["samples.jsonl"]
    )
    scores = {
        name: [
            SampleScore(
                score=s.scores["cartoqa_scorer"], sample_id=s.id, sample_metadata=s.metadata
            )
            for s in inspected["logs"][name].samples
        ]
        for name in ("stmf_count", "stmf_count__text")
    }
    assert metric(scores["stmf_count"])["unanswered"] == 0
    with pytest.raises(ValueError, match="stmf_count, stmf_count@text"):
        metric(scores["stmf_count"] + scores["stmf_count__text"])


# -- the CartoMapQA layout, and the CLI ----------------------------------------------------


def test_cartomapqa_exports_the_base_samples_and_says_what_it_left_out(
    ds: Dataset, tmp_path: Path
) -> None:
    out, lines = export_cartomapqa(ds, tmp_path / "out", runs_dir=tmp_path / "runs")
    text = "\n".join(lines)
    assert "STMF: 3 questions" in text  # two counts and one name listing: the base ones
    assert (
        "left out 7 paired variant samples (greyscale 2, nolabels 3, text 2): the release's "
        "layout holds one question per map" in text
    )
    marker = json.loads((out / "cartoqa-export.json").read_text("utf-8"))
    assert marker["left_out_variants"] == {"greyscale": 2, "nolabels": 3, "text": 2}
    files = list((out / "Dataset").rglob("*"))
    written = " ".join(p.name for p in files)
    written += "".join(p.read_text("utf-8") for p in files if p.suffix == ".json")
    assert "@" not in written  # no variant's question, map or id
    # the published layout read back gives the base samples
    from cartoqa.tasks.release.importing import read_release

    got = sorted(s.id for s in read_release(out / "Dataset" / "CartoMapQA"))
    assert got == ["stmf_count-0001", "stmf_count-0002", "stmf_names-0001"]


def test_cartomapqa_refuses_a_dataset_of_variants_only(tmp_path: Path) -> None:
    from cartoqa.stores import DatasetWriter, load_dataset
    from tests.cartoqa.variant_data import variant_dataset as make

    whole = make(tmp_path / "whole")
    with DatasetWriter(tmp_path / "only", name="only") as w:
        for s in whole:
            if "@" in s.id and s.task == "stmf_count":
                for rel in s.prompt.images:
                    w.add_image(Path(rel).name, whole.image_path(rel).read_bytes())
                w.add(s)
        w.finish(seeds=[3])
    with pytest.raises(CartoqaError, match="only 6 paired variant samples"):
        export_cartomapqa(load_dataset(tmp_path / "only"), tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", ["hf", "lmms-eval", "inspect", "vlmevalkit", "cartomapqa"])
def test_cli_exports_a_dataset_with_variants(ds: Dataset, tmp_path: Path, fmt: str) -> None:
    result = CliRunner().invoke(
        app,
        ["export", str(ds.path), str(tmp_path / "out"), "--to", fmt, "--runs-dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    if fmt == "hf":
        assert "stmf_count__text: test 2" in result.output
    if fmt == "lmms-eval":
        assert "cartoqa_variant_text, cartoqa_variant_nolabels" in result.output
    if fmt == "cartomapqa":
        assert "left out 7 paired variant samples" in result.output
