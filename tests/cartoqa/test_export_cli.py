"""``cartoqa export --to FORMAT``: every format the command names writes its export, and
refuses to write over one without --overwrite (each format's own tests check its content)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.cli.export import FORMATS
from tests.cartoqa.model_data import kinds_dataset

MARKERS = {
    "hf": "README.md",
    "inspect": "cartoqa_tasks.py",
    "vlmevalkit": "cartoqa_vlmeval.py",
    "lmms-eval": "utils.py",
    "cartomapqa": "Dataset/CartoMapQA/MapNavigation/road_dict/000.json",
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_format_writes_and_keeps_an_export_without_overwrite(tmp_path, fmt):
    kinds_dataset(tmp_path / "ds")
    out = tmp_path / "out"
    runner = CliRunner()
    r = runner.invoke(app, ["export", str(tmp_path / "ds"), str(out), "--to", fmt])
    assert r.exit_code == 0, r.output
    assert (out / MARKERS[fmt]).is_file() and "OpenStreetMap contributors" in r.output
    before = sorted(p.name for p in out.rglob("*"))
    again = runner.invoke(app, ["export", str(tmp_path / "ds"), str(out), "--to", fmt])
    assert again.exit_code == 2 and "overwrite" in again.output
    assert sorted(p.name for p in out.rglob("*")) == before
    r = runner.invoke(app, ["export", str(tmp_path / "ds"), str(out), "--to", fmt, "--overwrite"])
    assert r.exit_code == 0, r.output
