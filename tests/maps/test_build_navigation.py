"""cartoqa build on real extracts: datasets of every navigation task, the oracle scores 1."""

import json

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.models import GenerationSettings, load_model
from cartoqa.runner import open_run_store, run_model
from cartoqa.scoring import score_run
from cartoqa.stores import load_dataset
from cartoqa.tasks import build_dataset

EXTRACTS = ["monaco.osm.pbf", "london-moorgate.osm.pbf", "sydney-cbd.osm.pbf"]


@pytest.fixture(scope="module")
def built(engine_for, tmp_path_factory):
    out = {}
    for name in EXTRACTS:
        folder = tmp_path_factory.mktemp(name.split(".")[0])
        report = build_dataset(
            folder / "ds", engine=engine_for(name), per_task=2, seed=5, progress=False
        )
        out[name] = (report, load_dataset(folder / "ds"), folder)
    return out


def answers(ds, spec, runs):
    model = load_model(spec)
    with open_run_store(runs, ds, spec, GenerationSettings()) as store:
        run_model(ds, model, store)
        return {k: r.response for k, r in store.latest().items()}


@pytest.mark.parametrize("name", EXTRACTS)
def test_each_task_builds_and_the_oracle_scores_perfectly(built, name):
    report, ds, folder = built[name]
    assert report.samples == {"srn": 2, "rle": 2, "mml": 2}, report.rejected
    assert ds.manifest.extract_hashes and "© OpenStreetMap contributors" in ds.manifest.attribution
    for s in ds:
        assert (ds.path / s.prompt.images[0]).stat().st_size > 50_000  # a real map
        assert s.provenance.extract_hash and s.provenance.style_version == "5.7.0"
    oracle = answers(ds, "oracle", folder / "runs")
    scores = score_run(ds.samples, oracle)
    assert scores["srn"]["all"]["SR2"] == 1 and scores["srn"]["all"]["connectivity"] == 1
    assert scores["srn"]["all"]["aSA"] == 1
    # the oracle writes the list the question asks for, which the published parser reads too
    published = score_run(ds.samples, oracle, mode="original")["srn"]["all"]
    assert (published["SR2"], published["aSA"], published["connectivity"]) == (1, 1, 1)
    assert scores["mml"]["all"]["accuracy"] == 1
    assert scores["rle"]["all m"]["mape"] == 0 and scores["rle"]["all ft"]["mape"] == 0


def test_random_scores_near_zero(built):
    _, ds, folder = built["monaco.osm.pbf"]
    scores = score_run(ds.samples, answers(ds, "random", folder / "runs"))
    assert scores["srn"]["all"]["SR2"] == 0 and scores["srn"]["all"]["connectivity"] == 0
    assert scores["mml"]["all"]["accuracy"] == 0
    assert scores["rle"]["all m"]["mape"] > 0.05


def test_ground_truth_agrees_with_the_map(built):
    _, ds, _ = built["monaco.osm.pbf"]
    for s in ds:
        if s.task == "mml":
            net_names = {s.ground_truth.road_1, s.ground_truth.road_2}
            assert len(net_names) == 2
        if s.task == "srn":
            truth = s.ground_truth
            roads = set(truth.steps[2:-1:2])
            assert roads <= set(truth.network.roads)  # every road of the route is on the map
            assert str(truth.network.origin) in truth.network.nodes
        if s.task == "rle":
            assert s.metadata.unit in ("m", "ft") and s.metadata.difficulty in ("simple", "complex")


def test_the_same_seed_gives_the_same_samples(built, engine_for, tmp_path):
    _, ds, _ = built["monaco.osm.pbf"]
    build_dataset(
        tmp_path / "again", engine=engine_for("monaco.osm.pbf"), per_task=2, seed=5, progress=False
    )
    again = load_dataset(tmp_path / "again")
    assert again.manifest.samples_sha256 == ds.manifest.samples_sha256
    other = build_dataset(
        tmp_path / "other",
        engine=engine_for("monaco.osm.pbf"),
        per_task=2,
        seed=6,
        progress=False,
        tasks=["mml"],
    )
    assert other.samples == {"mml": 2}
    assert load_dataset(tmp_path / "other").manifest.samples_sha256 != ds.manifest.samples_sha256


def test_score_command_prints_each_task(built, monkeypatch):
    _, ds, folder = built["monaco.osm.pbf"]
    answers(ds, "oracle", folder / "runs")
    result = CliRunner().invoke(
        app, ["score", str(ds.path), "--runs-dir", str(folder / "runs"), "--json", "-m", "oracle"]
    )
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.output).values()
    assert run["model"] == "oracle" and set(run["scores"]) == {"srn", "rle", "mml"}
    result = CliRunner().invoke(app, ["score", str(ds.path), "--runs-dir", str(folder / "none")])
    assert result.exit_code == 2 and "no readable run of" in result.output


