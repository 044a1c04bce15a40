"""``cartoqa import-release`` and ``cartoqa score-release``: the published CartoMapQA release."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from cartoqa.errors import CartoqaError
from cartoqa.stores._files import json_text, write_atomic

from .score import rich_table

__all__ = ["import_release", "score_release"]


def import_release(
    release: Annotated[
        Path, typer.Argument(help="The unzipped release: its Dataset/CartoMapQA/ folder.")
    ],
    out: Annotated[Path, typer.Argument(help="The dataset folder to write.")],
    copy_images: Annotated[
        bool,
        typer.Option(
            "--copy-images",
            help="Copy the images into the dataset (default: a link named release/ to the "
            "release's folder, which must then stay where it is).",
        ),
    ] = False,
    prompts: Annotated[
        Path | None,
        typer.Option(
            help="A TOML file of prompt templates over cartoqa's (keys map.release.*: "
            "the published wording, for one who has it)."
        ),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option(
            "--task", "-t", help="Only these release tasks (MFS, STMF, MTMF, RLE, MML, SRN)."
        ),
    ] = None,
    release_version: Annotated[
        str | None, typer.Option(help="The release's version, recorded in the manifest.")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a dataset already at OUT.")] = False,
) -> None:
    """Read the published CartoMapQA release (all six tasks) into a cartoqa dataset at OUT.

    Then run, score, report, review and export work on it as on any dataset. The
    samples name the release's images (OUT/release/ links to RELEASE, or holds a copy
    with --copy-images); the manifest records the release's version and the SHA-256 of
    every file read. A folder or file of the release that is missing or renamed is
    named, with what was expected; nothing is written then."""
    from cartoqa.tasks.release import import_release as do_import

    try:
        manifest = do_import(
            release,
            out,
            copy_images=copy_images,
            prompts=prompts,
            tasks=task,
            version=release_version,
            overwrite=overwrite,
        )
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    counts = ", ".join(f"{t} {sum(v.values())}" for t, v in manifest.counts.items())
    typer.echo(f"wrote {manifest.total} samples to {out} ({counts})")
    typer.echo(f"next: cartoqa run {out} --model oracle")
    for credit in manifest.attribution:
        typer.echo(credit)


def score_release(
    responses: Annotated[
        Path,
        typer.Argument(
            help="A model's response folder in the release's layout (Responses/<TASK>/<model>/), "
            "or Responses/ with --model."
        ),
    ],
    release: Annotated[
        Path | None,
        typer.Option(help="The release's Dataset/CartoMapQA/ folder (SRN reads its road tables)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="With Responses/: the model's folder name.")
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the published code's random fall-backs (it had none).")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    items: Annotated[
        Path | None,
        typer.Option(help="Also write every item's scores, both ways, one JSON object a line."),
    ] = None,
) -> None:
    """Score responses kept in the published CartoMapQA layout, both ways, for all six tasks.

    "original": the published evaluate_*.py's arithmetic on the records as stored, every
    quirk kept (its parsing, substring matches, dropped answers, averages, rounding);
    its random fall-backs counted (MFS's drawn here from --seed); answers it crashes on
    scored and counted under "crashed". "cartoqa": the same raw responses read and scored by
    cartoqa's own scorers. The task is found from the layout."""
    from cartoqa.tasks.release import score_release as do_score

    try:
        release_root = None
        if release is not None:
            from cartoqa.tasks.release.importing import find_root

            release_root = find_root(release)
        scores = do_score(responses, release=release_root, model=model, seed=seed)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if items is not None:
        lines = [
            json_text({"release_task": name, **item}, indent=None, default=str)
            for name, sc in scores.items()
            for item in sc.items
        ]
        write_atomic(items, ("\n".join(lines) + "\n").encode("utf-8"))
    if as_json:
        typer.echo(json_text({k: v.as_json() for k, v in scores.items()}, indent=1, default=str))
        return
    console = Console()
    for name, sc in scores.items():
        console.print(rich_table(f"{name}: the published arithmetic (original)", sc.original))
        if sc.cartoqa:
            console.print(rich_table(f"{name}: cartoqa's scorer ({sc.task})", sc.cartoqa))
        crashed = sc.original.get("all", {}).get("crashed", 0)
        drawn = sc.original.get("all", {}).get("drawn at random", 0)
        if crashed and not math.isnan(crashed):
            console.print(
                f"{int(crashed)} answer(s) would crash the published evaluator; scored here "
                "as its module says (see --items for which and why)"
            )
        if drawn and not math.isnan(drawn):
            console.print(
                f"{int(drawn)} answer(s) were drawn at random by the published code (MFS: as "
                f"it scores, drawn here from --seed {seed}; STMF: as its parser read the "
                "reply, the draw stored in the record)"
            )
        for note in sc.notes:
            console.print(f"note: {escape(note)}")
