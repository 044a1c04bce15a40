"""The lmms-eval export, loaded and evaluated by lmms-eval itself, offline.

The round trip runs cartoqa's ``random`` and ``oracle`` baselines, then feeds their answers
to the exported tasks two ways: through ``lmms_eval.evaluator.simple_evaluate`` with a model
class of this file that replays the run (the whole pipeline: requests, prompts, images,
process_results, aggregation), and through the task objects' own ``process_results`` and
``aggregation()`` as the evaluator calls them, on the image-less docs the lmms-eval CLI
scores by default.  Either way the numbers must equal ``cartoqa.scoring.score_run``'s.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

# datasets reads these when first imported
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

lmms_eval = pytest.importorskip(
    "lmms_eval", reason="the lmms-eval export's tests need lmms-eval (pip install lmms-eval)"
)
datasets = pytest.importorskip("datasets", reason="lmms-eval installs datasets")
pytest.importorskip("pyarrow", reason="the export extra installs pyarrow")

import lmms_eval.api.task as lmms_task_module  # noqa: E402
import lmms_eval.evaluator as lmms_evaluator  # noqa: E402
from lmms_eval.api.model import lmms  # noqa: E402
from lmms_eval.protocol import ChatMessages  # noqa: E402
from lmms_eval.tasks import TaskManager, get_task_dict  # noqa: E402
from PIL import Image  # noqa: E402

from cartoqa.errors import CartoqaError, DatasetError  # noqa: E402
from cartoqa.exports.hf import EXPORT_MARKER as HF_MARKER  # noqa: E402
from cartoqa.exports.hf import export_hf  # noqa: E402
from cartoqa.exports.lmms_eval import (  # noqa: E402
    EXPORT_MARKER,
    GPS_GROUP,
    GROUP,
    INSTALL_COMMAND,
    MAP_GROUP,
    README_FILE,
    export_lmms_eval,
    sample_of_row,
)
from cartoqa.records import (  # noqa: E402
    OSM_ATTRIBUTION,
    CountTruth,
    Metadata,
    Prompt,
    Sample,
    TextTruth,
)
from cartoqa.scoring import score_run  # noqa: E402
from cartoqa.stores import Dataset, DatasetWriter, load_dataset  # noqa: E402
from cartoqa.tasks.spec import get_task  # noqa: E402
from tests.cartoqa.export_data import GEO, GEONAMES, OSM, distance_sample, run_answers, snapshot  # noqa: E402
from tests.cartoqa.model_data import kinds_dataset, png, text_dataset  # noqa: E402

MODELS = ("oracle", "random")


def _lmms_eval_runs_here() -> None:
    """lmms-eval 0.7.3's ``simple_evaluate`` first patches ``filelock._api``, which
    filelock 4 no longer has (it raises ModuleNotFoundError before loading anything).  The
    patch only makes nested file locks of several ranks reentrant; one process takes none,
    so it is marked as done where it cannot be made."""
    try:
        import filelock._api  # noqa: F401
    except ImportError:
        lmms_evaluator._enable_reentrant_filelocks._patched = True  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory):
    """No hub, and lmms-eval's datasets cache in a fresh folder (it picks it once)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(datasets.config, "HF_HUB_OFFLINE", True)
        mp.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
        mp.setenv("LMMS_EVAL_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf-cache")))
        lmms_task_module._resolve_hf_datasets_cache_dir.cache_clear()
        datasets.disable_progress_bars()
        yield
        lmms_task_module._resolve_hf_datasets_cache_dir.cache_clear()


