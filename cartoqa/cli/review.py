"""``cartoqa review``: people's decisions on ground truth, and the reviewed datasets made
from them (``annotations``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from cartoqa.errors import CartoqaError


class _ServeByDefault(TyperGroup):
    """``cartoqa review DATASET`` is ``cartoqa review serve DATASET``: an argument that
    names no subcommand starts the review tool on it (a dataset folder named like a
    subcommand is written ./export)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["serve", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_ServeByDefault,
    help="Review ground truth in a browser (cartoqa review DATASET), export the reviewed "
    "dataset, or review in Label Studio.",
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
def serve(
    dataset: Annotated[Path, typer.Argument(help="The dataset to review.")],
    store: StoreOption = None,
    required: RequiredOption = 1,
    host: Annotated[
        str,
        typer.Option(
            help="The address to listen on. The default serves this machine only; another "
            "(0.0.0.0) shares the tool on your network: anyone with the printed address can "
            "change decisions."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port (0: any free one).")] = 8765,
    reviewer: Annotated[
        str,
        typer.Option(
            help="The name decisions are made under until a reviewer writes theirs "
            "(default: your user name when serving this machine only)."
        ),
    ] = "",
    export_to: Annotated[
        Path | None,
        typer.Option(help="A folder the tool's Export button writes the reviewed dataset to."),
    ] = None,
    runs_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where the run stores are: people's answers there ('cartoqa answer') add "
            "the filter 'disputed by people' (samples most of their people answered wrong)."
        ),
    ] = None,
) -> None:
    """Start the review tool on DATASET: a local web app where you accept, correct or
    reject each sample's ground truth, one at a time, with its audit drawing.  Prints the
    address to open (with its token); stop it with Ctrl-C: every decision is on disk as
    soon as it is made."""
    import getpass

    from annotations.server import loopback, serve

    disputed: set[str] | None = None
    if runs_dir is not None:
        try:
            disputed = _disputed(dataset, runs_dir)
        except CartoqaError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"{len(disputed)} sample(s) disputed by people (filter 'disputed by people')")

    if not reviewer and loopback(host):
        try:
            reviewer = getpass.getuser()
        except (KeyError, OSError):
            reviewer = ""
    try:
        serve(
            dataset,
            store_path(dataset, store),
            host=host,
            port=port,
            required=required,
            reviewer=reviewer,
            export_dir=export_to,
            echo=lambda line: typer.echo(line, err=line.startswith("warning")),
            disputed=disputed,
        )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _disputed(dataset: Path, runs_dir: Path) -> set[str]:
    """The ids of DATASET's samples people disputed, from the human runs under
    ``runs_dir`` (``cartoqa.reports.people.disputed_ids``)."""
    from cartoqa.reports.collect import score_runs
    from cartoqa.reports.people import disputed_ids
    from cartoqa.stores import load_dataset

    if not runs_dir.is_dir():
        raise CartoqaError(
            f"--runs-dir {runs_dir}: no such folder; give the folder 'cartoqa run' and "
            "'cartoqa answer' wrote their runs to"
        )
    return disputed_ids(score_runs(load_dataset(dataset), runs_dir).runs)


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
        with DecisionStore.open(path, ds, required=required, read_only=True) as decisions:
            manifest = export_reviewed(
                ds, decisions, out, overwrite=overwrite, only_reviewed=only_reviewed
            )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    r = manifest.review
    typer.echo(
        f"{out}: {r['exported']} of {r['samples']} samples written; reviewed {r['reviewed']} "
        f"(accepted {r['accepted']}, corrected {r['corrected']}, rejected {r['rejected']}, "
        f"disputed {r['disputed']}); {r['decisions']} decisions in {out / r['decisions_file']}"
    )
    if r.get("truth changed"):
        typer.echo(
            f"{r['truth changed']} samples' truths changed in a rebuild since they were "
            "reviewed: exported with the new truth as 'truth changed'; review them again"
        )


