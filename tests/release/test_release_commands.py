"""The release's three commands end to end, each in a fresh ``python -m cartoqa`` process:
import-release, then run / score / score --mode original, export --to cartomapqa and
score-release on what it wrote, import-release of that export.  And, where a checkout of the
published code is at hand (``CARTOMAPQA_CODE``), its own eval scripts on the export.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .fixture_release import make_release, release_root

ROOT = Path(__file__).resolve().parents[2]


def cartoqa(*args: str | Path, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "cartoqa", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if ok:
        assert done.returncode == 0, done.stderr + done.stdout
    return done


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A fixture release imported, answered by the oracle; the work folder."""
    work = tmp_path_factory.mktemp("release")
    make_release(work)
    cartoqa("import-release", release_root(work), "cmqa", cwd=work)
    cartoqa("run", "cmqa", "--model", "oracle", "--runs-dir", "runs", cwd=work)
    return work


def _scores(work: Path, *extra: str) -> dict[str, dict]:
    out = cartoqa("score", "cmqa", "--runs-dir", "runs", "--json", *extra, cwd=work).stdout
    (run,) = json.loads(out).values()
    return run["scores"]


def test_every_release_task_is_imported_and_the_oracle_scores_one(imported):
    manifest = json.loads((imported / "cmqa" / "manifest.json").read_text())
    assert set(manifest["counts"]) == {
        "mfs", "stmf_presence", "stmf_count", "stmf_names", "mtmf", "rle", "mml", "srn",
    }  # fmt: skip
    release = manifest["inputs"]["release"]
    files = release["files_sha256"]
    assert "MapNavigation/road_dict/1.json" in files and len(files) > 300
    assert (imported / "cmqa" / "release").is_symlink()
    assert any("CartoMapQA release" in a for a in manifest["attribution"])
    assert "© OpenStreetMap contributors" in " ".join(manifest["attribution"])
    scores = _scores(imported)
    assert scores["mfs"]["all"]["accuracy"] == 1
    assert scores["stmf_presence"]["all"]["accuracy"] == 1
    assert scores["stmf_count"]["all"]["rmse"] == 0
    assert scores["stmf_names"]["all"]["f1"] == 1
    assert scores["mtmf"]["all"]["rmse"] == 0 and scores["mtmf"]["all"]["f1"] == 1
    assert scores["rle"]["all m"]["mape"] == 0 and scores["rle"]["all ft"]["mape"] == 0
    assert scores["mml"]["all"]["accuracy"] == 1
    assert scores["srn"]["all"]["SR2"] == 1 and scores["srn"]["all"]["connectivity"] == 1


def test_export_reads_back_unchanged_and_scores_the_same_both_ways(imported, tmp_path):
    cartoqa(
        "export", imported / "cmqa", "--to", "cartomapqa", tmp_path / "out",
        "--runs-dir", imported / "runs", cwd=imported,
    )  # fmt: skip
    back = tmp_path / "back"
    cartoqa("import-release", tmp_path / "out" / "Dataset" / "CartoMapQA", back, cwd=tmp_path)
    assert (back / "samples.jsonl").read_bytes() == (
        imported / "cmqa" / "samples.jsonl"
    ).read_bytes()
    # the published arithmetic reached two ways: score --mode original on the dataset, and
    # score-release on the responses the export wrote
    original = _scores(imported, "--mode", "original")
    default = _scores(imported)
    released = json.loads(
        cartoqa(
            "score-release", tmp_path / "out" / "Responses", "--model", "oracle",
            "--release", tmp_path / "out" / "Dataset" / "CartoMapQA", "--json", cwd=tmp_path,
        ).stdout
    )  # fmt: skip
    assert {v["task"] for v in released.values()} == set(original)
    for name, got in released.items():
        assert json.dumps(got["original"], sort_keys=True) == json.dumps(
            original[got["task"]], sort_keys=True
        ), name
        assert json.dumps(got["cartoqa"], sort_keys=True) == json.dumps(
            default[got["task"]], sort_keys=True
        ), name


def test_copied_images_stand_alone(tmp_path):
    make_release(tmp_path)
    cartoqa(
        "import-release",
        release_root(tmp_path),
        "ds",
        "--copy-images",
        "--task",
        "MML",
        cwd=tmp_path,
    )
    shutil.rmtree(tmp_path / "Dataset")
    assert not (tmp_path / "ds" / "release").is_symlink()
    cartoqa("dataset", "info", "ds", "--verify", cwd=tmp_path)


def test_a_missing_folder_is_named_and_nothing_is_written(tmp_path):
    make_release(tmp_path)
    shutil.rmtree(release_root(tmp_path) / "MapNavigation" / "road_dict")
    done = cartoqa("import-release", release_root(tmp_path), "ds", cwd=tmp_path, ok=False)
    assert done.returncode == 2
    assert "road_dict" in done.stderr, done.stderr
    assert not (tmp_path / "ds").exists()