@pytest.fixture(scope="module")
def exported(offline, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The kinds dataset (every truth kind, 3 copies), run by oracle and random with
    ``cartoqa run``, exported, and its tasks loaded by lmms-eval's task manager (with its
    own tasks too, as its CLI does: no name of ours clashes with one of theirs)."""
    base = tmp_path_factory.mktemp("lmms")
    ds = kinds_dataset(base / "ds", copies=3)
    runs = base / "runs"
    answers = run_answers(ds, runs, MODELS)
    out = export_lmms_eval(ds, base / "export")
    manager = TaskManager(include_path=str(out))
    tasks = _leaf_tasks(get_task_dict([GROUP], manager))
    return {"ds": ds, "answers": answers, "out": out, "manager": manager, "tasks": tasks}


def _leaf_tasks(task_dict: dict) -> dict[str, Any]:
    """lmms-eval task name -> task object, out of a (possibly grouped) task dict."""
    out: dict[str, Any] = {}
    for key, value in task_dict.items():
        if isinstance(value, dict):
            out.update(_leaf_tasks(value))
        else:
            out[key] = value
    return out


def _as_text(x: Any) -> str:
    """Numbers compared as strict JSON text: an int stays an int, and NaN is refused (the
    export reports None where cartoqa has no number)."""
    return json.dumps(x, sort_keys=True, allow_nan=False)


def _strict(value: Any) -> Any:
    """cartoqa's number as lmms-eval must report it: None for NaN (SRN's connectivity
    without a network, r² of one sample)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _expected(ds: Dataset, responses: dict[str, str | None], marker: dict) -> dict:
    """lmms-eval task -> metric name -> what ``cartoqa score`` gives for those answers
    (None where its table has no such cell, or NaN there)."""
    tables = score_run(ds.samples, responses)
    return {
        name: {
            metric: _strict(tables[info["cartoqa_task"]].get(group, {}).get(column))
            for metric, (group, column) in info["metrics"].items()
        }
        for name, info in marker["tasks"].items()
        if info["split"] == "test"
    }


def _marker(out: Path) -> dict:
    return json.loads((out / EXPORT_MARKER).read_text(encoding="utf-8"))


# -- the tasks as lmms-eval loads them ----------------------------------------------------------


def test_every_task_loads_with_its_rows_and_metrics(exported):
    ds, out, tasks = exported["ds"], exported["out"], exported["tasks"]
    by_task: dict[str, list[Sample]] = {}
    for s in ds:
        by_task.setdefault(s.task, []).append(s)
    assert set(tasks) == {f"cartoqa_{t}" for t in by_task}
    marker = _marker(out)
    oracle_tables = score_run(ds.samples, exported["answers"]["oracle"])
    for task, samples in by_task.items():
        obj = tasks[f"cartoqa_{task}"]
        docs = obj.test_docs()
        assert docs["id"] == [s.id for s in samples]  # every row, in dataset order
        for doc, s in zip(docs, samples, strict=True):
            rebuilt = sample_of_row(doc)
            # the row gives the sample back, but for its image paths (no scorer reads them)
            assert rebuilt == s.model_copy(
                update={"prompt": s.prompt.model_copy(update={"images": []})}
            )
            assert obj.doc_to_target(doc) == doc["answer"]
        # the metrics: each of the task's own, for each overall row of its table
        spec = get_task(task)
        assert spec is not None
        names = marker["tasks"][f"cartoqa_{task}"]["metrics"]
        assert set(obj.aggregation()) == set(names)
        # (those the samples give: place association's province accuracy needs provinces)
        table = oracle_tables[task]
        overall = [g for g in table if g == "all" or g.startswith("all ")]
        assert {tuple(v) for v in names.values()} == {
            (g, m) for g in overall for m in spec.metrics if m in table[g]
        }
        lower = {n for n, better in obj.higher_is_better().items() if not better}
        assert lower == {
            n for n, (_, c) in names.items() if c in {"rmse", "mae", "mape", "unanswered"}
        }
        gen = obj.config.generation_kwargs
        assert gen["until"] == [] and gen["do_sample"] is False
        assert gen["max_new_tokens"] == (8192 if spec.family == "gps" else 1024)
    # RLE's table has one overall row per unit: these samples name none ("?")
    assert set(marker["tasks"]["cartoqa_rle"]["metrics"]) == {
        f"{m} (all ?)" for m in ("rmse", "mae", "mape", "r2", "unanswered")
    }
    # the parquet files are named relative to the YAMLs' folder (and found from elsewhere)
    assert Path.cwd() != out
    for name in marker["tasks"]:
        text = (out / f"{name}.yaml").read_text(encoding="utf-8")
        assert str(out) not in text and '- "data/data/' in text


