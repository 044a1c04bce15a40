"""``cartoqa build --ray`` (issue 31, item 3): the build's shards as Ray actors on a local Ray
cluster (this machine, 2 CPUs): the single-process bytes, and a killed actor's shard run
again on a new actor (the documented outcome: the same bytes, the retry in the report)."""

from __future__ import annotations

import threading
import time

import pytest
from typer.testing import CliRunner

from .build_bytes import REFERENCE, build, first_difference, reference
from .conftest import extract_path

ray = pytest.importorskip(
    "ray", reason="the ray extra is not installed: pip install 'cartoqa[ray]'"
)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def test_ray_actors_make_the_single_process_bytes(
    local_ray, tmp_path, tmp_path_factory, engine_for, cache, carto_files
):
    single = reference(tmp_path_factory, engine_for, cache, carto_files)
    folder = tmp_path / "ray"
    report = build(
        folder, engine_for(REFERENCE["extract"]), cache, carto_files, ray="auto", workers=None
    )
    assert report.workers == 2  # one actor per CPU of the cluster
    assert report.retried == []
    assert first_difference(single, folder) is None
    assert ray.is_initialized()  # the build joined the test's Ray and left it running


def test_a_killed_actor_is_replaced_and_the_bytes_stay(
    local_ray, tmp_path, tmp_path_factory, engine_for, cache, carto_files
):
    from cartoqa.tasks.build_ray import ACTOR_PREFIX

    single = reference(tmp_path_factory, engine_for, cache, carto_files)
    folder = tmp_path / "ray-killed"
    made: dict = {}

    def run() -> None:
        try:
            made["report"] = build(
                folder, engine_for(REFERENCE["extract"]), cache, carto_files, ray="auto", workers=2
            )
        except BaseException as exc:  # reported below
            made["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    killed = None
    deadline = time.monotonic() + 240
    while killed is None and worker.is_alive() and time.monotonic() < deadline:
        names = sorted(n for n in ray.util.list_named_actors() if n.startswith(ACTOR_PREFIX))
        if names:
            killed = names[0]
            ray.kill(ray.get_actor(killed))
        time.sleep(0.1)
    worker.join(timeout=600)
    assert killed is not None, "no actor was seen before the build ended"
    assert "error" not in made, made.get("error")
    report = made["report"]
    assert len(report.retried) == 1 and "run again on a new actor" in report.retried[0]
    assert first_difference(single, folder) is None


def test_the_command_builds_a_list_of_extracts_on_ray(
    local_ray, tmp_path, cluster, cache, carto_files
):
    from cartoqa.cli import app

    listing = tmp_path / "cities.txt"
    listing.write_text(f"{extract_path('monaco.osm.pbf')}\n")
    dsn = f"host={cluster.socket_dir} port={cluster.port} user={cluster.user}"
    result = CliRunner().invoke(
        app,
        ["build", str(tmp_path / "out"), "--extracts", str(listing), "--ray", "auto",
         "--tasks", "rle", "--per-task", "2", "--dsn", dsn, "--carto-files", str(carto_files),
         "--no-progress"],
        env={"CARTOQA_CACHE": str(cache)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "monaco" / "manifest.json").is_file()
    assert ray.is_initialized()  # joined the running Ray; left it to whoever started it
