"""A report's folder holds exactly that report (issue 27, finding 5).

The case as found: a report written into the folder of an earlier report kept the other's
plots (8 plots where the report named 6).  The folder is now written whole, beside, and
swapped in; a folder that is not a cartoqa report is refused, never emptied.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from cartoqa.cli import app
from tests.cartoqa.model_data import kinds_dataset, text_dataset


def cli(*args) -> tuple[int, str]:
    r = CliRunner().invoke(app, [str(a) for a in args])
    return r.exit_code, r.output


def report(ds, runs: Path, out: Path) -> tuple[int, str]:
    return cli("report", ds.path, "--runs-dir", runs, "-o", out, "--bootstrap", "0")


def files_in(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def named_by(out: Path) -> set[str]:
    """The files the report in ``out`` names: its four outputs and the plots in tables.json
    (which report.md links, every one)."""
    doc = json.loads((out / "tables.json").read_text(encoding="utf-8"))
    md = (out / "report.md").read_text(encoding="utf-8")
    assert set(re.findall(r"\]\((plots/[^)]+)\)", md)) == set(doc["plots"])
    return {"report.md", "report.html", "tables.csv", "tables.json", *doc["plots"]}


def test_a_report_written_over_an_earlier_one_holds_only_its_own_files(tmp_path):
    maps = kinds_dataset(tmp_path / "maps")  # every kind of task: many plots
    text = text_dataset(tmp_path / "text", 6)  # one task: few plots
    runs, out = tmp_path / "runs", tmp_path / "rep"
    for ds in (maps, text):
        code, said = cli("run", ds.path, "-m", "oracle", "--runs-dir", runs, "--no-progress")
        assert code == 0, said
    code, said = report(maps, runs, out)
    assert code == 0, said
    first = files_in(out)
    assert first == named_by(out)
    code, said = report(text, runs, out)  # into the folder of the earlier report
    assert code == 0, said
    second = named_by(out)
    assert files_in(out) == second  # none of the earlier report's plots is left
    assert len(first - second) >= 3  # (it had plots this one does not)
    assert not list(tmp_path.glob(".rep.staging-*"))  # nothing left beside


def test_a_folder_that_is_not_a_report_is_refused_and_left_as_it_was(tmp_path):
    ds = text_dataset(tmp_path / "ds", 3)
    runs = tmp_path / "runs"
    code, said = cli("run", ds.path, "-m", "oracle", "--runs-dir", runs, "--no-progress")
    assert code == 0, said
    mine = tmp_path / "thesis"
    (mine / "figures").mkdir(parents=True)
    (mine / "chapter1.md").write_text("my own words")
    (mine / "figures" / "f1.png").write_bytes(b"mine")
    code, said = report(ds, runs, mine)
    said = " ".join(said.split())
    assert code == 2, said
    assert f"{mine} holds other files (chapter1.md, figures/f1.png)" in said, said
    assert "not a cartoqa report" in said and "choose a new or empty folder" in said
    assert files_in(mine) == {"chapter1.md", "figures/f1.png"}
    assert (mine / "chapter1.md").read_text() == "my own words"

    # an earlier report with a file of the user's added: refused too, naming that file
    out = tmp_path / "rep"
    assert report(ds, runs, out)[0] == 0
    (out / "notes.txt").write_text("what I saw")
    code, said = report(ds, runs, out)
    said = " ".join(said.split())
    assert code == 2 and f"{out} holds other files (notes.txt)" in said, said
    assert "move them out" in said
    assert (out / "notes.txt").read_text() == "what I saw"

    # a file where the folder should be
    (tmp_path / "afile").write_text("x")
    code, said = report(ds, runs, tmp_path / "afile")
    assert code == 2 and "is a file, not a folder" in " ".join(said.split())

    # an empty folder is fine
    (tmp_path / "empty").mkdir()
    code, said = report(ds, runs, tmp_path / "empty")
    assert code == 0, said
    assert files_in(tmp_path / "empty") == named_by(tmp_path / "empty")
