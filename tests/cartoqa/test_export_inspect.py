"""The inspect_ai export, run by inspect_ai itself (``inspect_ai.eval``), offline: a model
that replays cartoqa runs' answers must get from inspect the numbers cartoqa gives them."""

from __future__ import annotations

import ast
import base64
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect-ai is not installed (pip install inspect-ai runs the export)"
)

from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    ModelOutput,
    ModelUsage,
)

from cartoqa import __version__  # noqa: E402
from cartoqa.errors import CartoqaError  # noqa: E402
from cartoqa.exports import inspect_runtime  # noqa: E402
from cartoqa.exports.hf import export_hf  # noqa: E402
from cartoqa.exports.inspect_ai import (  # noqa: E402
    EXPORT_MARKER,
    MODULE_FILE,
    README_FILE,
    SAMPLES_FILE,
    export_inspect,
)
from cartoqa.models.baselines import oracle_answer  # noqa: E402
from cartoqa.records import OSM_ATTRIBUTION  # noqa: E402
from cartoqa.scoring import score_run, score_sample  # noqa: E402
from cartoqa.stores import Dataset  # noqa: E402
from tests.cartoqa.export_data import run_answers, snapshot  # noqa: E402
from tests.cartoqa.model_data import kinds_dataset, text_dataset  # noqa: E402

