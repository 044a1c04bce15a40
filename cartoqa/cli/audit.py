"""``cartoqa audit``: each sample's map with its ground truth drawn over it, as PNG files."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated

import typer

from cartoqa.errors import CartoqaError

__all__ = ["DEFAULT_N", "audit"]

#: samples drawn when neither --sample nor --n is given
DEFAULT_N = 10


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def audit(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder (holds manifest.json).")],
    sample: Annotated[
        list[str] | None,
        typer.Option("--sample", "-s", help="Draw this sample (repeat for more)."),
    ] = None,
    n: Annotated[
        int | None,
        typer.Option(
            "--n", help=f"Draw N samples chosen at random (default {DEFAULT_N} without --sample)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="The same seed draws the same random samples.")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for the PNG files (default: NAME-audit beside DATASET)."),
    ] = None,
    tasks: Annotated[
        str | None, typer.Option(help="Only samples of these tasks, comma-separated (srn,mml).")
    ] = None,
) -> None:
    """Draw samples of DATASET with their ground truth over the map, one PNG each.

    Each OUT/<sample-id>.png shows the map with the truth drawn on it (SRN: each
    leg numbered in its own colour with its label box; MML: the marker and the
    two roads' label boxes; RLE: the markers and the scale) and a panel with the
    truth in words, under a header with the sample id, task, zoom, blank share and
    the OpenStreetMap attribution.  What the dataset did not record is written
    "not recorded".  Without --sample, --n samples are chosen at random among
    those with a map (seeded by --seed), listed in dataset order.  Files already
    in OUT with the same names are replaced; nothing else there is touched.
    Exit status 0 when every image was written, 1 when some sample's map could
    not be read (the others are written), 2 for bad options, an unknown sample or
    task, a dataset that cannot be read or an OUT that cannot be written.
    """
    from cartoqa.records import declared_tasks
    from cartoqa.stores import ensure_writable_folder, load_dataset

    if sample and n is not None:
        raise _fail("give --sample or --n, not both")
    if n is not None and n < 1:
        raise _fail(f"--n {n} must be at least 1")
    try:
        ds = load_dataset(dataset)
    except CartoqaError as exc:
        raise _fail(str(exc)) from None
    present = sorted({s.task for s in ds.samples})
    wanted: set[str] | None = None
    if tasks is not None:
        wanted = {t.strip() for t in tasks.split(",") if t.strip()}
        known = declared_tasks()
        unknown = sorted(wanted - set(known))
        if unknown:
            raise _fail(
                f"--tasks {', '.join(unknown)}: no such task; known tasks: {', '.join(known)}"
            )
        absent = sorted(wanted - set(present))
        if absent:
            raise _fail(
                f"--tasks {', '.join(absent)}: {ds.manifest.name} has no sample of "
                f"{'that task' if len(absent) == 1 else 'those tasks'}; it holds "
                f"{', '.join(present)}"
            )
    if sample:
        chosen = _asked(ds, sample, wanted)
    else:
        pool = [s for s in ds.samples if s.prompt.images and (wanted is None or s.task in wanted)]
        if not pool:
            raise _fail(
                f"{ds.manifest.name} has no sample with a map image"
                + (f" among tasks {', '.join(sorted(wanted))}" if wanted else "")
                + "; audit draws map samples (srn, rle, mml, ...)"
            )
        picked = random.Random(seed).sample(range(len(pool)), min(n or DEFAULT_N, len(pool)))
        chosen = [pool[i] for i in sorted(picked)]
    folder = out if out is not None else _default_out(dataset)
    try:
        ensure_writable_folder(folder, what="audit images")
    except CartoqaError as exc:
        raise _fail(str(exc)) from None
    _draw_all(ds, chosen, folder)


def _default_out(dataset: Path) -> Path:
    """NAME-audit beside the dataset folder: runs/ds -> runs/ds-audit."""
    resolved = dataset.resolve()
    return resolved.parent / f"{resolved.name}-audit"


def _asked(ds, ids: list[str], wanted: set[str] | None) -> list:
    by_id = ds.by_id()
    chosen, seen = [], set()
    for sid in ids:
        if sid in seen:
            continue
        seen.add(sid)
        s = by_id.get(sid)
        if s is None:
            some = ", ".join(list(by_id)[:5])
            raise _fail(
                f"sample {sid!r} is not in {ds.path} ({len(by_id)} samples, such as {some}); "
                "'cartoqa dataset info' counts them and samples.jsonl lists their ids"
            )
        if wanted is not None and s.task not in wanted:
            raise _fail(
                f"sample {sid!r} is of task {s.task}, not among --tasks {','.join(sorted(wanted))}"
            )
        if not s.prompt.images:
            raise _fail(
                f"sample {sid!r} ({s.task}) has no map image; audit draws map samples "
                "(srn, rle, mml, ...)"
            )
        chosen.append(s)
    return chosen


def _draw_all(ds, chosen: list, folder: Path) -> None:
    from annotations.drawing import draw_sample

    problems = 0
    for s in chosen:
        target = folder / f"{s.id}.png"
        try:
            image = draw_sample(s, ds.image_path(s.prompt.images[0]))
        except CartoqaError as exc:
            typer.echo(f"error: sample {s.id}: {exc}", err=True)
            problems += 1
            continue
        tmp = target.with_name(f".{target.name}.tmp")
        try:
            image.save(tmp, format="PNG")
            tmp.replace(target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise _fail(
                f"cannot write {target}: {exc.strerror or exc}; choose another --out"
            ) from None
        typer.echo(str(target))
    typer.echo(
        f"{len(chosen) - problems} audit image{'s' if len(chosen) - problems != 1 else ''} "
        f"of {ds.manifest.name} in {folder}"
    )
    if problems:
        raise typer.Exit(1)