def test_map_and_text_tasks_have_groups_of_their_own(exported):
    """An image-text model class (llava_hf fails on a question without an image) runs
    cartoqa_map, a text-only one cartoqa_gps: neither group holds the other kind (issue 26,
    finding 19)."""
    ds, manager, out = exported["ds"], exported["manager"], exported["out"]
    family = {s.task: get_task(s.task).family for s in ds}  # type: ignore[union-attr]
    with_images = {s.task for s in ds if s.prompt.images}
    assert with_images == {t for t, f in family.items() if f == "map"}
    for group, kind in ((MAP_GROUP, "map"), (GPS_GROUP, "gps")):
        tasks = _leaf_tasks(get_task_dict([group], manager))
        assert set(tasks) == {f"cartoqa_{t}" for t, f in family.items() if f == kind}, group
        for obj in tasks.values():  # every row of a map task shows its map, none of a GPS one
            shown = [len(obj.doc_to_visual(doc)) for doc in obj.test_docs()]
            assert shown == [1 if kind == "map" else 0] * len(shown)
    marker = _marker(out)
    assert marker["groups"][MAP_GROUP] == sorted(f"cartoqa_{t}" for t in with_images)
    assert set(marker["groups"][GROUP]) == {f"cartoqa_{t}" for t in family}
    readme = (out / README_FILE).read_text(encoding="utf-8")
    for needle in (
        f"--tasks {MAP_GROUP}",
        f"--tasks {GPS_GROUP}",
        "llava_hf",
        "scale bar",
        "decord",
        "exits with status 0",
        "split=<split>",
    ):
        assert needle in readme, needle
    assert INSTALL_COMMAND in readme


def test_a_text_only_dataset_writes_no_map_group(offline, tmp_path):
    out = export_lmms_eval(text_dataset(tmp_path / "t", 2), tmp_path / "export")
    assert not (out / f"{MAP_GROUP}.yaml").exists()
    assert _marker(out)["groups"] == {GROUP: ["cartoqa_distance"], GPS_GROUP: ["cartoqa_distance"]}


def test_doc_to_visual_gives_the_datasets_images_pixel_for_pixel(exported):
    ds, tasks = exported["ds"], exported["tasks"]
    samples = {s.id: s for s in ds}
    shown = 0
    for obj in tasks.values():
        for doc in obj.test_docs():
            s = samples[doc["id"]]
            visuals = obj.doc_to_visual(doc)
            assert len(visuals) == len(s.prompt.images)
            for got, rel in zip(visuals, s.prompt.images, strict=True):
                assert isinstance(got, Image.Image)
                with Image.open(ds.image_path(rel)) as want:
                    assert (got.mode, got.size) == (want.mode, want.size)
                    assert got.tobytes() == want.tobytes()
                shown += 1
            # the text: the system prompt before the question
            assert obj.doc_to_text(doc) == f"{s.prompt.system}\n\n{s.prompt.text}"
            # chat models: a system message, then the image(s) and the question
            chat = ChatMessages(messages=obj.config.doc_to_messages(doc))
            assert [m.role for m in chat.messages] == ["system", "user"]
            assert chat.messages[0].content[0].text == s.prompt.system
            user = chat.messages[1].content
            assert [c.type for c in user] == ["image"] * len(s.prompt.images) + ["text"]
            assert user[-1].text == s.prompt.text
    assert shown == sum(len(s.prompt.images) for s in ds) > 0


# -- the round trip: cartoqa's answers through lmms-eval, scored as cartoqa scores them ------


@pytest.mark.parametrize("model", MODELS)
def test_task_objects_score_as_cartoqa_score(exported, model):
    """Each answer through the task's own process_results, on the docs lmms-eval's CLI
    scores (images dropped), and each metric through the task's own aggregation."""
    ds, tasks, responses = exported["ds"], exported["tasks"], exported["answers"][model]
    got: dict[str, dict[str, Any]] = {}
    for name, obj in tasks.items():
        items: dict[str, list[Any]] = {}
        for doc in obj.eval_docs_no_media:
            assert "image" not in doc
            for metric, item in obj.process_results(doc, [responses[doc["id"]]]).items():
                items.setdefault(metric, []).append(item)
        aggregation = obj.aggregation()
        assert set(items) == set(aggregation)
        got[name] = {metric: aggregation[metric](values) for metric, values in items.items()}
    expected = _expected(ds, responses, _marker(exported["out"]))
    assert _as_text(got) == _as_text(expected)
    if model == "oracle":  # the answers are right: the numbers say so
        assert got["cartoqa_mml"]["accuracy"] == 1.0
        assert got["cartoqa_srn"]["SR2"] == 1.0 and got["cartoqa_stmf_count"]["rmse"] == 0.0
        assert got["cartoqa_rle"]["rmse (all ?)"] == 0.0
    else:
        assert got["cartoqa_mml"]["accuracy"] < 1.0


