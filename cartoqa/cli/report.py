"""``cartoqa report``: the runs of one or more datasets as tables and plots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress

from cartoqa.errors import CartoqaError

__all__ = ["report"]


def report(
    datasets: Annotated[
        list[Path], typer.Argument(help="Dataset folders; their runs are read from --runs-dir.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The folder to write the report to.")],
    runs_dir: Annotated[Path, typer.Option(help="Where the run stores are.")] = Path("runs"),
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="Only these model specs.")
    ] = None,
    bootstrap: Annotated[
        int, typer.Option(help="Resamples for the 95 % intervals (0: none).", min=0)
    ] = 1000,
    seed: Annotated[int, typer.Option(help="The resampling seed.")] = 0,
    references: Annotated[
        bool,
        typer.Option(help="Add the papers' published numbers, labelled as another dataset's."),
    ] = True,
) -> None:
    """Write a report of every run of DATASETS: per task the models side by side with 95 %
    bootstrap intervals (oracle and random rows are runs like any other), breakdowns by
    every group the task declares, unreadable answers counted apart from wrong ones, tokens
    and latency, plots, as report.md, report.html (one file, opens offline), tables.csv,
    tables.json and plots/*.png.  A dataset built with --variants adds "Paired variants":
    per task, variant and model the base and variant scores on the same questions, their
    difference with a 95 % paired bootstrap interval and a sentence saying what it shows
    (unanswerable items on lines of their own), and plots/paired.png.  The folder is
    written whole, beside, and swapped in: it holds only this report's files (a full disk
    leaves an earlier report as it was).  OUT may be new, empty or an earlier report; a
    folder with other files is refused, never emptied.  Stores are only read."""
    from cartoqa.reports import build_report

    console = Console(stderr=True)
    try:
        with Progress(console=console, transient=True) as bar:
            job = bar.add_task("reading and scoring runs", total=None)
            result = build_report(
                datasets,
                runs_dir=runs_dir,
                out=out,
                models=model,
                bootstrap=bootstrap,
                seed=seed,
                references=references,
                on_run=lambda m: bar.update(job, advance=1, description=f"scored {m}"),
            )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except OSError as exc:  # a full disk: every file is written beside, then renamed in
        typer.echo(
            f"error: cannot write the report in {out}: {exc.strerror or exc}; the files there "
            "are as they were (nothing is half written). Free some space or choose another "
            "--out, then run again",
            err=True,
        )
        raise typer.Exit(1) from None
    for msg in result.notes:
        typer.echo(msg, err=True)
    for msg in result.problems:
        typer.echo(f"error: {msg}", err=True)
    typer.echo(
        f"report of {len(result.runs)} runs in {out}: {result.files['html'].name} (open it "
        f"in a browser), {result.files['markdown'].name}, {result.files['csv'].name}, "
        f"{result.files['json'].name}, {len(result.plots)} plots in {out / 'plots'}"
    )
    if result.problems:
        raise typer.Exit(1)