MODELS = ("oracle", "random")
SCORER = "cartoqa_scorer"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The kinds dataset (every truth kind, 3 copies), run by oracle and random with
    ``cartoqa run``, and exported."""
    base = tmp_path_factory.mktemp("inspect")
    ds = kinds_dataset(base / "ds", copies=3)
    runs = base / "runs"
    answers = run_answers(ds, runs, MODELS)
    out = export_inspect(ds, base / "export")
    return {"ds": ds, "answers": answers, "out": out, "base": base}


def _replay(ds: Dataset, responses: dict[str, str | None], seen: dict[str, Any]) -> Any:
    """mockllm's custom_outputs: the cartoqa run's answer to the question in the prompt
    (the question texts are unique), whatever order and concurrency inspect asks in."""
    by_text = {s.prompt.text: s for s in ds}
    assert len(by_text) == len(ds)

    def generate(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        user = input[-1]
        assert isinstance(user, ChatMessageUser) and not isinstance(user.content, str)
        texts = [c.text for c in user.content if isinstance(c, ContentText)]
        assert len(texts) == 1
        sample = by_text[texts[0]]
        seen[sample.id] = input
        answer = responses[sample.id]
        assert answer is not None
        out = ModelOutput.from_content(model="mockllm/model", content=answer)
        # inspect's mock counts tokens with tiktoken, which downloads its tables: no network
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return generate


@pytest.fixture(scope="module")
def evaluated(exported: dict[str, Any]) -> dict[str, Any]:
    """Every exported task run through ``inspect_ai.eval`` per model, samples shuffled,
    the logs read back from their files."""
    ds: Dataset = exported["ds"]
    out: Path = exported["out"]
    tasks = sorted({s.task for s in ds})
    logs: dict[str, dict[str, Any]] = {}
    seen: dict[str, dict[str, Any]] = {}
    with pytest.MonkeyPatch.context() as mp:
        home = exported["base"] / "inspect-home"
        mp.setenv("INSPECT_LOG_DIR", str(home / "logs"))
        mp.setenv("XDG_DATA_HOME", str(home / "data"))
        mp.setenv("XDG_CACHE_HOME", str(home / "cache"))
        for model in MODELS:
            seen[model] = {}
            results = inspect_ai.eval(
                [f"{out / MODULE_FILE}@{t}" for t in tasks],
                model="mockllm/model",
                model_args={"custom_outputs": _replay(ds, exported["answers"][model], seen[model])},
                display="none",
                log_dir=str(home / "logs" / model),
                log_format="eval",
                sample_shuffle=7,
                max_connections=4,
                max_tasks=4,
            )
            logs[model] = {}
            for log in results:
                assert log.status == "success", (log.eval.task, log.error)
                logs[model][log.eval.task] = read_eval_log(log.location)
    return {**exported, "tasks": tasks, "logs": logs, "seen": seen}


def _inspect_table(log: Any) -> dict[str, dict[str, float]]:
    """cartoqa_metrics' values in a log, back in cartoqa's shape (group -> metric)."""
    [score] = [s for s in log.results.scores if s.name == SCORER and s.reducer is None]
    table: dict[str, dict[str, float]] = {}
    for metric in score.metrics.values():
        group, _, name = metric.name.rpartition("/")
        table.setdefault(group or "all", {})[name] = metric.value
    return table


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def test_inspect_reports_cartoqas_metrics(evaluated: dict[str, Any]) -> None:
    ds: Dataset = evaluated["ds"]
    assert set(evaluated["tasks"]) == {s.task for s in ds}
    for model in MODELS:
        expected = score_run(ds.samples, evaluated["answers"][model])
        assert set(evaluated["logs"][model]) == set(evaluated["tasks"])
        for task, log in evaluated["logs"][model].items():
            # a metric with no number (NaN) is left out: not a JSON number
            want = {
                group: {
                    k: v
                    for k, v in row.items()
                    if v is not None and not (isinstance(v, float) and math.isnan(v))
                }
                for group, row in expected[task].items()
            }
            want = {group: row for group, row in want.items() if row}
            got = _inspect_table(log)
            assert set(got) == set(want), (model, task)
            for group, row in want.items():
                assert set(got[group]) == set(row), (model, task, group)
                for name, value in row.items():
                    assert _same(got[group][name], value), (model, task, group, name)
            # the headline metrics, named as cartoqa names them
            if "all" in want:
                for name in want["all"]:
                    assert name in got["all"]
    # the numbers differ between the models: the comparison above can fail
    oracle = _inspect_table(evaluated["logs"]["oracle"]["srn"])
    random = _inspect_table(evaluated["logs"]["random"]["srn"])
    assert oracle["all"]["SR2"] == 1.0 and random["all"]["SR2"] < 1.0


def test_every_sample_scored_as_cartoqa_scores_it(evaluated: dict[str, Any]) -> None:
    ds: Dataset = evaluated["ds"]
    by_id = ds.by_id()
    verdicts = {"C": True, "I": False}
    for model in MODELS:
        responses = evaluated["answers"][model]
        right = 0
        for task, log in evaluated["logs"][model].items():
            assert log.samples is not None
            assert sorted(s.id for s in log.samples) == sorted(s.id for s in ds if s.task == task)
            assert log.eval.metadata["attribution"][0] == OSM_ATTRIBUTION  # in every log
            for logged in log.samples:
                sample = by_id[str(logged.id)]
                want = score_sample(sample, responses[sample.id])
                assert logged.output.completion == responses[sample.id]
                score = logged.scores[SCORER]
                assert verdicts[str(score.value)] is want.correct, (model, sample.id)
                assert score.answer == want.parsed
                assert score.explanation == want.why
                assert score.metadata["cartoqa_score"] == want.model_dump(mode="json")
                right += bool(want.correct)
            # inspect's own accuracy: the share of right verdicts
            [reduced] = [s for s in log.results.scores if s.reducer == "mean"]
            n = len(log.samples)
            correct = sum(verdicts[str(s.scores[SCORER].value)] for s in log.samples)
            assert reduced.metrics["accuracy"].value == pytest.approx(correct / n)
        if model == "oracle":
            assert right == len(ds)
        else:
            assert 0 < right < len(ds)  # random is right sometimes: both verdicts are seen


def test_inspect_shows_the_map_question_and_system_prompt(evaluated: dict[str, Any]) -> None:
    ds: Dataset = evaluated["ds"]
    for model in MODELS:
        seen = evaluated["seen"][model]
        assert set(seen) == {s.id for s in ds}
        for sample in ds:
            messages = seen[sample.id]
            system = [m for m in messages if isinstance(m, ChatMessageSystem)]
            assert [m.text for m in system] == [sample.prompt.system]
            [user] = [m for m in messages if isinstance(m, ChatMessageUser)]
            images = [c for c in user.content if isinstance(c, ContentImage)]
            assert len(images) == len(sample.prompt.images)
            for content, rel in zip(images, sample.prompt.images, strict=True):
                head, _, data = content.image.partition(",")
                assert head == "data:image/png;base64"
                assert base64.b64decode(data) == ds.image_path(rel).read_bytes()
            assert isinstance(user.content[-1], ContentText)
            assert user.content[-1].text == sample.prompt.text


def test_export_layout(exported: dict[str, Any]) -> None:
    ds: Dataset = exported["ds"]
    out: Path = exported["out"]
    lines = [json.loads(x) for x in (out / SAMPLES_FILE).read_text("utf-8").splitlines()]
    assert [x["id"] for x in lines] == [s.id for s in ds]
    for line, sample in zip(lines, ds, strict=True):
        assert line["task"] == sample.task and line["split"] == sample.split
        assert line["question"] == sample.prompt.text
        assert line["system"] == sample.prompt.system
        assert line["target"] == oracle_answer(sample)
        assert type(sample).model_validate(line["sample"]) == sample
        assert len(line["images"]) == len(sample.prompt.images)
        for mine, theirs in zip(line["images"], sample.prompt.images, strict=True):
            assert not Path(mine).is_absolute()
            assert (out / mine).read_bytes() == ds.image_path(theirs).read_bytes()
    marker = json.loads((out / EXPORT_MARKER).read_text("utf-8"))
    assert marker["format"] == "inspect"
    assert marker["samples_sha256"] == ds.manifest.samples_sha256
    readme = (out / README_FILE).read_text("utf-8")
    assert OSM_ATTRIBUTION in readme
    for line in ds.manifest.attribution:
        assert line in readme
    assert "inspect eval cartoqa_tasks.py@" in readme
    # the module imports the standard library, cartoqa and inspect_ai: nothing beside it
    tree = ast.parse((out / MODULE_FILE).read_text("utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            roots.add((node.module or "").split(".")[0])
    assert roots - set(sys.stdlib_module_names) == {"cartoqa", "inspect_ai"}
    tasks = {
        d.keywords[0].value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for d in node.decorator_list
        if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "task"
    }
    assert tasks == {s.task for s in ds}


def test_refuses_an_existing_export_without_overwrite(tmp_path: Path) -> None:
    ds = text_dataset(tmp_path / "ds", 4)
    out = export_inspect(ds, tmp_path / "out")
    before = snapshot(out)
    with pytest.raises(CartoqaError, match="--overwrite"):
        export_inspect(ds, out)
    assert snapshot(out) == before
    assert not list(tmp_path.glob(".out.staging-*"))  # nothing half-made beside it
    # with overwrite, an earlier export is replaced by the new one
    other = text_dataset(tmp_path / "ds2", 2, name="other")
    assert export_inspect(other, out, overwrite=True) == out
    lines = (out / SAMPLES_FILE).read_text("utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads((out / EXPORT_MARKER).read_text("utf-8"))["dataset"] == "other"


def test_never_replaces_other_folders(tmp_path: Path) -> None:
    ds = text_dataset(tmp_path / "ds", 2)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(CartoqaError, match="not a cartoqa inspect export"):
        export_inspect(ds, mine, overwrite=True)
    assert snapshot(mine) == {"notes.txt": b"keep me"}
    # nor a Hugging Face export (its marker names another format)
    pytest.importorskip("pyarrow", reason="the export extra installs pyarrow")
    hf = tmp_path / "hf"
    export_hf(ds, hf)
    before = snapshot(hf)
    with pytest.raises(CartoqaError, match="not a cartoqa inspect export"):
        export_inspect(ds, hf, overwrite=True)
    assert snapshot(hf) == before
    with pytest.raises(CartoqaError, match="overlap"):
        export_inspect(ds, ds.path / "inside")
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(CartoqaError, match="is a file"):
        export_inspect(ds, file)
    assert file.read_text() == "x"


def test_module_refuses_changed_samples(tmp_path: Path) -> None:
    ds = text_dataset(tmp_path / "ds", 2)
    out = export_inspect(ds, tmp_path / "out")
    spec = importlib.util.spec_from_file_location("cartoqa_tasks_changed", out / MODULE_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert len(module.cartoqa_task("distance").dataset) == 2
    with pytest.raises(ValueError, match="no 'dev' samples"):
        module.cartoqa_task("distance", "dev")
    path = out / SAMPLES_FILE
    path.write_text(path.read_text("utf-8").replace("q-0000", "q-9999"), "utf-8")
    inspect_runtime.exported_lines.cache_clear()  # read once a process
    with pytest.raises(RuntimeError, match="export the dataset again"):
        module.cartoqa_task("distance")


def test_inspect_cli_lists_every_task(exported: dict[str, Any], tmp_path: Path) -> None:
    """``inspect list tasks`` in the export folder finds one task per cartoqa task, by name
    (what ``inspect eval cartoqa_tasks.py@NAME`` runs)."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "list", "tasks"],
        cwd=exported["out"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    listed = set(done.stdout.split())
    assert listed == {f"{MODULE_FILE}@{t}" for t in {s.task for s in exported["ds"]}}


def test_map_task_through_an_openai_compatible_server_from_a_relative_path(
    tmp_path: Path,
) -> None:
    """The README's way to run a map task with a local model: inspect's own CLI, the module
    by a relative path, ``openai-api/local/...`` against an OpenAI-compatible server (here a
    real local HTTP server that answers deterministically): the map reaches the server, the
    log says success and is strict JSON (connectivity of one SRN sample is no number) (issue
    26, findings 20 and 12)."""
    from cartoqa.testing.fake_openai import FakeOpenAIServer

    ds = kinds_dataset(tmp_path / "ds", copies=1)
    out = export_inspect(ds, tmp_path / "export")
    readme = (out / README_FILE).read_text(encoding="utf-8")
    for needle in (
        "inspect eval cartoqa_tasks.py@",
        "refuses an absolute path",
        "TIKTOKEN_CACHE_DIR",
        "o200k_base",
        "`hf/`",
        "refuses image",
        "transformers serve",
        "vllm serve",
        "--model openai-api/local/",
        "LOCAL_BASE_URL",
    ):
        assert needle in readme, needle
    (srn,) = [s for s in ds if s.task == "srn"]
    with FakeOpenAIServer() as server:
        env = {
            **os.environ,
            "LOCAL_BASE_URL": server.url,
            "LOCAL_API_KEY": "local",
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        }
        command = [
            sys.executable, "-m", "inspect_ai", "eval", f"{MODULE_FILE}@srn",
            "--model", "openai-api/local/tiny-vlm",
            "--log-dir", str(tmp_path / "logs"), "--log-format", "json",
            "--display", "none",
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=out, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        (request,) = server.log
    assert request.text.endswith(srn.prompt.text) and request.system == srn.prompt.system
    image = (ds.path / srn.prompt.images[0]).read_bytes()
    assert request.images == [image]  # the map, byte for byte
    (log_file,) = (tmp_path / "logs").glob("*.json")
    text = log_file.read_text(encoding="utf-8")
    log = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in inspect's log"))
    assert log["status"] == "success"
    metrics = {m["name"] for s in log["results"]["scores"] for m in s["metrics"].values()}
    assert {"SR2", "aSA"} <= metrics and "connectivity" not in metrics
    assert math.isnan(score_run(ds.samples, {})["srn"]["all"]["connectivity"])
    # every line of samples.jsonl is strict JSON
    for line in (out / SAMPLES_FILE).read_text(encoding="utf-8").splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in samples.jsonl"))


def test_exporting_needs_no_inspect_ai(tmp_path: Path) -> None:
    """Only running the export needs inspect_ai: the export itself never imports it, nor
    does importing the runtime module the exported tasks use (issue 29)."""
    code = (
        "import sys; sys.modules['inspect_ai'] = None\n"
        "from pathlib import Path\n"
        "from tests.cartoqa.model_data import text_dataset\n"
        "from cartoqa.exports.inspect_ai import export_inspect\n"
        "import cartoqa.exports.inspect_runtime\n"  # the runtime imports inspect_ai lazily
        f"ds = text_dataset(Path({str(tmp_path / 'ds')!r}), 2)\n"
        f"print(export_inspect(ds, Path({str(tmp_path / 'out')!r})))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / MODULE_FILE).is_file()


# -- the task module imports cartoqa's runtime (issue 29) ---------------------------------------


def test_the_task_module_is_short_and_holds_no_logic(exported: dict[str, Any]) -> None:
    """The exported module names its export's data and tasks; what they do is cartoqa's
    (``cartoqa.exports.inspect_runtime``): a few lines a task, no function but the
    ``@task`` ones, each a docstring and one call."""
    out: Path = exported["out"]
    text = (out / MODULE_FILE).read_text("utf-8")
    tasks = {s.task for s in exported["ds"]}
    assert len(text.splitlines()) <= 45 + 7 * len(tasks)
    tree = ast.parse(text)
    froms = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "cartoqa.exports.inspect_runtime" in froms
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    assert len(functions) == len(tasks)
    for f in functions:
        [decorator] = f.decorator_list
        assert isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
        assert decorator.func.id == "task"
        assert len(f.body) == 2  # docstring, return
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    assert "score_sample" not in text and "tables_from_scores" not in text


def test_the_runtime_module_is_the_code_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change in ``cartoqa.exports.inspect_runtime`` shows in what ``inspect eval`` of an
    exported module reports: the module runs cartoqa's runtime, not a copy of it."""
    ds = text_dataset(tmp_path / "ds", 3)
    out = export_inspect(ds, tmp_path / "out")
    answers = {s.id: oracle_answer(s) for s in ds}
    real = inspect_runtime.tables_from_scores

    def changed(*args: Any, **kwargs: Any) -> Any:
        tables = real(*args, **kwargs)
        for table in tables.values():
            table["all"]["changed_in_the_runtime"] = 42.0
        return tables

    monkeypatch.setattr(inspect_runtime, "tables_from_scores", changed)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    [log] = inspect_ai.eval(
        f"{out / MODULE_FILE}@distance",
        model="mockllm/model",
        model_args={"custom_outputs": _replay(ds, answers, {})},
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    table = _inspect_table(read_eval_log(log.location))
    assert table["all"]["changed_in_the_runtime"] == 42.0
    assert table["all"]["accuracy"] == 1.0  # and the real numbers beside it


def test_the_task_module_names_the_fix_without_cartoqa(tmp_path: Path) -> None:
    """Where cartoqa (its inspect runtime) cannot be imported, the exported module says to
    install the cartoqa that exported it."""
    out = export_inspect(text_dataset(tmp_path / "ds", 2), tmp_path / "out")
    code = (
        "import sys, runpy; sys.modules['cartoqa.exports.inspect_runtime'] = None\n"
        f"runpy.run_path({str(out / MODULE_FILE)!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    assert "ImportError: these tasks are scored by cartoqa" in done.stderr
    assert f"install cartoqa {__version__}, which exported them" in done.stderr


def test_the_task_module_warns_when_another_cartoqa_scores(tmp_path: Path) -> None:
    """A module exported by another cartoqa than the installed one says so where it is
    imported (the warning points at the module, not at cartoqa's runtime)."""
    out = export_inspect(text_dataset(tmp_path / "ds", 2), tmp_path / "out")
    path = out / MODULE_FILE
    text = path.read_text("utf-8")
    assert f'exported_by="{__version__}"' in text
    path.write_text(text.replace(f'exported_by="{__version__}"', 'exported_by="0.0.1"'), "utf-8")
    spec = importlib.util.spec_from_file_location("cartoqa_tasks_old", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with pytest.warns(UserWarning, match="exported by cartoqa 0.0.1") as caught:
        spec.loader.exec_module(module)
    assert [Path(w.filename) for w in caught] == [path]
    assert len(module.cartoqa_task("distance").dataset) == 2  # it still runs
