"""GPS generation: determinism, the 60/10/30 stratified split, oracle and random, the CLI."""

import collections
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.models import RandomModel, Request
from cartoqa.models.baselines import OracleModel
from cartoqa.scoring import score_run
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import GPS_TASKS, GPS_VARIANTS, assign_splits, generate_gps
from cartoqa.tasks.gps._cities import load_cities
from cartoqa.tasks.gps._terrain import TERRAIN_CLASSES

PER_TASK = 60


@pytest.fixture(scope="module")
def gps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gps") / "ds"
    generate_gps(folder, per_task=PER_TASK, seed=42)
    return load_dataset(folder)


def test_every_task_with_its_count_and_split_sizes(gps):
    counts = collections.Counter((s.task, s.split) for s in gps)
    # GPSBench's 17 tasks and the missing-data probe
    assert {s.task for s in gps} == set(GPS_TASKS) and len(GPS_TASKS) == 18
    assert "terrain_classification" in GPS_TASKS and "missing_data" in GPS_TASKS
    for task in GPS_TASKS:
        assert (counts[task, "train"], counts[task, "dev"], counts[task, "test"]) == (36, 6, 18)
    ids = [s.id for s in gps]
    assert len(ids) == len(set(ids))  # no id in two splits (or twice anywhere)


def test_the_same_seed_gives_the_same_bytes(gps, tmp_path):
    generate_gps(tmp_path / "again", per_task=PER_TASK, seed=42)
    assert (tmp_path / "again" / "samples.jsonl").read_bytes() == (
        gps.path / "samples.jsonl"
    ).read_bytes()
    generate_gps(tmp_path / "other", per_task=PER_TASK, seed=7, tasks=["distance"])
    first = json.loads((tmp_path / "other" / "samples.jsonl").read_text().splitlines()[0])
    ours = next(s for s in gps if s.task == "distance")
    assert first["prompt"]["text"] != ours.prompt.text


def test_split_is_stratified_by_difficulty_and_region():
    rng = np.random.default_rng(0)
    strata = [f"s{i % 7}" for i in range(3400)]
    splits = assign_splits(strata, rng)
    assert collections.Counter(splits) == {"train": 2040, "dev": 340, "test": 1020}
    for s in set(strata):
        got = collections.Counter(sp for st, sp in zip(strata, splits, strict=True) if st == s)
        n = sum(got.values())
        assert abs(got["train"] - 0.6 * n) <= 1.5 and abs(got["dev"] - 0.1 * n) <= 1.5


def test_sampling_rules_hold(gps):
    cities = load_cities()
    conts = collections.Counter()
    provinces = []
    for s in gps:
        md = s.metadata.model_extra or {}
        if s.task == "place_association":
            assert md["noise_m"] in (0, 10, 50, 100, 500, 1000)
            provinces.append(md["province"])
        if s.task == "relative_position_applied":
            assert md["band_km"] in ("200-500", "500-1000", "1000-2000", "2000-3000")
        if s.task == "polygon":
            assert 3 <= md["vertices"] <= 6
        if s.task == "route_geometry":
            assert 0.5 <= md["epsilon_km"] <= 2.0 and 8 <= md["points"] <= 15
        if s.task == "distance":
            assert s.ground_truth.value >= 50 and "mi" in s.ground_truth.equivalents
        conts[s.metadata.region] += 1
    assert len(conts) == 10  # every subregion shows up
    assert sum(p is not None for p in provinces) >= 0.9 * len(provinces)
    assert len(cities) > 30_000


def _answers(model, ds):
    return {
        s.id: r.text
        for s, r in zip(
            ds, model.generate([Request(id=s.id, text="", sample=s) for s in ds]), strict=True
        )
    }


def test_oracle_scores_every_task_perfectly_and_random_near_chance(gps):
    oracle = score_run(gps.samples, _answers(OracleModel(), gps))
    for task in GPS_TASKS:
        assert oracle[task]["all"]["accuracy"] == 1.0, task
    assert oracle["gps"]["overall"]["accuracy"] == 1.0
    assert {f"terrain={k}" for k in TERRAIN_CLASSES} <= set(oracle["terrain_classification"])
    assert "noise_m=500" in oracle["place_association"]
    assert not any(k.startswith(("noise_m=", "terrain=")) for k in oracle["distance"])
    place = oracle["place_association"]["all"]
    assert place["province accuracy"] == 1.0 and place["country accuracy"] == 1.0
    rand = score_run(gps.samples, _answers(RandomModel(seed=3), gps))
    for task in (
        "relative_position_pure",
        "relative_position_applied",
        "proximity",
        "name_disambiguation",
        "terrain_classification",
        "route_geometry",
    ):
        assert 0.05 <= rand[task]["all"]["accuracy"] <= 0.5, task  # 1 in 4
    for task in (
        "distance",
        "interpolation",
        "coordinate_transformation",
        "missing_data",
        "spatial_patterns",  # a free-text name: random picks a word of the prompt
    ):
        assert rand[task]["all"]["accuracy"] <= 0.15, task


