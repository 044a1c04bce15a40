"""The main job: build, run and score every registered task with the baselines, resumably,
through public calls only (``cartoqa.demo``)."""

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.demo import build_or_reuse, overall_rows, run_demo
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import GPS_TASKS


def test_demo_command_scores_every_gps_task_and_resumes(tmp_path):
    args = ["demo", "--out", str(tmp_path), "--no-maps", "--gps-per-task", "10"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = {ln.split("│")[1].strip(): ln.split("│")[2:] for ln in first.output.splitlines()
            if ln.startswith("│")}  # fmt: skip
    assert set(GPS_TASKS) <= set(rows)
    oracle, random = (float(c.strip()) for c in rows["gps overall"][1:3])
    assert oracle == 1.0 and random < 0.5
    assert "answered now 180, resumed 0" in first.output and "GeoNames" in first.output
    # it ends with a report, and says where
    assert f"report: {tmp_path / 'report' / 'report.html'}" in " ".join(first.output.split())
    assert (tmp_path / "report" / "plots" / "gps_tracks.png").stat().st_size > 1000
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "answered now 0, resumed 180" in again.output
    assert again.output.count("│") == first.output.count("│")  # the same tables


def test_a_dataset_is_reused_only_when_made_with_the_same_settings(tmp_path):
    a = build_or_reuse(tmp_path / "g", tasks=["bearing"], per_task=10, seed=1)
    same = build_or_reuse(tmp_path / "g", tasks=["bearing"], per_task=10, seed=1)
    assert same.manifest.created_at == a.manifest.created_at
    other = build_or_reuse(tmp_path / "g", tasks=["bearing"], per_task=10, seed=2)
    assert (
        other.manifest.seeds == [2] and other.manifest.samples_sha256 != a.manifest.samples_sha256
    )
    more = build_or_reuse(tmp_path / "g", tasks=["bearing", "distance"], per_task=10, seed=2)
    assert set(more.manifest.counts) == {"bearing", "distance"}
    assert load_dataset(tmp_path / "g").manifest.total == 20
    bigger = build_or_reuse(tmp_path / "g", tasks=["bearing", "distance"], per_task=12, seed=2)
    assert bigger.manifest.total == 24  # another count per task is another dataset


def test_overall_rows_are_each_tasks_own_metrics():
    table = {
        "all m": {"n": 4, "rmse": 1.0, "mape": 0.1, "other": 9.0},
        "easy m": {"n": 2, "rmse": 0.5, "mape": 0.05},
        "all ft": {"n": 4, "rmse": 3.0, "mape": 0.1},
    }
    got = overall_rows("rle", table)
    assert ("all m", "rmse", 1.0) in got and ("all ft", "mape", 0.1) in got
    assert not any(row == "easy m" or metric in ("n", "other") for row, metric, _ in got)
    summary = {"track=pure": {"tasks": 9, "missing": 0, "accuracy": 0.5}}
    assert overall_rows("gps", summary) == [("track=pure", "accuracy", 0.5)]


def test_run_demo_of_gps_alone_gives_one_part_per_dataset(tmp_path):
    parts = run_demo(tmp_path, maps=False, gps_per_task=10, models=("oracle",))
    assert [p.name for p in parts] == ["gps"]
    (part,) = parts
    assert part.answered["oracle"] == (180, 0)
    assert part.scores["oracle"]["gps"]["overall"]["accuracy"] == pytest.approx(1.0)
