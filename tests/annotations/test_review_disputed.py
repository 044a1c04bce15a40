"""The review queue's filter "disputed by people", over real HTTP: ``cartoqa review DATASET
--runs-dir RUNS`` scores the people's runs there ("human:NAME" run stores written here) and
offers the filter; ``?disputed=1`` lists only the samples most of their people (at least
two) answered wrong.  The dataset and runs are those of tests/cartoqa/test_report_people.py:
of its six samples only mml-002 is disputed (bob and carol of three answered it wrong)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cartoqa.cli import app
from tests.annotations.review_server import review_server
from tests.cartoqa.test_report_people import people_dataset, write_runs

IDS = [f"{t}-{i:03d}" for t in ("mml", "rle") for i in range(3)]
CHECKBOX = 'name="disputed"'


@pytest.fixture(scope="module")
def crowd(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("disputed")
    ds = people_dataset(tmp / "ds")
    write_runs(ds, tmp / "runs")
    return tmp / "ds", tmp / "runs"


def _listed(body: bytes) -> list[str]:
    text = body.decode()
    return [sid for sid in IDS if f">{sid}<" in text]


def test_the_filter_lists_only_the_samples_people_disputed(crowd):
    ds, runs = crowd
    with review_server(ds, "--runs-dir", str(runs)) as server:
        assert any("1 sample(s) disputed by people" in line for line in server.lines)
        status, _, body = server.request("GET", "/")
        assert status == 200
        assert CHECKBOX in body.decode()
        assert _listed(body) == IDS
        status, _, body = server.request("GET", "/?disputed=1")
        assert status == 200
        assert _listed(body) == ["mml-002"]
        assert "1 samples match." in body.decode()
        assert "checked" in body.decode().split(CHECKBOX, 1)[1].split(">", 1)[0]
        # combined with another filter: rle has no disputed sample
        _, _, body = server.request("GET", "/?disputed=1&task=rle")
        assert _listed(body) == []
        assert "0 samples match." in body.decode()


def test_without_runs_the_filter_is_not_offered(crowd):
    ds, _ = crowd
    with review_server(ds) as server:
        _, _, body = server.request("GET", "/")
        assert CHECKBOX not in body.decode()
        assert _listed(body) == IDS
        _, _, body = server.request("GET", "/?disputed=1")
        assert "No sample has disputed &#39;1&#39;." in body.decode()


def test_a_missing_runs_dir_is_a_clear_error(crowd, tmp_path):
    ds, _ = crowd
    result = CliRunner().invoke(
        app, ["review", "serve", str(ds), "--runs-dir", str(tmp_path / "nope")]
    )
    assert result.exit_code == 2
    assert f"--runs-dir {tmp_path / 'nope'}: no such folder" in result.output