@app.command(name="label-studio-export")
def label_studio_export(
    dataset: Annotated[Path, typer.Argument(help="The dataset to review in Label Studio.")],
    out: Annotated[Path, typer.Argument(help="The tasks file to write (JSON).")],
    store: StoreOption = None,
) -> None:
    """Write DATASET's samples as Label Studio tasks, the current truth as each one's
    prediction, and the labelling interface beside them (OUT with .label-config.xml)."""
    from annotations.decisions import DecisionStore
    from annotations.label_studio import LABEL_CONFIG, write_tasks
    from cartoqa.stores import load_dataset

    try:
        ds = load_dataset(dataset)
        path = store_path(dataset, store)
        if path.exists():
            with DecisionStore.open(path, ds, read_only=True) as decisions:
                n = write_tasks(ds, decisions, out)
        else:  # nothing decided yet: a store made now, empty
            with DecisionStore.open(path, ds) as decisions:
                n = write_tasks(ds, decisions, out)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    config = out.with_suffix(".label-config.xml")
    config.write_text(LABEL_CONFIG, encoding="utf-8")
    typer.echo(f"{n} tasks in {out}; the labelling interface in {config}.")
    typer.echo(setup_text(ds.path.resolve(), out.resolve(), config.resolve()))


def setup_text(dataset: Path, tasks: Path, config: Path) -> str:
    """The Label Studio set-up for tasks written from ``dataset``: the images are served by
    Label Studio's local files, which it serves only from a Local files storage."""
    return "\n".join(
        [
            "Label Studio set-up (the images are served from this machine's files):",
            "  1. start Label Studio with LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED=true and "
            f"LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT={dataset.parent}",
            f"  2. create a project; Settings > Labeling Interface > Code: paste {config}",
            "  3. Settings > Cloud Storage > Add Source Storage > Local files, absolute local "
            f"path {dataset / 'images'}; Add Storage, and do not sync it (the tasks come from "
            "the file below; the storage lets Label Studio serve their images)",
            f"  4. Import: upload {tasks}",
            "  5. when done: Export > JSON (or JSON_MIN), then "
            f"cartoqa review label-studio-import {dataset} EXPORT.json",
        ]
    )


@app.command(name="label-studio-import")
def label_studio_import(
    dataset: Annotated[Path, typer.Argument(help="The dataset the tasks came from.")],
    export_file: Annotated[Path, typer.Argument(help="Label Studio's JSON export.")],
    store: StoreOption = None,
    reviewer: Annotated[
        str, typer.Option(help="The reviewer of annotations that name no annotator.")
    ] = "label-studio",
) -> None:
    """Store the completed annotations of a Label Studio export (JSON or JSON_MIN) as
    decisions.  The file is checked whole first: when any task cannot be imported, every
    such task is named and nothing is stored.  A sample decided here since the tasks were
    exported is a conflict and is left as it is; an annotation imported before is not stored
    twice.  Exit status 1 when some annotations could not be read, were refused or were in
    conflict."""
    from annotations.decisions import DecisionStore
    from annotations.label_studio import read_annotations
    from cartoqa.stores import load_dataset

    try:
        ds = load_dataset(dataset)
        with DecisionStore.open(store_path(dataset, store), ds) as decisions:
            report = read_annotations(ds, decisions, export_file, reviewer=reviewer)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    # plain text: sample ids and reasons come from the file ("[/bold]" is no markup here)
    if not report.stored:
        typer.echo(
            f"nothing was stored: {len(report.errors)} tasks of {export_file} cannot be "
            "imported (named below); fix or remove them and import the file again"
        )
    typer.echo(
        f"{report.decisions} decisions stored; {report.already} already imported; "
        f"{report.skipped} tasks not annotated; {len(report.conflicts)} in conflict; "
        f"{len(report.errors)} unreadable"
    )
    for sid in report.conflicts:
        typer.echo(f"conflict: {sid} was decided in cartoqa after the export; left as it is")
    for why in report.errors:
        typer.echo(f"unreadable: {why}")
    for why in report.warnings:
        typer.echo(f"warning: {why}")
    if report.conflicts or report.errors:
        raise typer.Exit(1)