def test_not_a_release_is_refused_naming_what_a_release_holds(tmp_path):
    (tmp_path / "empty").mkdir()
    done = cartoqa("import-release", tmp_path / "empty", "ds", cwd=tmp_path, ok=False)
    assert done.returncode == 2 and "MapNavigation" in done.stderr


def test_prompts_of_ones_own_replace_cartoqas_and_a_wrong_field_is_refused(tmp_path):
    make_release(tmp_path)
    mine = tmp_path / "mine.toml"
    mine.write_text('[map.release]\nmml = "Name the two roads at the {colour} pin."\n')
    cartoqa(
        "import-release",
        release_root(tmp_path),
        "ds",
        "--task",
        "MML",
        "--prompts",
        mine,
        cwd=tmp_path,
    )
    first = json.loads((tmp_path / "ds" / "samples.jsonl").read_text().splitlines()[0])
    assert first["prompt"]["text"] in {
        "Name the two roads at the blue pin.",
        "Name the two roads at the red pin.",
    }
    mine.write_text('[map.release]\nmml = "Roads at {marker}?"\n')
    done = cartoqa(
        "import-release", release_root(tmp_path), "ds2", "--prompts", mine, cwd=tmp_path, ok=False
    )
    assert done.returncode == 2 and "marker" in done.stderr


def test_score_release_on_responses_needs_a_model_and_names_them(imported, tmp_path):
    cartoqa(
        "export", imported / "cmqa", "--to", "cartomapqa", tmp_path / "out",
        "--runs-dir", imported / "runs", cwd=imported,
    )  # fmt: skip
    done = cartoqa("score-release", tmp_path / "out" / "Responses", cwd=tmp_path, ok=False)
    assert done.returncode == 2 and "--model" in done.stderr and "oracle" in done.stderr
    done = cartoqa("score-release", tmp_path / "nowhere", cwd=tmp_path, ok=False)
    assert done.returncode == 2 and "not a folder" in done.stderr


PUBLISHED = os.environ.get("CARTOMAPQA_CODE")


@pytest.mark.skipif(
    not PUBLISHED,
    reason="the published CartoMapQA code is not here: set CARTOMAPQA_CODE to a checkout of "
    "github.com/ungquanghuy-kddi/CartoMapQA to run its own scripts on an export",
)
def test_the_published_scripts_score_an_export_as_score_release_does(imported, tmp_path):
    out = tmp_path / "out"
    cartoqa(
        "export",
        imported / "cmqa",
        "--to",
        "cartomapqa",
        out,
        "--runs-dir",
        imported / "runs",
        cwd=imported,
    )
    code = Path(PUBLISHED)
    printed = {}
    for task in ("mfs", "stmf", "mtmf", "mml"):
        done = subprocess.run(
            [sys.executable, "-c", f"from evaluate_{task} import evaluate_{task} as f; "
             f"f('oracle', './Responses/{task.upper()}/oracle')"],
            cwd=out, env={**os.environ, "PYTHONPATH": str(code)}, capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        printed[task] = done.stdout
    released = json.loads(
        cartoqa("score-release", out / "Responses", "--model", "oracle", "--release",
                out / "Dataset" / "CartoMapQA", "--json", cwd=tmp_path).stdout
    )  # fmt: skip
    assert f"Accuracy = {released['MFS']['original']['all']['accuracy']:0.3f}" in printed["mfs"]
    mtmf = released["MTMF"]["original"]["all"]
    assert f"Avg_micro_f1 = {mtmf['f1']:0.3f}" in printed["mtmf"]
    mml = released["MML"]["original"]["all"]
    assert f"Overall accuracy = {mml['accuracy']:0.3f}" in printed["mml"]


def test_a_release_without_a_tasks_folder_is_refused_unless_the_others_are_named(tmp_path):
    make_release(tmp_path)
    shutil.rmtree(release_root(tmp_path) / "MapNavigation")
    done = cartoqa("import-release", release_root(tmp_path), "ds", cwd=tmp_path, ok=False)
    assert done.returncode == 2, done.stdout
    assert "MapNavigation/ (SRN)" in done.stderr and "--task MML" in done.stderr
    assert not (tmp_path / "ds").exists()
    cartoqa("import-release", release_root(tmp_path), "ds", "--task", "MML", cwd=tmp_path)
    done = cartoqa(
        "import-release", release_root(tmp_path), "d2", "--task", "SRN", cwd=tmp_path, ok=False
    )
    assert done.returncode == 2 and "MapNavigation/" in done.stderr
