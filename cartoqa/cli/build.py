"""``cartoqa build``: any mix of registered tasks (map tasks from an OSM extract, rendered;
GPS tasks from GeoNames) written as one dataset."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cartoqa.errors import CartoqaError

from ._options import PromptsFile

if TYPE_CHECKING:
    from cartoqa.tasks.build import BuildReport

__all__ = ["build"]


def build(
    out: Annotated[Path, typer.Argument(help="The dataset folder to write.")],
    extract: Annotated[
        Path | None, typer.Option(help="OSM extract (default: the embedded Helsinki one).")
    ] = None,
    tasks: Annotated[
        str,
        typer.Option(
            help="Comma-separated task names, any mix of map tasks (srn, rle, mml) and GPS "
            "tasks ('cartoqa tasks' lists them)."
        ),
    ] = "srn,rle,mml",
    per_task: Annotated[
        str,
        typer.Option(
            help="Samples per task (RLE: maps x 2 units; GPS tasks: 10 or more): one count for "
            "all, or one per task asked, e.g. srn=278,rle=600,mml=250.",
            metavar="N|TASK=N,...",
        ),
    ] = "10",
    seed: Annotated[int, typer.Option(help="The same seed gives the same samples.")] = 0,
    carto_files: Annotated[
        Path | None, typer.Option(help="Folder with carto's patterns/ and symbols/shields/.")
    ] = None,
    dsn: Annotated[
        str | None, typer.Option(help="PostgreSQL DSN instead of the private one.")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a dataset already at OUT.")] = False,
    strict: Annotated[
        bool,
        typer.Option(help="Make a shortfall (fewer samples than asked) an error: no dataset."),
    ] = False,
    repeat_places: Annotated[
        bool,
        typer.Option(
            help="Allow several questions of one junction (MML) or origin-destination pair."
        ),
    ] = False,
    prompts: PromptsFile = None,
    clip_checkpoint: Annotated[
        Path | None,
        typer.Option(
            help="MFS: a CLIP weights file (open_clip .pt/.safetensors) to choose distractors "
            "with (default: CARTOQA_CLIP_CHECKPOINT)."
        ),
    ] = None,
    clip_hub: Annotated[
        str | None,
        typer.Option(help="MFS: an open_clip pretrained tag to download (needs a network)."),
    ] = None,
    clip_model: Annotated[str, typer.Option(help="MFS: the open_clip model name.")] = "ViT-B-32",
    clip_random_weights: Annotated[
        bool,
        typer.Option(
            help="MFS: CLIP with random weights (no semantic distances; warned about and "
            "recorded in the manifest and every sample)."
        ),
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Processes that sample and render the maps (default 1; the same dataset "
            "whatever the number). With --ray: Ray actors (default: one per CPU of the cluster)."
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            help="Run the workers as Ray actors: 'auto' (the cluster this machine is in, else a "
            "local one) or a cluster's address. Needs cartoqa's optional ray extra."
        ),
    ] = None,
    extracts: Annotated[
        Path | None,
        typer.Option(
            help="A file of OSM extracts, one path a line: one dataset per extract, in "
            "OUT/<extract name>/ (instead of --extract)."
        ),
    ] = None,
    variants: Annotated[
        str,
        typer.Option(
            help="Paired variants to add beside each map-view question, comma-separated: "
            "text, image+text, coords, greyscale, nolabels (each copy's id is the base's with "
            "'@' and the variant: srn-0004@text; 'cartoqa report' pairs them).",
            metavar="VARIANT,...",
        ),
    ] = "",
) -> None:
    """Build questions of any mix of tasks: map tasks (SRN, RLE, MML, STMF, MTMF) with their
    maps from an OSM extract, MFS from the legend cartoqa draws (CLIP weights needed: see
    --clip-*), GPS tasks from GeoNames (the same samples as 'cartoqa gps generate').
    Each task's samples depend only on the seed and the task, not on the others asked.

    OUT is checked (free, writable; an existing dataset needs --overwrite) and
    locked before any work; an old dataset there stays whole until the new one
    is complete.  Exit status 0 when every task got samples (a shortfall is
    shown and recorded in the manifest), 1 when a task could make none, or
    with --strict when any fell short (no dataset written), 2 for bad options
    or an output that cannot be written, 130 when interrupted (no dataset written).

    --workers N builds in N processes (--ray: as Ray actors), byte for byte the dataset one
    process makes; a worker that dies fails the build (exit 1) and writes no dataset.
    --extracts FILE builds one dataset per extract, OUT/<name>/, one after another (a failed
    one stops the list; those before it stay written).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    from cartoqa.tasks import build_dataset
    from cartoqa.tasks.build import BuildError, maps_wanted
    from cartoqa.tasks.variants import parse_variants

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    wanted = [t.strip() for t in tasks.split(",") if t.strip()]
    try:
        counts = parse_counts(per_task)
        asked = parse_variants(variants)
        places = _places(out, extract, extracts)
        _check_workers(workers, ray)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if extracts is not None:
        from contextlib import ExitStack

        with ExitStack() as stack:
            if ray is not None:  # one Ray session for every extract
                from cartoqa.tasks.build_ray import connect, import_ray

                try:
                    if connect(ray):
                        stack.callback(import_ray().shutdown)
                except CartoqaError as exc:
                    typer.echo(f"error: {exc}", err=True)
                    raise typer.Exit(2) from None
            for folder, path in places:
                typer.echo(f"{path} -> {folder}")
                build(
                    folder,
                    extract=path,
                    tasks=tasks,
                    per_task=per_task,
                    seed=seed,
                    carto_files=carto_files,
                    dsn=dsn,
                    overwrite=overwrite,
                    strict=strict,
                    repeat_places=repeat_places,
                    prompts=prompts,
                    clip_checkpoint=clip_checkpoint,
                    clip_hub=clip_hub,
                    clip_model=clip_model,
                    clip_random_weights=clip_random_weights,
                    progress=progress,
                    workers=workers,
                    ray=ray,
                    extracts=None,
                    variants=variants,
                )
        return
    console = Console()
    bars = Progress(
        TextColumn("[bold]sampling {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rejected]} rejected"),
        console=console,
        disable=not progress,
        transient=True,
    )
    ids: dict[str, TaskID] = {}

    def on_attempt(task: str, made: int, rejected: int) -> None:
        if task not in ids:
            ids[task] = bars.add_task(task, total=maps_wanted(task, counts), rejected=0)
        bars.update(ids[task], completed=made, rejected=rejected)

    try:
        with bars:
            report = build_dataset(
                out,
                extract=extract,
                tasks=wanted,
                per_task=counts,
                seed=seed,
                carto_files=carto_files,
                dsn=dsn,
                overwrite=overwrite,
                progress=progress,
                on_attempt=on_attempt,
                strict=strict,
                repeat_places=repeat_places,
                prompts=prompts,
                task_options={
                    "clip_checkpoint": clip_checkpoint,
                    "clip_hub": clip_hub,
                    "clip_model": clip_model,
                    "clip_random_weights": clip_random_weights,
                },
                workers=workers,
                ray=ray,
                variants=asked,
            )
    except BuildError as exc:
        console.print(_table(exc.report, wanted, f"{out}: no dataset written"))
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except OSError as exc:  # a full disk, a folder removed under us: the old dataset stays
        typer.echo(f"error: writing the dataset failed: {exc}; {out} is as it was", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:  # Ctrl-C: the workers are ended, the staged files removed
        typer.echo(f"error: interrupted; no dataset written, {out} is as it was", err=True)
        raise typer.Exit(130) from None
    console.print(_table(report, wanted, f"{out}: dataset written"))
    _kept_review(out, console)
    for task, missing in report.short.items():
        console.print(
            f"[yellow]shortfall[/]: {task} has {missing} fewer samples than asked for "
            f"({report.gave_up.get(task, 'the extract ran out of fair candidates')}); "
            "recorded in the manifest"
        )
    made = report.variants.get("made", {})
    if made:
        console.print(
            "paired variants: "
            + ", ".join(f"{v} {sum(by_task.values())}" for v, by_task in made.items())
            + " samples"
        )
    for variant, by_task in report.variants.get("left_out", {}).items():
        for task, reasons in by_task.items():
            console.print(
                f"[yellow]variant {variant}[/]: {sum(reasons.values())} {task} samples have no "
                "copy (" + ", ".join(f"{r} {n}" for r, n in reasons.items()) + "); recorded in "
                "the manifest"
            )
    for retry in report.retried:  # a Ray actor died; its shard ran again (the same bytes)
        console.print(f"[yellow]retried[/]: {escape(retry)}")
    from cartoqa.tasks.gps import GPS_CREDITS

    credits = []
    if report.extract_name:
        credits.append("Map data © OpenStreetMap contributors")
    if any(t not in report.maps for t in wanted):
        credits.append(GPS_CREDITS)
    credits += report.credits
    console.print(
        "seconds: "
        + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items())
        + "\n"
        + "\n".join(credits)
    )


