"""``cartoqa build``: sample map tasks from an OSM extract, render them, write a dataset."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cartoqa.errors import CartoqaError

__all__ = ["build"]


def build(
    out: Annotated[Path, typer.Argument(help="The dataset folder to write.")],
    extract: Annotated[
        Path | None, typer.Option(help="OSM extract (default: the embedded Helsinki one).")
    ] = None,
    tasks: Annotated[str, typer.Option(help="Comma-separated: srn, rle, mml.")] = "srn,rle,mml",
    per_task: Annotated[int, typer.Option(help="Samples per task (RLE: maps x 2 units).")] = 10,
    seed: Annotated[int, typer.Option(help="The same seed gives the same samples.")] = 0,
    carto_files: Annotated[
        Path | None, typer.Option(help="Folder with carto's patterns/ and symbols/shields/.")
    ] = None,
    dsn: Annotated[
        str | None, typer.Option(help="PostgreSQL DSN instead of the private one.")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a dataset already at OUT.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Build navigation questions (SRN, RLE, MML) with their maps from an OSM extract."""
    from cartoqa.tasks import build_dataset

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    wanted = [t.strip() for t in tasks.split(",") if t.strip()]
    console = Console()
    try:
        with console.status("sampling questions (road graph, routes, label checks)..."):
            report = build_dataset(
                out,
                extract=extract,
                tasks=wanted,
                per_task=per_task,
                seed=seed,
                carto_files=carto_files,
                dsn=dsn,
                overwrite=overwrite,
                progress=progress,
            )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    table = Table(title=f"{out}: dataset written")
    for col in ("task", "samples", "maps", "rejected (top reasons)"):
        table.add_column(col)
    for task in wanted:
        reasons = ", ".join(f"{r} {n}" for r, n in report.rejected[task].most_common(4)) or "-"
        have = report.samples.get(task, 0)
        short = f" (wanted {report.wanted[task]})" if have < report.wanted[task] else ""
        table.add_row(task, f"{have}{short}", str(report.maps[task]), reasons)
    console.print(table)
    console.print(
        "seconds: "
        + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items())
        + "\nMap data © OpenStreetMap contributors"
    )
