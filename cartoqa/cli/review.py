"""``cartoqa review``: people's decisions on ground truth, and the reviewed datasets made
from them (``annotations``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cartoqa.errors import CartoqaError

app = typer.Typer(
    help="Review ground truth: export a reviewed dataset from the decisions made on it.",
    no_args_is_help=True,
)

#: where a dataset's decisions are kept unless --store says otherwise
STORE_NAME = "review.sqlite"

StoreOption = Annotated[
    Path | None,
    typer.Option(help=f"The decisions file (default: DATASET/{STORE_NAME})."),
]
RequiredOption = Annotated[
    int, typer.Option(help="Agreeing reviews a sample needs to count as reviewed.")
]


def store_path(dataset: Path, store: Path | None) -> Path:
    """The decisions file of ``dataset``: ``store`` or ``DATASET/review.sqlite``."""
    return store if store is not None else dataset / STORE_NAME


@app.command()
def export(
    dataset: Annotated[Path, typer.Argument(help="The dataset that was reviewed.")],
    out: Annotated[Path, typer.Argument(help="The folder to write the reviewed dataset to.")],
    store: StoreOption = None,
    required: RequiredOption = 1,
    only_reviewed: Annotated[
        bool,
        typer.Option(help="Leave out the samples no review (or not enough agreeing) decided."),
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace a dataset already at OUT.")] = False,
) -> None:
    """Write DATASET as reviewed to OUT: rejected samples left out, corrections applied,
    every decision kept in OUT/review.jsonl and the review's statistics in the manifest.
    OUT is a dataset like any other ('cartoqa run', 'score', 'audit' take it)."""
    from annotations.decisions import DecisionStore
    from annotations.export import export_reviewed
    from cartoqa.stores import load_dataset

    path = store_path(dataset, store)
    try:
        ds = load_dataset(dataset)
        if not path.is_file():
            raise CartoqaError(
                f"no review store at {path}: review the dataset first, or give --store FILE"
            )
        with DecisionStore.open(path, ds, required=required) as decisions:
            manifest = export_reviewed(
                ds, decisions, out, overwrite=overwrite, only_reviewed=only_reviewed
            )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    r = manifest.review
    Console().print(
        f"{out}: {r['exported']} of {r['samples']} samples written; reviewed {r['reviewed']} "
        f"(accepted {r['accepted']}, corrected {r['corrected']}, rejected {r['rejected']}, "
        f"disputed {r['disputed']}); {r['decisions']} decisions in {out / r['decisions_file']}"
    )
