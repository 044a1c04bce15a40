"""``cartoqa dataset``: look inside dataset folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cartoqa.errors import DatasetError
from cartoqa.stores import load_dataset

app = typer.Typer(help="Inspect and validate dataset folders.", no_args_is_help=True)


@app.command()
def info(
    path: Annotated[Path, typer.Argument(help="A dataset folder (holds manifest.json).")],
    verify: Annotated[
        bool, typer.Option(help="Also check every image's bytes against the manifest's hashes.")
    ] = False,
) -> None:
    """Validate a dataset (every sample, and samples.jsonl against the manifest's hash) and
    print its counts per task and split, versions and seeds."""
    try:
        ds = load_dataset(path, verify_images=verify)
    except DatasetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    m = ds.manifest
    console = Console()
    table = Table(title=f"{m.name}: {m.total} samples (valid)")
    splits = sorted({s for c in m.counts.values() for s in c})
    table.add_column("task")
    for s in splits:
        table.add_column(s, justify="right")
    for task, c in m.counts.items():
        table.add_row(task, *(str(c.get(s, 0)) for s in splits))
    console.print(table)
    console.print("versions: " + ", ".join(f"{k} {v}" for k, v in m.versions.items() if v))
    console.print(f"seeds: {m.seeds}   samples sha256: {m.samples_sha256[:16]}…")
    if verify:
        console.print(f"images: {len(m.images_sha256)} verified against the manifest")
    for task, missing in m.shortfall.items():
        console.print(f"shortfall: {task} has {missing} fewer samples than were asked for")
    for task, inputs in m.inputs.items():
        console.print(f"{task} made from: " + json.dumps(inputs, ensure_ascii=False))
    if m.variants:
        made = m.variants.get("made", {})
        console.print(
            "paired variants: "
            + ", ".join(f"{v} {sum(made.get(v, {}).values())}" for v in m.variants.get("asked", []))
            + " samples (ids end with @<variant>)"
        )
    for warning in m.warnings:
        console.print(f"[bold red]warning[/]: {warning}", markup=True)
    for credit in m.attribution:
        console.print(credit)
