"""A map task defined here, on its own (a generator, a prompt, a scorer), goes through
``cartoqa build`` on a real extract, ``run`` with the oracle and random baselines and
``score``, with no edit anywhere else (issue 14)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.records import NumberTruth
from cartoqa.stores import load_dataset
from cartoqa.tasks.spec import register_task
from cartoqa.tasks.templates import default_prompts, load_prompts
from cartoqa.tasks.views import Plan, Question, Reject, fit_center
from maps.page import Marker, View
from maps.projection import world_pixel
from tests.cartoqa.test_task_seam import TOY

from .conftest import extract_path

ZOOM = 18
#: the toy's own wording, brought by its spec (``TaskSpec.templates``)
TEMPLATES = {
    "map.toy_marker_count": "How many map pins does this map show? Count every pin, whatever "
    "its colour. FINAL ANSWER: <n>"
}


def toy_plan(sampler, i: int) -> Plan:
    """1-4 pins on road nodes within 150 px of each other, at zoom 18."""
    k = 1 + i % 4
    rng = sampler.rng
    first = rng.randrange(len(sampler.nodes))
    x0, y0 = world_pixel(sampler.lat[first], sampler.lon[first], ZOOM)
    near = [
        j
        for j in range(len(sampler.nodes))
        if j != first
        and 40 < math.dist(world_pixel(sampler.lat[j], sampler.lon[j], ZOOM), (x0, y0)) < 150
    ]
    if len(near) < k - 1:
        raise Reject("too_few_nodes_nearby")
    picked = [first, *rng.sample(near, k - 1)]
    points = [(float(sampler.lat[j]), float(sampler.lon[j])) for j in picked]
    center = fit_center(points, ZOOM, rng, extract_bounds=sampler.bounds)
    if center is None:
        raise Reject("does_not_fit_the_view")
    markers = [Marker(a, b, "blue" if n % 2 else "red") for n, (a, b) in enumerate(points)]
    view = View.make(center, ZOOM, markers=markers, id=f"toy_marker_count-{i:04d}")
    text = sampler.prompts.text("map.toy_marker_count")
    question = Question("", text, NumberTruth(value=k), {"zoom": ZOOM})
    return Plan("toy_marker_count", view, [question])


@pytest.fixture
def toy_task():
    register_task(replace(TOY, generator=toy_plan, templates=TEMPLATES), replace=True)
    yield
    register_task(TOY, replace=True)  # the other tests' toy has no generator


def test_a_toy_map_task_builds_runs_and_scores_through_the_cli(
    toy_task, cluster, cache, carto_files, tmp_path, monkeypatch
):
    monkeypatch.setenv("CARTOQA_CACHE", str(cache))
    extract = extract_path("london-moorgate.osm.pbf")
    cli = CliRunner()
    r = cli.invoke(
        app,
        ["build", str(tmp_path / "ds"), "--extract", str(extract), "--tasks", "toy_marker_count"]
        + ["--per-task", "4", "--seed", "3", "--no-progress", "--carto-files", str(carto_files)]
        + ["--dsn", cluster.connection("postgres").conninfo()],
    )
    assert r.exit_code == 0, r.output
    ds = load_dataset(tmp_path / "ds")
    assert [s.task for s in ds] == ["toy_marker_count"] * 4
    assert sorted(s.ground_truth.value for s in ds) == [1, 2, 3, 4]
    for s in ds:
        assert (ds.path / s.prompt.images[0]).stat().st_size > 50_000  # a real rendered map
        assert s.provenance.generator.endswith("test_task_seam_build.toy_marker_count")
        assert s.metadata.zoom == ZOOM and "pins" in s.prompt.text
    assert "© OpenStreetMap contributors" in ds.manifest.attribution
    # its wording joined the package's: in the hash, and open to --prompts like any other
    assert ds.manifest.prompts["sha256"] == default_prompts().sha256
    assert load_prompts(None).has("map.toy_marker_count")
    runs = tmp_path / "runs"
    for model in ("oracle", "random"):
        r = cli.invoke(app, ["run", str(ds.path), "-m", model, "--runs-dir", str(runs)])
        assert r.exit_code == 0, r.output
    r = cli.invoke(
        app, ["score", str(ds.path), "--runs-dir", str(runs), "--out", str(tmp_path / "s")]
    )
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "s" / "scores.json").read_text())
    by_model = {run["model"]: run["scores"]["toy_marker_count"] for run in data.values()}
    assert by_model["oracle"]["all"] == {"n": 4, "accuracy": 1.0, "mean error": 0.0}
    assert by_model["oracle"]["zoom=18"]["n"] == 4
    assert by_model["random"]["all"]["n"] == 4
