"""``cartoqa score``: each task's metrics for the runs of a dataset."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cartoqa.errors import CartoqaError
from cartoqa.stores._files import json_text

__all__ = ["rich_table", "score"]


def score(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder (holds manifest.json).")],
    runs_dir: Annotated[Path, typer.Option(help="Where the run stores are.")] = Path("runs"),
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="Only these model specs.")
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            help="cartoqa (correct), or original: the published CartoMapQA scorer's "
            "behaviour, defects included, to compare with the paper."
        ),
    ] = "cartoqa",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    out: Annotated[
        Path | None, typer.Option(help="Also write scores.json and scores.csv to this folder.")
    ] = None,
    rescore: Annotated[
        bool,
        typer.Option(
            "--rescore", help="Score every response afresh, even where stored scores are fresh."
        ),
    ] = False,
) -> None:
    """Score every run of DATASET found under --runs-dir, task by task.

    Runs are told apart by run id (dataset, model and settings): two runs of one
    model with other settings are scored side by side.  Stores are only read,
    never changed.  Each run's per-sample scores are kept beside its store
    (<store>.scores-<key>.jsonl) and read from there while the store, cartoqa's
    version, the mode and the tasks' scorer versions are unchanged (--rescore:
    score afresh); a runs folder that cannot be written only means they are
    scored afresh each time.  A store or meta.json that cannot be read is
    reported and left out (exit status 1); the others are still scored."""
    from cartoqa.reports.collect import score_runs
    from cartoqa.stores import ensure_writable_folder, load_dataset

    if mode not in ("cartoqa", "original"):
        typer.echo(f"error: --mode {mode!r} is not 'cartoqa' or 'original'", err=True)
        raise typer.Exit(2)
    try:
        ds = load_dataset(dataset)
        if out is not None:
            ensure_writable_folder(out, what="scores.json and scores.csv")
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    found = score_runs(ds, runs_dir, models=model, mode=mode, rescore=rescore)
    notes, problems = found.notes, found.problems
    runs = [r.summary() for r in found.runs]
    for msg in notes:
        typer.echo(msg, err=True)
    for msg in problems:
        typer.echo(f"error: {msg}", err=True)
    if not runs:
        typer.echo(
            f"error: no readable run of {ds.manifest.name} under {runs_dir}; "
            f"run one first: cartoqa run {dataset} --model oracle",
            err=True,
        )
        raise typer.Exit(2)
    if out is not None:
        try:
            _write(out, runs)
        except OSError as exc:  # a full disk: the files there stay as they were
            typer.echo(
                f"error: cannot write scores.json and scores.csv in {out}: "
                f"{exc.strerror or exc}; the files there are as they were (nothing is half "
                "written). Free some space or choose another --out, then run again",
                err=True,
            )
            raise typer.Exit(1) from None
    if as_json:
        typer.echo(json_text({r["run_id"]: r for r in runs}, indent=1, default=str))
    else:
        console = Console()
        for r in runs:
            label = f"{r['model']} [{_settings_text(r['settings'])}] run {r['run_id']}"
            for task, table in r["scores"].items():
                suffix = f" · mode {mode}" if mode != "cartoqa" else ""
                console.print(rich_table(f"{label} · {task}{suffix}", table))
            # answers the published scorers raise on ("original" mode), in any task
            crashed = sum(t.get("all", {}).get("crashed", 0) for t in r["scores"].values())
            if crashed:
                console.print(_CRASH_NOTE.format(n=int(crashed)))
        for credit in ds.manifest.attribution:
            console.print(credit)
    if problems:
        raise typer.Exit(1)


_CRASH_NOTE = (
    "{n} answer(s) would crash the published scorer (its evaluate_*.py); scored here as the "
    "task's 'original' scorer says (counted in 'crashed')"
)


def _settings_text(settings: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(settings.items()) if v is not None)


SETTINGS_COLUMNS = ("temperature", "max_tokens", "seed")


def _write(folder: Path, runs: list[dict]) -> None:
    """scores.json (run id -> model, settings, dataset, task -> group -> metric; strict JSON,
    a value that is not a number written as null) and scores.csv (one value a row, each row
    with its run id, model and settings), both written beside and renamed in: a failure (a
    full disk) raises ``OSError`` and leaves the files there as they were."""
    import csv
    import io

    from cartoqa.stores._files import write_files_atomic

    folder.mkdir(parents=True, exist_ok=True)
    doc = json_text({r["run_id"]: r for r in runs}, indent=1, default=str)
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(
        ["run_id", "model", *SETTINGS_COLUMNS, "dataset", "task", "group", "metric", "value"]
    )
    for r in runs:
        settings = [r["settings"].get(k) for k in SETTINGS_COLUMNS]
        for task, table in r["scores"].items():
            for group, values in table.items():
                for metric, value in values.items():
                    w.writerow(
                        [r["run_id"], r["model"], *settings, r["dataset"], task, group, metric,
                         value]
                    )  # fmt: skip
    write_files_atomic(
        {
            folder / "scores.json": doc.encode("utf-8"),
            folder / "scores.csv": f.getvalue().encode("utf-8"),
        }
    )


def rich_table(title: str, table: dict) -> Table:
    """Group -> metric -> value as a table, a column for each metric any group has."""
    metrics = list(dict.fromkeys(m for values in table.values() for m in values))
    t = Table(title=title)
    t.add_column("group")
    for m in metrics:
        t.add_column(m, justify="right")
    for group, values in table.items():
        t.add_row(group, *(_fmt(values.get(m)) for m in metrics))
    return t


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.3f}"
    return str(v)
