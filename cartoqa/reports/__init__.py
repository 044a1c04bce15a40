"""``cartoqa report``: the runs of one or more datasets as paper-style tables and plots.

    result = build_report([Path("nav"), Path("gps")], runs_dir=Path("runs"), out=Path("rep"))

- ``collect``: every run of a dataset, scored (``cartoqa score`` uses it too);
- ``tables``: per task, models side by side on the headline metrics with 95 %
  bootstrap intervals, breakdowns by every group key the task declares, answers
  right, wrong, unreadable and unanswered counted apart, and what the runs used;
- ``paired``: where the dataset has paired variants ("srn-0004@text"), each variant's
  score against its base's on the same questions, the paired difference with a 95 %
  paired bootstrap interval, and a sentence saying what it shows;
- ``people``: where some runs are people's ("human:NAME"), their pooled score, how far
  they agree (Fleiss' kappa, or pairwise agreement within tolerance) and the items they
  dispute;
- ``plots``: the PNGs (matplotlib);
- ``render``: report.md, report.html (self-contained), tables.csv, tables.json;
- ``references.toml``: the published headline numbers, shown apart and labelled as
  another dataset's.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError

from .collect import ScoredRun, score_runs
from .paired import PairedLine, paired_lines
from .people import PeopleSummary, people_summary
from .tables import run_label, task_of, task_reports, usage

__all__ = ["Report", "build_report", "load_references"]

REFERENCES = Path(__file__).with_name("references.toml")


@dataclass
class Report:
    out: Path
    files: dict[str, Path]
    plots: list[Path]
    runs: list[ScoredRun]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    paired: list[PairedLine] = field(default_factory=list)
    """The paired variants' lines (empty for a dataset without variants)."""
    people: PeopleSummary | None = None
    """The human runs' summary (None without human runs)."""


def load_references(tasks: Sequence[str]) -> list[dict[str, Any]]:
    """The published numbers for the papers whose tasks are in ``tasks``."""
    data = tomllib.loads(REFERENCES.read_text(encoding="utf-8"))
    out = []
    for name, ref in data.items():
        rows = [
            r for r in ref["rows"] if r["task"] in tasks or (r["task"] == "gps" and "gps" in tasks)
        ]
        if rows:
            out.append({"paper": name, "source": ref["source"], "rows": rows})
    return out


def build_report(
    datasets: Sequence[Path],
    *,
    runs_dir: Path,
    out: Path,
    models: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    references: bool = True,
    on_run: Callable[[str], None] | None = None,
) -> Report:
    """Score every run of ``datasets`` under ``runs_dir`` and write the report as the
    folder ``out``, whole: staged beside and swapped in (``folder.report_folder``), so it
    holds exactly this report's files.  ``out`` may be new, empty or an earlier report
    (replaced); any other folder is refused (``CartoqaError``, before any work).  ``OSError``
    (a full disk) leaves ``out`` as it was."""
    from cartoqa.stores import load_dataset
    from cartoqa.stores._files import write_atomic

    from .folder import check_report_target, report_folder
    from .plots import draw_plots
    from .render import OUTPUTS, render_outputs

    loaded = [load_dataset(d) for d in datasets]
    check_report_target(out)  # before the work: a folder of other files is refused
    runs: list[ScoredRun] = []
    problems: list[str] = []
    notes: list[str] = []
    for ds in loaded:
        found = score_runs(ds, runs_dir, models=models, on_run=on_run)
        if not found.runs:
            problems.append(
                f"no readable run of {ds.manifest.name} under {runs_dir}: run one first "
                f"(cartoqa run {ds.path} --model oracle)"
            )
        runs += found.runs
        problems += found.problems
        notes += found.notes
    if not runs:
        raise CartoqaError("; ".join(problems) or f"no runs under {runs_dir}")
    reports = task_reports(runs, n_boot=bootstrap, seed=seed)
    use: dict[str, dict[str, Any]] = {}
    for run in runs:  # a model's runs of several datasets add up
        label, u = run_label(run, runs), usage(run)
        prev = use.get(label)
        use[label] = {k: _add(prev[k], v) for k, v in u.items()} if prev else u
    paired = paired_lines(runs, n_boot=bootstrap, seed=seed)
    people = people_summary(runs, n_boot=bootstrap, seed=seed)
    plots = draw_plots(reports, runs, paired)
    tasks = sorted({task_of(t) for r in runs for t in r.scored})
    refs = load_references(tasks) if references else []
    credits = list(dict.fromkeys(c for ds in loaded for c in ds.manifest.attribution))
    names = ", ".join(ds.manifest.name for ds in loaded)
    rendered = render_outputs(
        title=f"cartoqa report: {names}",
        reports=reports,
        usage=use,
        references=refs,
        plots=plots,
        credits=credits,
        extra={
            "datasets": [
                {"name": ds.manifest.name, "samples_sha256": ds.manifest.samples_sha256}
                for ds in loaded
            ],
            "runs": [{"run_id": r.run_id, "model": r.model, "settings": r.settings} for r in runs],
            "bootstrap": {"resamples": bootstrap, "seed": seed},
            "gps": {r.model: r.scores["gps"] for r in runs if "gps" in r.scores},
        },
        paired=paired,
        people=people,
    )
    # the whole folder written beside and swapped in: it holds this report's files and no
    # other's, and a full disk (OSError) leaves an earlier report in ``out`` as it was
    with report_folder(out) as stage:
        (stage / "plots").mkdir()
        for name, data in rendered.items():
            write_atomic(stage / name, data)
        for name, png in plots.items():
            write_atomic(stage / "plots" / name, png)
    files = {kind: out / name for kind, name in OUTPUTS.items()}
    plot_files = [out / "plots" / name for name in plots]
    return Report(out, files, plot_files, runs, problems, notes, paired, people)


def _add(a: Any, b: Any) -> Any:
    """Totals add; a mean latency is kept as the first run's (it is per run)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b