class Replay(lmms):
    """A model that answers each question as a cartoqa run did (matched by the doc's id),
    recording what lmms-eval showed it."""

    def __init__(self, answers: dict[str, str | None], *, chat: bool) -> None:
        super().__init__()
        self.is_simple = not chat
        self.answers = answers
        self.seen: dict[str, dict[str, Any]] = {}

    def generate_until(self, requests):
        out = []
        for req in requests:
            if self.is_simple:
                ctx, gen_kwargs, doc_to_visual, doc_id, task, split = req.args
                doc = self.task_dict[task][split][doc_id]
                shown = {"text": ctx, "visuals": doc_to_visual(doc)}
            else:
                ctx, doc_to_messages, gen_kwargs, doc_id, task, split = req.args
                doc = self.task_dict[task][split][doc_id]
                chat = ChatMessages(messages=doc_to_messages(doc))
                images, _, _ = chat.extract_media()
                shown = {"messages": chat, "visuals": images}
            self.seen[doc["id"]] = {"task": task, "gen_kwargs": gen_kwargs, **shown}
            out.append(self.answers[doc["id"]])
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError("the cartoqa tasks only generate")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("the cartoqa tasks ask once")


@pytest.mark.parametrize(("model", "chat"), [("random", False), ("oracle", True)])
def test_simple_evaluate_reports_cartoqa_scores(exported, model, chat):
    """lmms-eval's own evaluator, end to end, with a model that replays the run: a plain
    model (the prompt as text) for random, a chat model (messages) for oracle."""
    _lmms_eval_runs_here()
    ds, out, responses = exported["ds"], exported["out"], exported["answers"][model]
    lm = Replay(responses, chat=chat)
    results = lmms_evaluator.simple_evaluate(
        model=lm,
        tasks=[GROUP],
        task_manager=exported["manager"],
        bootstrap_iters=0,
        log_samples=False,
        process_docs_parallel=2,
    )
    assert results is not None
    expected = _expected(ds, responses, _marker(out))
    got = {
        name: {metric: results["results"][name][f"{metric},none"] for metric in metrics}
        for name, metrics in expected.items()
    }
    assert _as_text(got) == _as_text(expected)
    assert results["group_subtasks"][GROUP] and set(results["group_subtasks"][GROUP]) == set(
        expected
    )
    assert all(results["n-samples"][name]["effective"] == 3 for name in expected)
    # every question asked once, as cartoqa asks it, with its map
    samples = {s.id: s for s in ds}
    assert set(lm.seen) == set(samples)
    for sid, seen in lm.seen.items():
        s = samples[sid]
        assert seen["task"] == f"cartoqa_{s.task}"
        assert seen["gen_kwargs"]["until"] == []
        if chat:
            messages = seen["messages"].messages
            assert messages[0].role == "system" and messages[0].content[0].text == s.prompt.system
            assert messages[-1].content[-1].text == s.prompt.text
        else:
            assert seen["text"] == f"{s.prompt.system}\n\n{s.prompt.text}"
        assert len(seen["visuals"]) == len(s.prompt.images)
        for got_image, rel in zip(seen["visuals"], s.prompt.images, strict=True):
            with Image.open(ds.image_path(rel)) as want:
                assert got_image.tobytes() == want.tobytes()


# -- splits, the README, moving the folder --------------------------------------------------


