"""The main job: dataset, baseline run, resume, score."""

import json

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.demo import answer_flat_earth, run_demo
from cartoqa.errors import CartoqaError
from cartoqa.geodesy import distance_km
from cartoqa.stores import load_dataset


def test_demo_builds_runs_scores_and_resumes(tmp_path):
    calls = []

    def counting(sample):
        calls.append(sample.id)
        return answer_flat_earth(sample)

    r = run_demo(tmp_path, n=12, seed=5, answer=counting)
    ds = load_dataset(tmp_path / "dataset")
    assert len(ds) == 12 and r.answered_now == 12 and len(calls) == 12
    for s in ds:
        md = s.metadata.model_extra
        assert s.ground_truth.value == pytest.approx(
            distance_km(md["lat1"], md["lon1"], md["lat2"], md["lon2"]), abs=1e-3
        )
        assert s.ground_truth.value >= 50
    bands = r.accuracy_by_band
    assert sum(t for _, t in bands.values()) == 12 and set(bands) == {
        "50-500 km",
        "500-2000 km",
        "2000+ km",
    }
    # the flat-earth approximation is good for near pairs
    assert bands["50-500 km"][0] == bands["50-500 km"][1]
    assert 0 < r.one_minus_mape <= 1

    again = run_demo(tmp_path, n=12, seed=5, answer=counting)
    assert again.answered_now == 0 and again.resumed == 12 and len(calls) == 12
    assert again.accuracy == r.accuracy


def test_demo_resumes_after_an_interruption(tmp_path):
    def failing_after_four(sample, seen=[]):  # noqa: B006 - deliberate call counter
        seen.append(sample.id)
        if len(seen) > 4:
            raise KeyboardInterrupt
        return answer_flat_earth(sample)

    with pytest.raises(CartoqaError, match="interrupted"):
        run_demo(tmp_path, n=9, seed=1, answer=failing_after_four)
    r = run_demo(tmp_path, n=9, seed=1)
    assert r.resumed == 4 and r.answered_now == 5
    ids = [json.loads(x)["sample_id"] for x in r.run_path.read_text().splitlines()]
    assert sorted(ids) == sorted({s.id for s in r.dataset}) and len(ids) == 9


def test_demo_command_prints_scores(tmp_path):
    result = CliRunner().invoke(
        app, ["demo", "--out", str(tmp_path), "--n", "6", "--no-map", "--no-navigation"]
    )
    assert result.exit_code == 0, result.output
    assert "1 - MAPE" in result.output and "GeoNames" in result.output
    # the GPS part: every task, the oracle perfect
    oracle_all = next(
        ln for ln in result.output.splitlines() if ln.strip("│ ").startswith("overall")
    )
    assert oracle_all.split("│")[2].strip() == "1.000"
    assert (tmp_path / "gps-20" / "manifest.json").is_file()
