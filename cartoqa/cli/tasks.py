"""``cartoqa tasks``: every registered task, its family, track, truth kinds and metrics."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table


def tasks(
    family: str | None = typer.Option(None, help="Only this family: map or gps."),
) -> None:
    """List every registered task with its family, track, truth kinds, metrics and a line
    on what it asks."""
    from cartoqa.tasks.spec import registered_tasks

    specs = [s for s in registered_tasks().values() if family in (None, s.family)]
    if not specs:
        typer.echo(f"error: --family {family!r}: no task of that family (map or gps)", err=True)
        raise typer.Exit(2)
    table = Table(title=f"{len(specs)} tasks", show_lines=False)
    for column in ("task", "family", "track", "truth", "metrics", "what it asks"):
        table.add_column(column, overflow="fold")
    for s in specs:
        table.add_row(
            s.name,
            s.family,
            s.track,
            ", ".join(sorted(s.truth_kinds)),
            ", ".join(s.metrics),
            s.description,
        )
    Console(width=200).print(table)
