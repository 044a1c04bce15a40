"""cartoqa build when it cannot do what was asked (issue 11, items 2, 14, 15 and 19).

A build that can make nothing exits non-zero and writes nothing; an output it
cannot write, or one that holds a dataset, is refused before any sampling or
rendering; an impossible --per-task ends in bounded time.
"""

import shutil
import subprocess
import time

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import DatasetError
from cartoqa.stores import DatasetWriter, load_dataset
from cartoqa.tasks import build_dataset
from cartoqa.tasks.build import BuildError
from cartoqa.tasks.build_groups import MAX_REJECTIONS_IN_A_ROW

from .conftest import extract_path


def monaco_clip(folder, bbox: str, strategy: str, *, cluster, cache, carto_files):
    """A MapEngine on a real extract cut from Monaco with ``osmium extract``."""
    from maps import MapEngine

    if shutil.which("osmium") is None:
        pytest.skip("osmium-tool is not installed (bash scripts/setup.sh test)")
    clip = folder / "clip.osm.pbf"
    subprocess.run(
        ["osmium", "extract", "-s", strategy, "-b", bbox, "-o", str(clip)]
        + [str(extract_path("monaco.osm.pbf"))],
        check=True,
        capture_output=True,
    )
    return MapEngine(clip, carto_files=carto_files, cache=cache, cluster=cluster)


@pytest.fixture(scope="module")
def tiny_engine(cluster, cache, carto_files, tmp_path_factory):
    """A real extract about 80 m across, cut from Monaco: smaller than any view."""
    return monaco_clip(
        tmp_path_factory.mktemp("tiny"),
        "7.4245,43.7383,7.4255,43.7389",
        "simple",
        cluster=cluster,
        cache=cache,
        carto_files=carto_files,
    )


def test_a_build_that_makes_nothing_fails_and_writes_nothing(tiny_engine, tmp_path):
    with pytest.raises(BuildError, match=r"no srn, rle, mml question could be made") as err:
        build_dataset(tmp_path / "ds", engine=tiny_engine, per_task=2, progress=False)
    assert err.value.report.rejected["srn"]["extract_smaller_than_the_view"] > 0
    assert not (tmp_path / "ds").exists()
    assert [p.name for p in tmp_path.iterdir()] == [".ds.lock"]


def test_an_impossible_per_task_ends_after_a_bounded_number_of_rejections(tiny_engine, tmp_path):
    with pytest.raises(BuildError) as err:
        build_dataset(
            tmp_path / "ds", engine=tiny_engine, tasks=["mml"], per_task=100_000, progress=False
        )
    assert sum(err.value.report.rejected["mml"].values()) == MAX_REJECTIONS_IN_A_ROW
    assert "in a row" in err.value.report.gave_up["mml"]


def test_the_cli_exits_1_with_the_rejection_table(tiny_engine, cluster, tmp_path, carto_files):
    result = CliRunner().invoke(
        app,
        ["build", str(tmp_path / "ds"), "--extract", str(tiny_engine.extract.source)]
        + ["--carto-files", str(carto_files), "--per-task", "1", "--no-progress"]
        + ["--dsn", cluster.connection("postgres").conninfo()],
    )
    assert result.exit_code == 1, result.output
    assert "no dataset written" in result.output
    assert "extract_smaller_than_the_view" in result.output
    assert not (tmp_path / "ds").exists()


def test_an_existing_dataset_is_refused_before_any_work(tmp_path):
    with DatasetWriter(tmp_path / "ds") as w:
        w.finish()
    t0 = time.monotonic()
    # a nonexistent extract: had the build started work, it would have failed on it instead
    result = CliRunner().invoke(
        app, ["build", str(tmp_path / "ds"), "--extract", str(tmp_path / "none.osm.pbf")]
    )
    assert result.exit_code == 2
    assert "already holds a dataset; pass --overwrite" in result.output
    assert "overwrite=True" not in result.output
    assert time.monotonic() - t0 < 10
    (tmp_path / "f").write_text("a file")
    result = CliRunner().invoke(
        app, ["build", str(tmp_path / "f" / "ds"), "--extract", str(tmp_path / "none.osm.pbf")]
    )
    assert result.exit_code == 2 and "is a file, not a folder" in result.output
    assert load_dataset(tmp_path / "ds").manifest.total == 0


def test_a_build_into_a_folder_being_written_is_refused(tiny_engine, tmp_path):
    holder = DatasetWriter(tmp_path / "ds")
    try:
        with pytest.raises(DatasetError, match="is being written by process"):
            build_dataset(tmp_path / "ds", engine=tiny_engine, per_task=1, progress=False)
    finally:
        holder.abandon()


@pytest.fixture(scope="module")
def small_engine(cluster, cache, carto_files, tmp_path_factory):
    """A real extract about 500 m across, cut from Monaco: room for a few MML questions."""
    return monaco_clip(
        tmp_path_factory.mktemp("small"),
        "7.4215,43.7320,7.4275,43.7362",
        "complete_ways",
        cluster=cluster,
        cache=cache,
        carto_files=carto_files,
    )


def test_a_shortfall_is_written_recorded_and_strict_refuses_it(small_engine, tmp_path):
    report = build_dataset(
        tmp_path / "ds", engine=small_engine, tasks=["mml"], per_task=30, progress=False
    )
    made = report.samples["mml"]
    assert 0 < made < 30
    ds = load_dataset(tmp_path / "ds")
    assert ds.manifest.shortfall == {"mml": 30 - made} and len(ds) == made
    with pytest.raises(BuildError, match="--strict and mml: .* of 30 maps"):
        build_dataset(
            tmp_path / "strict",
            engine=small_engine,
            tasks=["mml"],
            per_task=30,
            progress=False,
            strict=True,
        )
    assert not (tmp_path / "strict").exists()
