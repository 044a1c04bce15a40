"""A task in a distribution of its own, installed beside cartoqa, goes through every command
in fresh processes with no edit to cartoqa (issue 29).

The plug-in is the one the docs' tutorial writes (``docs/adding-a-task.md``: every fenced
block preceded by ``<!-- file: PATH -->``), installed with pip into a folder of its own
(``pip install --target``, the way a user's ``pip install`` lays it out) that the commands
get on ``PYTHONPATH``.  cartoqa finds its module through the entry-point group
``cartoqa.tasks`` whatever was imported first: ``tasks``, ``build``, ``run``, ``score``,
``report``, ``review``, ``export`` and ``demo`` all see the task.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "adding-a-task.md"
TASK = "toy_hemisphere"


def tutorial_files(text: str) -> dict[str, str]:
    """PATH -> content of every fenced block the tutorial marks ``<!-- file: PATH -->``."""
    found = re.findall(r"<!-- file: (\S+) -->\s*\n```[a-z]*\n(.*?)\n```", text, re.DOTALL)
    return {path: body + "\n" for path, body in found}


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """The tutorial's distribution, installed by pip into a folder; returns that folder."""
    files = tutorial_files(TUTORIAL.read_text(encoding="utf-8"))
    assert "pyproject.toml" in files and len(files) >= 2, sorted(files)
    src = tmp_path_factory.mktemp("plugin-src")
    for rel, body in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(body, encoding="utf-8")
    site = tmp_path_factory.mktemp("plugin-site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(src)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(site.glob("*.dist-info/entry_points.txt")), "pip wrote no entry points"
    return site


def env_with(site: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return env


def cartoqa(site: Path | None, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    """``python -m cartoqa ARGS`` in a fresh process, the plug-in installed or not."""
    done = subprocess.run(
        [sys.executable, "-m", "cartoqa", *args],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=env_with(site),
    )  # fmt: skip
    if ok:
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done


@pytest.fixture(scope="module")
def built(plugin, tmp_path_factory) -> tuple[Path, Path]:
    """A dataset of the plug-in's task alone and its oracle and random runs."""
    out = tmp_path_factory.mktemp("toy")
    data, runs = out / "data", out / "runs"
    cartoqa(plugin, "build", str(data), "--tasks", TASK, "--per-task", "10", "--seed", "3")
    for model in ("oracle", "random"):
        cartoqa(plugin, "run", str(data), "--model", model, "--runs-dir", str(runs))
    return data, runs


def test_the_tutorial_gives_a_distribution_with_an_entry_point(plugin):
    (points,) = plugin.glob("*.dist-info/entry_points.txt")
    assert "[cartoqa.tasks]" in points.read_text()


def test_tasks_lists_it_only_where_it_is_installed(plugin):
    assert TASK in cartoqa(plugin, "tasks").stdout
    assert TASK not in cartoqa(None, "tasks").stdout


def test_build_run_and_score_see_it(built):
    data, runs = built
    samples = [json.loads(line) for line in (data / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 10 and {s["task"] for s in samples} == {TASK}
    assert {s["split"] for s in samples} == {"train", "dev", "test"}
    assert all(s["prompt"]["text"].startswith("Is ") for s in samples)
    assert len(list(runs.glob("*.jsonl"))) == 2


def test_score_uses_the_plug_ins_scorer(plugin, built):
    data, runs = built
    got = json.loads(cartoqa(plugin, "score", str(data), "--runs-dir", str(runs), "--json").stdout)
    by_model = {run["model"]: run["scores"][TASK]["all"] for run in got.values()}
    assert by_model["oracle"] == {"n": 10, "accuracy": 1.0}  # the plug-in's metrics
    assert set(by_model["random"]) == {"n", "accuracy"}


def test_a_dataset_of_it_is_unknown_without_the_plug_in(built):
    data, runs = built
    done = cartoqa(None, "run", str(data), "--model", "oracle", "--runs-dir", str(runs), ok=False)
    assert done.returncode != 0
    assert f"unknown task '{TASK}'" in done.stdout + done.stderr
    assert "Adding a task" in done.stdout + done.stderr


def test_samples_load_whatever_was_imported_first(plugin, built):
    """Reading the dataset imports no task module first: the schema loads the group."""
    data, _ = built
    code = (
        "import sys\n"
        "from cartoqa.stores import load_dataset\n"
        f"ds = load_dataset({str(data)!r})\n"
        "print(len(ds.samples), 'cartoqa.tasks.spec' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env_with(plugin),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[0] == "10"


def test_report_shows_it(plugin, built, tmp_path):
    data, runs = built
    cartoqa(plugin, "report", str(data), "--runs-dir", str(runs), "-o", str(tmp_path / "rep"))
    written = " ".join(
        p.read_text(errors="replace")
        for p in (tmp_path / "rep").rglob("*")
        if p.is_file() and p.suffix in (".md", ".html", ".json", ".csv")
    )
    assert TASK in written


@pytest.mark.parametrize("to", ["hf", "inspect", "vlmevalkit", "lmms-eval"])
def test_export_writes_it(plugin, built, tmp_path, to):
    pytest.importorskip("pyarrow", reason="the export extra: pip install 'cartoqa[export]'")
    data, _ = built
    out = tmp_path / "out"
    cartoqa(plugin, "export", str(data), "--to", to, str(out))
    names = " ".join(p.as_posix() for p in out.rglob("*"))
    contents = " ".join(
        p.read_text(errors="replace")
        for p in out.rglob("*")
        if p.is_file() and p.suffix in (".py", ".yaml", ".json", ".jsonl", ".md")
    )
    assert TASK in names + contents


def test_review_serves_and_exports_it(plugin, built, tmp_path, monkeypatch):
    pytest.importorskip("fastapi", reason="the review tool's extra: pip install 'cartoqa[review]'")
    from tests.annotations.review_server import review_server

    data, _ = built
    first = json.loads((data / "samples.jsonl").read_text().splitlines()[0])
    monkeypatch.setenv("PYTHONPATH", str(plugin))
    with review_server(data, "--reviewer", "ana") as srv:
        status, _, body = srv.request("GET", f"/sample/{first['id']}")
        assert status == 200
        assert first["prompt"]["text"][:30].encode() in body.replace(b"&#39;", b"'")
    cartoqa(plugin, "review", "export", str(data), str(tmp_path / "reviewed"))
    assert (tmp_path / "reviewed" / "samples.jsonl").exists()


def test_demo_builds_runs_and_scores_it(plugin, tmp_path):
    cartoqa(
        plugin, "demo", "--no-maps", "--gps-per-task", "10", "--models", "oracle",
        "--out", str(tmp_path / "demo"),
    )  # fmt: skip
    samples = (tmp_path / "demo" / "gps" / "samples.jsonl").read_text()
    assert f'"task":"{TASK}"' in samples.replace(" ", "")
    report = " ".join(
        p.read_text(errors="replace")
        for p in (tmp_path / "demo").rglob("*")
        if p.is_file() and p.suffix in (".md", ".html")
    )
    assert TASK in report


def test_a_broken_plug_in_is_named_and_left_out(tmp_path):
    """A plug-in whose module fails to import warns, naming itself; cartoqa's tasks stay."""
    site = tmp_path / "site"
    (site / "broken_tasks").mkdir(parents=True)
    (site / "broken_tasks" / "__init__.py").write_text("raise ImportError('no such thing')\n")
    info = site / "broken_tasks-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-tasks\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[cartoqa.tasks]\nbroken = broken_tasks\n")
    done = cartoqa(site, "tasks")
    assert "srn" in done.stdout and "distance" in done.stdout
    assert "broken-tasks" in done.stderr and "no such thing" in done.stderr
