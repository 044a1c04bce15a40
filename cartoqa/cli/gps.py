"""``cartoqa gps``: the text-only GPS track."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress

from cartoqa.errors import CartoqaError

from ._options import PromptsFile

app = typer.Typer(help="The text-only GPS tasks (after GPSBench).", no_args_is_help=True)


@app.command()
def generate(
    out: Annotated[Path, typer.Argument(help="The dataset folder to write.")],
    per_task: Annotated[int, typer.Option(help="Samples per task (GPSBench: 3,400).")] = 3400,
    seed: Annotated[
        int, typer.Option(help="GPSBench uses 42; the same seed, the same bytes.")
    ] = 42,
    tasks: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated task names (default GPSBench's 17 and the missing-data "
            "probe); also cartoqa's variants by name (`cartoqa tasks` lists them, track "
            "'variant'), or 'variants' for all of them."
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a dataset already at OUT.")] = False,
    prompts: PromptsFile = None,
) -> None:
    """Generate every GPS task from GeoNames cities, split 60/10/30 per task."""
    from cartoqa.tasks.gps import GPS_CREDITS, GPS_TASKS, GPS_VARIANTS, generate_gps

    wanted = [t.strip() for t in tasks.split(",")] if tasks else list(GPS_TASKS)
    if "variants" in wanted:
        at = wanted.index("variants")
        wanted[at : at + 1] = [v for v in GPS_VARIANTS if v not in wanted]
    console = Console()
    try:
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task("generating", total=len(wanted))
            report = generate_gps(
                out,
                per_task=per_task,
                seed=seed,
                tasks=wanted,
                overwrite=overwrite,
                on_task=lambda task, n: progress.advance(bar),
                prompts=prompts,
            )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except OSError as exc:  # a full disk, a folder removed under us: the old dataset stays
        typer.echo(f"error: writing the dataset failed: {exc}; {out} is as it was", err=True)
        raise typer.Exit(1) from None
    total = sum(report.samples.values())
    console.print(
        f"{out}: {total} samples, {len(report.samples)} tasks, "
        f"{report.seconds['generating']:.1f} s. {GPS_CREDITS}"
    )