def two_splits(folder: Path) -> Dataset:
    """Dev and test text samples from GeoNames, and a map task on test only."""
    with DatasetWriter(folder, name="two-splits") as w:
        for i in range(5):
            w.add(distance_sample(i))
            w.add(
                Sample(
                    id=f"count-{i}",
                    task="stmf_count",
                    prompt=Prompt(
                        text=f"How many banks? ({i})",
                        images=[w.add_image(f"count-{i}.png", png(10 + i))],
                    ),
                    ground_truth=CountTruth(value=i, optional=1, feature_type="bank"),
                    metadata=Metadata(city="Monaco", zoom=17),
                    provenance=OSM,
                )
            )
        w.add(
            Sample(
                id="place-0",
                task="place_association",
                split="dev",
                prompt=Prompt(text="Which city is this?", system="Be brief."),
                ground_truth=TextTruth(answer="Zürich"),
                metadata=Metadata(region="Europe", province="Zurich", country="Switzerland"),
                provenance=GEO,
            )
        )
        w.finish(seeds=[7], attribution=[OSM_ATTRIBUTION, GEONAMES])
    return load_dataset(folder)


def test_other_splits_are_tasks_of_their_own_and_the_folder_moves(offline, tmp_path):
    ds = two_splits(tmp_path / "two")
    out = export_lmms_eval(ds, tmp_path / "export")
    marker = _marker(out)
    assert {n: (i["cartoqa_task"], i["split"], i["rows"]) for n, i in marker["tasks"].items()} == {
        "cartoqa_distance": ("distance", "test", 3),
        "cartoqa_distance_dev": ("distance", "dev", 2),
        "cartoqa_place_association": ("place_association", "dev", 1),  # its only split
        "cartoqa_stmf_count": ("stmf_count", "test", 5),
    }
    # moved whole, it still loads: nothing in it names where it was written
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(out, moved)
    manager = TaskManager(include_path=str(moved), include_defaults=False)
    tasks = _leaf_tasks(get_task_dict([GROUP, "cartoqa_distance_dev"], manager))
    assert set(tasks) == set(marker["tasks"])
    group = next(k for k in get_task_dict([GROUP], manager))
    assert sorted(group.config["task"]) == [
        "cartoqa_distance",
        "cartoqa_place_association",
        "cartoqa_stmf_count",
    ]
    responses = {s.id: "10.5 km" if s.task == "distance" else "Zürich" for s in ds}
    for name, info in marker["tasks"].items():
        obj = tasks[name]
        split_samples = [
            s for s in ds if s.task == info["cartoqa_task"] and s.split == info["split"]
        ]
        assert obj.test_docs()["id"] == [s.id for s in split_samples]
        items: dict[str, list[Any]] = {}
        for doc in obj.eval_docs_no_media:
            for metric, item in obj.process_results(doc, [responses[doc["id"]]]).items():
                items.setdefault(metric, []).append(item)
        table = score_run(split_samples, responses)[info["cartoqa_task"]]
        # cartoqa score pools the splits in its overall row; GPS tables break down by
        # split, and each lmms-eval task equals its split's row (the README says so)
        whole = score_run(ds.samples, responses)[info["cartoqa_task"]]
        splits = {s.split for s in ds if s.task == info["cartoqa_task"]}
        for metric, (group_row, column) in info["metrics"].items():
            got = obj.aggregation()[metric](items[metric])
            assert _as_text(got) == _as_text(_strict(table[group_row][column]))
            row = f"split={info['split']}" if len(splits) > 1 else group_row
            assert _as_text(got) == _as_text(_strict(whole[row][column])), (name, metric)
    # distance has a dev and a test split: its lmms-eval task is not the overall row
    distance = score_run(ds.samples, responses)["distance"]
    assert distance["all"]["n"] == 5 and distance["split=test"]["n"] == 3
    readme = (moved / README_FILE).read_text(encoding="utf-8")
    assert "© OpenStreetMap contributors" in readme
    credits = readme.split("## Attribution")[1].split("## ")[0]
    bullets = [line for line in credits.splitlines() if line.startswith("- ")]
    assert bullets == [f"- {OSM_ATTRIBUTION}", f"- {GEONAMES}"]  # the manifest's, once each
    assert "--include_path OUT" in readme and "--tasks cartoqa_stmf_count" in readme
    assert "| cartoqa_distance_dev | distance | dev | 2 |" in readme
    # data/ is the Hugging Face export, whole
    assert json.loads((moved / "data" / HF_MARKER).read_text())["format"] == "hf"
    assert not list(tmp_path.glob(".export.staging-*"))


