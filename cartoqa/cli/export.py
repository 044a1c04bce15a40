"""``cartoqa export``: a dataset in an evaluation harness's format (``--to``: hf, inspect,
vlmevalkit, lmms-eval, cartomapqa)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from cartoqa.errors import CartoqaError

__all__ = ["FORMATS", "export"]

#: --to value -> what it writes
FORMATS = {
    "hf": "Hugging Face datasets: parquet shards per task and split, and a dataset card",
    "inspect": "an inspect_ai task folder: one @task per cartoqa task, scored by cartoqa",
    "vlmevalkit": "VLMEvalKit TSVs, one per task, and a dataset class scored by cartoqa",
    "lmms-eval": "an lmms-eval task folder (--include_path): one task per cartoqa task",
    "cartomapqa": "the published CartoMapQA release's layout, questions and the runs' responses",
}


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def export(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder (holds manifest.json).")],
    out: Annotated[Path, typer.Argument(help="The folder to write the export to.")],
    to: Annotated[
        str, typer.Option("--to", help=f"The format: {', '.join(FORMATS)}.", show_default=False)
    ],
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace an earlier export at OUT (it stays whole until the new one is "
            "complete). Other folders are never replaced.",
        ),
    ] = False,
    runs_dir: Annotated[
        Path, typer.Option(help="--to cartomapqa: where the runs whose responses go along are.")
    ] = Path("runs"),
) -> None:
    """Write DATASET to OUT in another tool's format.

    --to hf: one config per task with the dataset's splits, in files
    data/<task>/<split>-00000-of-0000N.parquet (at most 5000 rows or about
    500 MB each); columns id, task, split, question, system, image (tasks
    with images only), answer, and ground_truth, metadata and provenance as
    JSON; and the dataset card README.md (configs; licences from what each
    task's samples are made of: odbl for maps rendered from OpenStreetMap,
    cc0-1.0 and isc for legend images in the openstreetmap-carto style with
    iD tagging schema names, cc-by-4.0 for GeoNames data; attribution,
    provenance, counts).
    Load it with datasets.load_dataset("OUT", "TASK").

    --to vlmevalkit: one VLMEvalKit TSV per task (OUT/CartoQA_<task>.tsv:
    index, image as base64, question, A-E for MFS, answer, category,
    l2-category, split, cartoqa_id, cartoqa_sample) and cartoqa_vlmeval.py,
    a dataset class for the open-ended tasks scored by cartoqa.

    --to lmms-eval: a task folder for lmms-eval --include_path OUT: one
    YAML per task (cartoqa_<task>), the groups cartoqa_map (image-text
    models), cartoqa_gps (text models) and cartoqa (both), utils.py scoring
    with cartoqa's scorers, and the Hugging Face export in OUT/data.

    --to inspect: an inspect_ai task folder, cartoqa_tasks.py (one task per
    cartoqa task, scored by cartoqa's scorer), samples.jsonl, images/ and a
    README; run it from OUT with inspect eval cartoqa_tasks.py@srn --model ...

    --to cartomapqa: the published CartoMapQA release's layout, OUT/Dataset/
    CartoMapQA/ (questions, truths, images) and OUT/Responses/<TASK>/<model>/ for
    every run of DATASET under --runs-dir, as the published scripts save them, so
    its eval.py scores them; cartoqa import-release OUT/Dataset/CartoMapQA gives
    back the same samples.

    Paired variants (a dataset built with --variants): every format but
    cartomapqa writes each task's variant apart from its base questions, as
    a config, task or benchmark of its own named <task>__<variant>
    (srn__text, srn__image_text; <task>__nolabels__unanswerable for the
    questions a variant made unanswerable), scored alone so that numbers
    never mix, and each item carries its variant, its base's id (base_id)
    and whether it is answerable; lmms-eval adds a group per variant
    (cartoqa_variant_text...).  --to cartomapqa writes the base questions
    only and says how many variant samples it left out: the release's
    layout cannot hold them.

    Every export is written beside OUT and renamed into place at the end: a
    failure leaves nothing.  Exit
    status 0 when written, 2 for an unknown format, a dataset that cannot be
    read, or an OUT that is taken or cannot be written.
    """
    if to not in FORMATS:
        raise _fail(
            f"--to {to!r} is not a format cartoqa exports to; the formats are: "
            + "; ".join(f"{k} ({v})" for k, v in FORMATS.items())
        )
    from cartoqa.stores import load_dataset

    if to == "cartomapqa":
        from cartoqa.exports.cartomapqa import export_cartomapqa

        try:
            _, lines = export_cartomapqa(
                load_dataset(dataset), out, runs_dir=runs_dir, overwrite=overwrite
            )
        except CartoqaError as exc:
            raise _fail(str(exc)) from None
        for line in lines:  # the dataset's own attribution lines last
            typer.echo(line)
        return
    if to != "hf":
        try:
            lines = _OTHERS[to](load_dataset(dataset), out, overwrite)
        except CartoqaError as exc:
            raise _fail(str(exc)) from None
        for line in [*lines, "Map data © OpenStreetMap contributors (ODbL)."]:
            typer.echo(line)
        return
    from cartoqa.exports.hf import export_hf

    try:
        ds = load_dataset(dataset)
        result = export_hf(ds, out, overwrite=overwrite)
    except CartoqaError as exc:
        raise _fail(str(exc)) from None
    typer.echo(
        f"wrote {ds.manifest.name} ({result.total} samples, {len(result.rows)} configs) "
        f"as a Hugging Face dataset to {result.out}"
    )
    for task, splits in result.rows.items():
        counts = ", ".join(f"{split} {n}" for split, n in splits.items())
        typer.echo(f"  {task}: {counts}  [{', '.join(result.licenses[task])}]")
    shards = sum(1 for f in result.files if f.endswith(".parquet"))
    typer.echo(f"  {shards} parquet files under data/, the card README.md, cartoqa-export.json")
    if any("odbl" in v for v in result.licenses.values()):
        typer.echo("Map data © OpenStreetMap contributors (ODbL).")
    first = next(iter(result.rows))
    typer.echo(f'load it with: datasets.load_dataset("{result.out}", "{first}")')
    if result.replaced:
        from cartoqa.exports.hf import RELOAD

        typer.echo(
            "an earlier export was replaced: datasets may serve its rows from its cache; "
            f"load with {RELOAD} (or a fresh cache_dir)"
        )


def _inspect(ds: Any, out: Path, overwrite: bool) -> list[str]:
    from cartoqa.exports.inspect_ai import export_inspect

    folder = export_inspect(ds, out, overwrite=overwrite)
    return [
        f"wrote an inspect_ai task folder to {folder}",
        f"run it from there with: cd {folder} && inspect eval cartoqa_tasks.py@TASK --model ... "
        "(a relative path: inspect refuses an absolute one that names no task; map tasks with "
        "local models through an OpenAI-compatible server, see its README.md)",
    ]


def _lmms_eval(ds: Any, out: Path, overwrite: bool) -> list[str]:
    from cartoqa.exports.lmms_eval import (
        EXPORT_MARKER,
        INSTALL_COMMAND,
        VARIANT_GROUP_PREFIX,
        export_lmms_eval,
    )

    folder = export_lmms_eval(ds, out, overwrite=overwrite)
    groups = json.loads((folder / EXPORT_MARKER).read_text(encoding="utf-8")).get("groups", {})
    variants = [g for g in groups if g.startswith(VARIANT_GROUP_PREFIX)]
    return [
        f"wrote lmms-eval tasks (groups cartoqa, cartoqa_map, cartoqa_gps) to {folder}",
        *(
            [f"  the paired variants' groups (base tasks are in cartoqa): {', '.join(variants)}"]
            if variants
            else []
        ),
        f"run them with: lmms-eval --model ... --include_path {folder} --tasks cartoqa_map "
        "(image-text models; cartoqa_gps for text models)",
        f"install: {INSTALL_COMMAND}",
        "lmms-eval exits 0 even when it fails: check that --output_path holds the results",
    ]


def _vlmevalkit(ds: Any, out: Path, overwrite: bool) -> list[str]:
    from cartoqa.exports.vlmevalkit import export_vlmevalkit

    tsvs = [f for f in export_vlmevalkit(ds, out, overwrite=overwrite) if f.suffix == ".tsv"]
    return [
        f"wrote {len(tsvs)} VLMEvalKit TSVs and cartoqa_vlmeval.py to {out}",
        f"copy the TSVs into $LMUData; {out / 'README.md'} says how to register it",
    ]


#: the formats other than hf (which prints its own summary): --to value -> writer
_OTHERS: dict[str, Callable[[Any, Path, bool], list[str]]] = {
    "inspect": _inspect,
    "lmms-eval": _lmms_eval,
    "vlmevalkit": _vlmevalkit,
}