def _check_workers(workers: int | None, ray: str | None) -> None:
    if workers is not None and workers < 1:
        raise CartoqaError(
            f"--workers {workers}: give 1 or more processes (1 builds in this process)"
        )
    if ray is not None:
        from cartoqa.tasks.build_ray import import_ray

        if not ray.strip():
            raise CartoqaError("--ray '': give 'auto' or a Ray cluster's address (HOST:PORT)")
        import_ray()  # MissingDependencyError naming the extra


def _places(
    out: Path, extract: Path | None, extracts: Path | None
) -> list[tuple[Path, Path | None]]:
    """(dataset folder, extract) of each dataset to build: OUT and --extract, or one folder
    OUT/<name> per line of the --extracts file."""
    if extracts is None:
        return [(out, extract)]
    if extract is not None:
        raise CartoqaError("--extract and --extracts: give one extract, or a file of them")
    try:
        lines = extracts.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CartoqaError(f"--extracts {extracts}: cannot read it ({exc.strerror})") from None
    places: dict[str, tuple[Path, Path | None]] = {}
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = extracts.parent / path  # relative to the list's folder
        if not path.is_file():
            raise CartoqaError(
                f"--extracts {extracts}, line {n}: {text} is not a file; give one OSM extract "
                "path a line (relative paths are read from the list's folder)"
            )
        name = path.name.split(".")[0]
        if name in places:
            raise CartoqaError(
                f"--extracts {extracts}, line {n}: a second extract named {name!r} "
                f"({places[name][1]} and {path}); each dataset goes to OUT/<name>, so rename one"
            )
        places[name] = (out / name, path)
    if not places:
        raise CartoqaError(f"--extracts {extracts} lists no extract; give one path a line")
    return list(places.values())