def test_no_number_aggregates_to_none_never_nan(offline, tmp_path):
    """r² of a one-sample task and a metric of no items are None (lmms-eval writes null),
    not NaN, which strict JSON readers refuse (issue 26, finding 12)."""
    ds = text_dataset(tmp_path / "t", 2)
    out = export_lmms_eval(ds, tmp_path / "export")
    manager = TaskManager(include_path=str(out), include_defaults=False)
    (obj,) = _leaf_tasks(get_task_dict(["cartoqa_distance"], manager)).values()
    assert obj.aggregation()["accuracy"]([]) is None
    one = kinds_dataset(tmp_path / "one", copies=1)
    out = export_lmms_eval(one, tmp_path / "one-export")
    manager = TaskManager(include_path=str(out), include_defaults=False)
    (rle,) = _leaf_tasks(get_task_dict(["cartoqa_rle"], manager)).values()
    (doc,) = rle.eval_docs_no_media
    item = rle.process_results(doc, ["300 m"])["r2 (all ?)"]
    json.dumps(item, allow_nan=False)  # the item lmms-eval logs is strict JSON too
    assert math.isnan(score_run(one.samples, {"rle-000": "300 m"})["rle"]["all ?"]["r2"])
    assert rle.aggregation()["r2 (all ?)"]([item]) is None
    assert rle.aggregation()["rmse (all ?)"]([item]) == 112.5


# -- the folder it writes ------------------------------------------------------------------------


def test_existing_export_kept_without_overwrite_and_replaced_with_it(offline, tmp_path):
    small = text_dataset(tmp_path / "small", 3, name="small")
    out = tmp_path / "export"
    export_lmms_eval(small, out)
    before = snapshot(out)
    beside = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(CartoqaError, match="already holds an lmms-eval export.*--overwrite"):
        export_lmms_eval(small, out)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == beside
    manager = TaskManager(include_path=str(out), include_defaults=False)
    (first,) = _leaf_tasks(get_task_dict(["cartoqa_distance"], manager)).values()
    assert len(first.test_docs()) == 3
    # with overwrite, the new export replaces the old one whole, and lmms-eval reads it
    big = text_dataset(tmp_path / "big", 5, name="big")
    assert export_lmms_eval(big, out, overwrite=True) == out.absolute()
    assert _marker(out)["dataset"] == "big"
    manager = TaskManager(include_path=str(out), include_defaults=False)
    (again,) = _leaf_tasks(get_task_dict(["cartoqa_distance"], manager)).values()
    assert again.test_docs()["id"] == [s.id for s in big]
    assert not list(tmp_path.glob(".export.staging-*")) and not list(tmp_path.glob(".export.old-*"))


def test_other_folders_are_never_replaced(offline, tmp_path):
    ds = text_dataset(tmp_path / "t", 2)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    hf = tmp_path / "hf"
    export_hf(ds, hf)  # another export's folder is not ours to replace either
    for folder in (notes, hf):
        before = snapshot(folder)
        for overwrite in (False, True):
            with pytest.raises(CartoqaError, match="not a cartoqa lmms-eval export"):
                export_lmms_eval(ds, folder, overwrite=overwrite)
        assert snapshot(folder) == before
    with pytest.raises(CartoqaError, match="overlap"):
        export_lmms_eval(ds, ds.path / "lmms")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(CartoqaError, match="is a file"):
        export_lmms_eval(ds, a_file, overwrite=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (export_lmms_eval(ds, empty) / EXPORT_MARKER).is_file()


def test_missing_image_writes_nothing(offline, tmp_path):
    ds = kinds_dataset(tmp_path / "kinds", copies=1)
    (ds.path / "images" / "srn-000.png").unlink()
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(DatasetError, match=r"'srn-000'.*images/srn-000\.png.*missing"):
        export_lmms_eval(ds, work / "export")
    assert list(work.iterdir()) == []  # no export, no staging, no lock file
