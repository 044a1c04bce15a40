"""``cartoqa score``: each task's metrics for the runs of a dataset."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cartoqa.errors import CartoqaError

__all__ = ["score", "score_release"]


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
) -> None:
    """Score every run of DATASET found under --runs-dir, task by task."""
    from cartoqa.stores import RunStore, load_dataset
    from evaluators.scoring import score_run

    if mode not in ("cartoqa", "original"):
        typer.echo(f"error: --mode {mode!r} is not 'cartoqa' or 'original'", err=True)
        raise typer.Exit(2)
    try:
        ds = load_dataset(dataset)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    runs = []
    for meta_path in sorted(Path(runs_dir).glob("*.meta.json")):
        meta = json.loads(meta_path.read_text())
        if meta.get("dataset_sha256") != ds.manifest.samples_sha256:
            continue
        if model and meta["model"] not in model:
            continue
        store = RunStore(meta_path.with_name(meta_path.name.replace(".meta.json", ".jsonl")))
        latest = {k: r.response for k, r in store.latest().items()}
        store.close()
        runs.append((meta["model"], score_run(ds.samples, latest, mode=mode)))  # type: ignore[arg-type]
    if not runs:
        typer.echo(
            f"error: no run of {ds.manifest.name} under {runs_dir}; "
            f"run one first: cartoqa run {dataset} --model oracle",
            err=True,
        )
        raise typer.Exit(2)
    if out is not None:
        _write(out, runs)
    if as_json:
        typer.echo(json.dumps({m: s for m, s in runs}, indent=1, default=str))
        return
    console = Console()
    for name, scores in runs:
        for task, table in scores.items():
            suffix = f" · mode {mode}" if mode != "cartoqa" else ""
            console.print(_rich_table(f"{name} · {task}{suffix}", table))
    for credit in ds.manifest.attribution:
        console.print(credit)


def _write(folder: Path, runs: list) -> None:
    """scores.json (model -> task -> group -> metric) and scores.csv (one value a row)."""
    import csv

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scores.json").write_text(
        json.dumps({m: s for m, s in runs}, indent=1, default=str), encoding="utf-8"
    )
    with (folder / "scores.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["model", "task", "group", "metric", "value"])
        for model, scores in runs:
            for task, table in scores.items():
                for group, values in table.items():
                    for metric, value in values.items():
                        w.writerow([model, task, group, metric, value])


def _rich_table(title: str, table: dict) -> Table:
    """Group -> metric -> value as a table, its columns from the first group's metrics."""
    metrics = list(next(iter(table.values())).keys())
    t = Table(title=title)
    t.add_column("group")
    for m in metrics:
        t.add_column(m, justify="right")
    for group, values in table.items():
        t.add_row(group, *(_fmt(values.get(m)) for m in metrics))
    return t


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.3f}"
    return str(v)


def score_release(
    responses: Annotated[Path, typer.Argument(help="Folder of SRN response JSON files.")],
    road_dict: Annotated[Path, typer.Option(help="The release's road_dict folder.")],
    road_conjunction: Annotated[Path, typer.Option(help="The release's road_conjunction folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Score SRN responses kept in the original CartoMapQA release layout, both ways."""
    from evaluators.cartomapqa_release import score_release as score

    try:
        table = score(responses, road_dict, road_conjunction)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(table, indent=1))
        return
    Console().print(_rich_table(f"SRN, {responses} (original CartoMapQA layout)", table))