def _kept_review(out: Path, console: Console) -> None:
    """Say what became of the review store a rebuild carried over (its decisions kept; the
    samples whose truth changed now show "truth changed" in the review tool)."""
    from cartoqa.stores.dataset import KEPT_STORES

    path = out / KEPT_STORES[0]
    if not path.is_file():
        return
    from annotations.decisions import DecisionStore
    from cartoqa.stores import load_dataset

    try:
        ds = load_dataset(out)
        with DecisionStore.open(path, ds) as store:
            decisions = len(store.all())
            changed = sum(1 for s in ds.samples if store.status(s.id) == "truth changed")
    except CartoqaError as exc:
        console.print(f"[yellow]warning[/]: the review store {path} was kept, but: {exc}")
        return
    console.print(
        f"review store kept: {path} ({decisions} decisions); "
        + (
            f"{changed} samples' truths changed since they were reviewed: they show "
            "'truth changed' in the review tool and their old decisions are not applied"
            if changed
            else "no reviewed truth changed"
        ),
        markup=False,
    )


def _table(report: BuildReport, wanted: list[str], title: str) -> Table:
    table = Table(title=title)
    for col in ("task", "samples", "maps", "rejected (top reasons)"):
        table.add_column(col)
    for task in wanted:
        rejected = report.rejected.get(task)
        reasons = ", ".join(f"{r} {n}" for r, n in rejected.most_common(4)) if rejected else "-"
        have = report.samples.get(task, 0)
        want = report.wanted.get(task, 0)
        short = f" (wanted {want})" if have < want else ""
        maps = str(report.maps[task]) if task in report.maps else "-"
        table.add_row(task, f"{have}{short}", maps, reasons or "-")
    return table


def parse_counts(text: str) -> int | dict[str, int]:
    """``--per-task``: "10" (one count for all tasks) or "srn=278,rle=600" (one per task)."""
    text = text.strip()
    if "=" not in text:
        try:
            return int(text)
        except ValueError:
            raise CartoqaError(
                f"--per-task {text!r}: give a whole number (10) or a count per task "
                "(srn=278,rle=600)"
            ) from None
    counts: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        task, _, n = part.partition("=")
        try:
            if not task.strip():
                raise ValueError(part)
            counts[task.strip()] = int(n)
        except ValueError:
            raise CartoqaError(
                f"--per-task {part!r}: write each as TASK=N with N a whole number (srn=278,rle=600)"
            ) from None
    return counts