def test_unknown_tasks_and_counts_are_refused(tmp_path):
    result = CliRunner().invoke(app, ["build", str(tmp_path / "x"), "--tasks", "srn,bogus"])
    assert result.exit_code == 2 and "bogus" in result.output


def test_one_build_makes_map_and_gps_tasks_each_as_it_would_alone(engine_for, tmp_path):
    from cartoqa.tasks.gps import generate_gps

    mixed = build_dataset(
        tmp_path / "mixed",
        engine=engine_for("monaco.osm.pbf"),
        tasks=["mml", "distance"],
        per_task=10,
        seed=5,
        progress=False,
    )
    assert mixed.samples == {"mml": 10, "distance": 10}
    alone = build_dataset(
        tmp_path / "mml", engine=engine_for("monaco.osm.pbf"), tasks=["mml"], per_task=10, seed=5
    )
    generate_gps(tmp_path / "gps", per_task=10, seed=5, tasks=["distance"])
    lines = (tmp_path / "mixed" / "samples.jsonl").read_text().splitlines()
    mml = (tmp_path / "mml" / "samples.jsonl").read_text().splitlines()
    gps = (tmp_path / "gps" / "samples.jsonl").read_text().splitlines()
    assert lines == mml + gps  # each task's samples byte for byte as built alone
    assert alone.samples == {"mml": 10}
    manifest = json.loads((tmp_path / "mixed" / "manifest.json").read_text())
    assert manifest["name"].startswith("cartoqa-monaco") and manifest["extract_hashes"]
    assert any("OpenStreetMap" in a for a in manifest["attribution"])
    assert any("GeoNames" in a for a in manifest["attribution"])
    ds = load_dataset(tmp_path / "mixed")
    scores = score_run(ds.samples, answers(ds, "oracle", tmp_path / "runs"))
    assert scores["mml"]["all"]["accuracy"] == 1 and scores["distance"]["all"]["accuracy"] == 1


def test_build_cli_takes_gps_tasks_alone(tmp_path):
    r = CliRunner().invoke(
        app, ["build", str(tmp_path / "g"), "--tasks", "bearing", "--per-task", "10", "--seed", "3"]
    )
    assert r.exit_code == 0, r.output
    assert "GeoNames" in r.output and "OpenStreetMap" not in r.output
    from cartoqa.tasks.gps import generate_gps

    generate_gps(tmp_path / "same", per_task=10, seed=3, tasks=["bearing"])
    assert (tmp_path / "g" / "samples.jsonl").read_bytes() == (
        tmp_path / "same" / "samples.jsonl"
    ).read_bytes()
    r = CliRunner().invoke(app, ["build", str(tmp_path / "x"), "--tasks", "bearing,nope"])
    assert r.exit_code == 2 and "nope" in r.output and "srn" in r.output
    r = CliRunner().invoke(
        app, ["build", str(tmp_path / "y"), "--tasks", "bearing", "--per-task", "5"]
    )
    assert r.exit_code == 2 and "at least 10" in r.output


@pytest.mark.parametrize("name", EXTRACTS)
def test_srn_samples_pass_the_checks_of_issue_26(built, engine_for, cache, name):
    """No SRN sample of a real build has a near-tie or a leg the drawing contradicts, none of
    its markers stands on a dead end the extract's cut made, and no pair is asked twice."""
    from maps.drawn_roads import ARROWS_PX, HIDDEN_PX, DrawnRoads
    from maps.roads import load_road_graph
    from maps.routes import near_tie, route_from_nodes

    _, ds, _ = built[name]
    roads = load_road_graph(engine_for(name).extract, cache=cache)
    drawn = DrawnRoads(roads.graph)
    pairs = set()
    for s in ds:
        if s.task != "srn":
            continue
        nodes = s.ground_truth.nodes
        route = route_from_nodes(roads.graph, nodes)
        assert list(route.steps) == list(s.ground_truth.steps)
        assert near_tie(roads.graph, route) is None
        assert drawn.hidden_px(route.edges, s.metadata.zoom) < HIDDEN_PX
        assert drawn.opposed_px(route.edges, s.metadata.zoom) < ARROWS_PX
        assert not roads.clip_end(nodes[0]) and not roads.clip_end(nodes[-1])
        pair = frozenset((nodes[0], nodes[-1]))
        assert pair not in pairs
        pairs.add(pair)


@pytest.mark.parametrize("name", ["monaco.osm.pbf", "sydney-cbd.osm.pbf"])
def test_the_release_layout_round_trip_of_a_built_dataset(built, name, tmp_path):
    """export --to cartomapqa of SRN, RLE and MML built from an extract, then import-release:
    the same samples; the published arithmetic the same both ways, oracle and random runs."""
    from tests.release.roundtrip import check_round_trip

    _, ds, _ = built[name]
    runs = tmp_path / "runs"
    answers(ds, "oracle", runs)
    answers(ds, "random", runs)
    check_round_trip(ds, runs, tmp_path)
