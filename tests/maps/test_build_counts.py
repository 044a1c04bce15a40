"""A count per task (``--per-task srn=278,rle=600``): each task gets its own count, and its
samples are those a build asking that count of every task makes (view groups are sampled
apart); bad counts are refused before any work."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.cli.build import parse_counts
from cartoqa.errors import CartoqaError
from cartoqa.tasks import build_dataset

from .test_build_same_bytes import BUILDS


@pytest.mark.parametrize(
    ("text", "want"),
    [("10", 10), (" 7 ", 7), ("srn=278,rle=600", {"srn": 278, "rle": 600}), ("mml=2,", {"mml": 2})],
)
def test_counts_are_read_as_one_or_one_per_task(text, want):
    assert parse_counts(text) == want


@pytest.mark.parametrize("text", ["ten", "srn=many", "srn=2.5", "=3"])
def test_unreadable_counts_name_the_value(text):
    with pytest.raises(CartoqaError, match="--per-task"):
        parse_counts(text)


@pytest.mark.parametrize(
    ("counts", "said"),
    [
        ({"srn": 2}, "no count for mml"),
        ({"srn": 2, "mml": 2, "rle": 2}, "rle not asked for"),
        ({"srn": 0, "mml": 2}, "srn=0"),
    ],
)
def test_counts_that_do_not_fit_the_tasks_are_refused_before_any_work(tmp_path, counts, said):
    with pytest.raises(CartoqaError, match=said):
        build_dataset(tmp_path / "ds", tasks=["srn", "mml"], per_task=counts, progress=False)
    assert not (tmp_path / "ds").exists()


def test_the_command_refuses_an_unreadable_count(tmp_path):
    result = CliRunner().invoke(app, ["build", str(tmp_path / "ds"), "--per-task", "srn=lots"])
    assert result.exit_code == 2
    assert "--per-task 'srn=lots'" in result.output
    assert not (tmp_path / "ds").exists()


def test_each_task_gets_its_own_count_and_the_samples_of_that_count(engine_for, cache, tmp_path):
    ref = BUILDS["monaco-all"]  # seed 5, 2 of each task, recorded before the speed work
    report = build_dataset(
        tmp_path / "ds",
        engine=engine_for(ref["extract"]),
        cache=cache,
        tasks=["srn", "mml"],
        per_task={"srn": 2, "mml": 1},
        seed=ref["seed"],
        progress=False,
    )
    assert report.samples == {"srn": 2, "mml": 1}
    lines = (tmp_path / "ds" / "samples.jsonl").read_bytes().splitlines()
    got = {json.loads(line)["id"]: hashlib.sha256(line).hexdigest() for line in lines}
    first = {t: sorted(k for k in ref["samples"] if k.startswith(f"{t}-")) for t in ("srn", "mml")}
    # both SRN samples of the reference, and the first of its MML ones: a one-map MML build
    # stops after the map a two-map build made first
    assert sorted(got) == sorted([*first["srn"], first["mml"][0]])
    assert got == {k: ref["samples"][k] for k in got}