def test_cli_generate_and_score_writes_json_and_csv(tmp_path):
    r = CliRunner().invoke(
        app,
        ["gps", "generate", str(tmp_path / "g"), "--per-task", "20", "--tasks", "distance,bearing"],
    )
    assert r.exit_code == 0, r.output
    assert "GeoNames (CC BY 4.0)" in r.output and "Köppen-Geiger" in r.output
    r = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path / "g"),
            "-m",
            "oracle",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--no-progress",
        ],
    )
    assert "correct: 40/40" in r.output
    r = CliRunner().invoke(
        app,
        [
            "score",
            str(tmp_path / "g"),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--out",
            str(tmp_path / "scores"),
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "scores" / "scores.json").read_text())
    (run,) = data.values()  # keyed by run id: model, settings, dataset, scores
    assert run["model"] == "oracle" and run["settings"]["max_tokens"] == 8192  # GPSBench allows it
    assert run["scores"]["distance"]["all"]["accuracy"] == 1
    csv_text = (tmp_path / "scores" / "scores.csv").read_text()
    assert csv_text.startswith(
        "run_id,model,temperature,max_tokens,seed,dataset,task,group,metric,value"
    )
    assert f"{run['run_id']},oracle,0.0,8192,,gps-seed42,bearing,all,accuracy" in csv_text
    r = CliRunner().invoke(app, ["gps", "generate", str(tmp_path / "x"), "--tasks", "nope"])
    assert r.exit_code == 2 and "not a GPS task" in r.output


def test_continent_quotas_draw_small_sets_and_allocate_large_ones():
    from cartoqa.tasks.gps._sampling import QUOTAS, Sampler

    s = Sampler(load_cities(), np.random.default_rng(1))
    six = collections.Counter(s.continents_for(6))
    assert six == {"AF": 1, "AS": 2, "EU": 1, "NA": 1, "SA": 1}
    eight = collections.Counter(s.continents_for(8))
    assert sum(eight.values()) == 8 and eight["AS"] == 2
    draws = collections.Counter(s.continent() for _ in range(20_000))
    for k, q in QUOTAS.items():
        assert abs(draws[k] / 20_000 - q) < 0.015
    idx = s.spread(6, 100)
    assert collections.Counter(s.c.continent[i] for i in idx) == six


def test_variants_are_made_by_name_and_kept_out_of_the_track_scores(tmp_path):
    r = CliRunner().invoke(
        app,
        ["gps", "generate", str(tmp_path / "v"), "--per-task", "20", "--tasks", "polygon,variants"],
    )
    assert r.exit_code == 0, r.output
    ds = load_dataset(tmp_path / "v")
    assert {s.task for s in ds} == {"polygon", *GPS_VARIANTS}
    assert {(s.metadata.model_extra or {})["track"] for s in ds if s.task != "polygon"} == {
        "variant"
    }
    # the oracle right on the paper's task, wrong everywhere on the variants: the overall
    # score is the polygon's alone
    answers = _answers(OracleModel(), ds)
    for s in ds:
        if s.task in GPS_VARIANTS:
            answers[s.id] = "FINAL ANSWER: no idea"
    scores = score_run(ds.samples, answers)
    assert scores["gps"]["track=pure"] == {"tasks": 1, "missing": 0, "accuracy": 1.0}
    assert scores["gps"]["track=variant"]["accuracy"] == 0.0
    assert scores["gps"]["overall"]["accuracy"] == 1.0
    assert not [s for s in load_dataset(tmp_path / "v") if s.task == "bounding_box"]


def test_a_task_that_only_repeats_itself_stops_with_a_reason(tmp_path, monkeypatch):
    # a generator that can make one question only: it gives up, and writes nothing
    import dataclasses

    from cartoqa.errors import CartoqaError
    from cartoqa.records import BooleanTruth
    from cartoqa.tasks import spec as registry
    from cartoqa.tasks.gps._sampling import Draft

    same = registry.get_task("route_analysis")
    monkeypatch.setitem(  # the registry's spec, its generator replaced, for this test only
        registry._REGISTRY,
        "route_analysis",
        dataclasses.replace(
            same, generator=lambda s, n: Draft("Same?", BooleanTruth(value=True), "x", "easy")
        ),
    )
    with pytest.raises(CartoqaError, match="route_analysis: 1001 questions in a row repeated"):
        generate_gps(tmp_path / "g", per_task=10, tasks=["route_analysis"])
    assert not (tmp_path / "g").exists()


def test_options_that_read_the_same_are_refused():
    from cartoqa.errors import CartoqaError
    from cartoqa.tasks.gps._sampling import Sampler

    s = Sampler(load_cities(), np.random.default_rng(0))
    opts, letter = s.options("Paris", ["Lyon", "Nice", "Lille"])
    assert opts[letter] == "Paris" and len(set(opts.values())) == 4
    with pytest.raises(CartoqaError, match="two options read the same"):
        s.options("Franklin", ["Franklin", "Franklin", "Franklin"])
