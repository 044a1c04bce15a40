"""``cartoqa run``: ask a model every question of a dataset, resumably."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from cartoqa.errors import CartoqaError

if TYPE_CHECKING:
    from cartoqa.records import RunRecord
    from cartoqa.runner import RunSummary

__all__ = ["run"]


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.2f}/s", style="progress.data.speed")


def _price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise CartoqaError(
            f"--price {text!r}: give dollars per million input and output tokens, e.g. 2.5,10"
        ) from None
    return a, b


def run(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder (holds manifest.json).")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="openai:MODEL[@URL], anthropic:MODEL, google:MODEL, hf:ID, vllm:ID, oracle, "
            "random[:SEED], constant:TEXT, ocr (Tesseract reads the names), "
            "nearest-clip[:PATH|:hub:TAG|:random] (zero-shot CLIP, MFS).",
        ),
    ],
    tasks: Annotated[
        str | None, typer.Option(help="Only these tasks, comma-separated (e.g. rle,srn).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N selected samples.")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once (API models).")] = 4,
    runs_dir: Annotated[
        Path, typer.Option(help="Where run stores live; the same settings resume the same store.")
    ] = Path("runs"),
    temperature: Annotated[float, typer.Option(help="0 asks for greedy decoding.")] = 0.0,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            help="Most tokens per answer (default 8192 for GPS questions, as GPSBench allows, "
            "1024 for map questions)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Sampling seed, where the model takes one.")
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            help="Seconds one try of an API request may take, in wall time: connecting, "
            "sending and the whole reply, however slowly the server sends it."
        ),
    ] = 120.0,
    deadline: Annotated[
        float,
        typer.Option(
            help="Seconds one API request may take in all: every try and every wait between "
            "them (at least --timeout)."
        ),
    ] = 300.0,
    connect_retries: Annotated[
        int,
        typer.Option(
            help="Retries of a request whose connection was refused (a dead endpoint is not "
            "worth seven tries)."
        ),
    ] = 1,
    retries: Annotated[int, typer.Option(help="Retries per API request (429, 5xx, timeouts).")] = 6,
    retry_base: Annotated[
        float, typer.Option(help="First backoff in seconds; doubles with each retry.")
    ] = 1.0,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the API key (default per provider)."),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            help="Batch size of local models (hf: 4; vllm: --data-parallel x the engine's "
            "max_num_seqs, every engine full)."
        ),
    ] = None,
    dtype: Annotated[
        str, typer.Option(help="Local models: auto, bfloat16, float16, float32.")
    ] = "auto",
    device_map: Annotated[
        str | None, typer.Option(help="Local models: cpu, cuda, auto (default: cuda if present).")
    ] = None,
    trust_remote_code: Annotated[
        bool, typer.Option(help="Let hf/vllm run code from the model repository.")
    ] = False,
    tensor_parallel: Annotated[
        int | None,
        typer.Option(
            "--tensor-parallel",
            "--tp",
            help="vllm only: GPUs that hold one copy of the model (vLLM's tensor parallelism; "
            "default 1).",
        ),
    ] = None,
    data_parallel: Annotated[
        int | None,
        typer.Option(
            "--data-parallel",
            "--dp",
            help="vllm only: copies of the model, each on --tensor-parallel GPUs; vLLM balances "
            "the requests over them (default 1). tp x dp GPUs in all.",
        ),
    ] = None,
    parallel_backend: Annotated[
        str | None,
        typer.Option(
            help="vllm only: mp (the engines are processes of this node; default) or ray "
            "(Ray actors over the Ray cluster this machine joined, for several nodes).",
        ),
    ] = None,
    price: Annotated[
        str | None, typer.Option(help="IN,OUT dollars per million tokens, for the cost line.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    wait: Annotated[
        bool,
        typer.Option(
            help="If another run of the same dataset, model and settings is under way, wait "
            "for it to end and then resume, instead of refusing at once."
        ),
    ] = False,
) -> None:
    """Ask a model every question of a dataset; rerun the same command to resume.

    Each response is stored as it arrives (runs/<dataset>__<model>__<id>.jsonl).
    A failed request is recorded and the run goes on; running again retries
    the failed samples only.  Exit status: 0 when the run went through; 2 when
    it could not start (bad dataset, model spec or runs folder, another run of
    the same store under way); 1 when it stopped (refused key, the dataset rebuilt
    or replaced under it: each answer is kept under the dataset it was asked from) or
    when every request it sent failed; 130 when interrupted.
    """
    from cartoqa.errors import RunStoreError
    from cartoqa.models import GenerationSettings, RetryPolicy, load_model
    from cartoqa.runner import default_max_tokens, open_run_store, run_model, select_samples
    from cartoqa.scoring import is_correct
    from cartoqa.stores import ensure_writable_folder, load_dataset

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console(stderr=True)
    try:
        ds = load_dataset(dataset)
        chosen = select_samples(
            ds,
            tasks=[t.strip() for t in tasks.split(",") if t.strip()] if tasks else None,
            limit=limit,
        )
        if max_tokens is None:
            max_tokens = default_max_tokens(chosen)
        settings = GenerationSettings(temperature=temperature, max_tokens=max_tokens, seed=seed)
        if deadline < timeout:
            raise CartoqaError(
                f"--deadline {deadline:g} is shorter than --timeout {timeout:g}: one try could "
                f"never take its full time; give --deadline {timeout:g} or more"
            )
        retry = RetryPolicy(
            max_retries=retries,
            base_s=retry_base,
            max_s=max(60.0, retry_base),
            timeout_s=timeout,
            deadline_s=deadline,
            connect_retries=connect_retries,
        )
        cost = _price(price)
        ensure_writable_folder(runs_dir, what="run stores", error=RunStoreError)
        m = load_model(
            model,
            retry=retry,
            api_key_env=api_key_env,
            batch_size=batch_size,
            dtype=dtype,
            device_map=device_map,
            trust_remote_code=trust_remote_code,
            tensor_parallel=tensor_parallel,
            data_parallel=data_parallel,
            parallel_backend=parallel_backend,
        )
    except (CartoqaError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None

    try:
        with open_run_store(runs_dir, ds, m.spec, settings) as store:
            store.add_notes(list(getattr(m, "notes", []) or []))
            done_before = len({s.id for s in chosen} & store.completed_ids())
            bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                _Rate(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=console,
                disable=not progress,
            )
            with bar:
                task = bar.add_task(m.spec, total=len(chosen), completed=done_before)
                failures = []

                def on_record(rec: RunRecord) -> None:
                    if rec.ok:
                        bar.advance(task)
                    else:
                        failures.append(rec.sample_id)
                        bar.update(task, description=f"{m.spec} ({len(failures)} failed)")

                summary = run_model(
                    ds,
                    m,
                    store,
                    settings=settings,
                    samples=chosen,
                    concurrency=concurrency,
                    price=cost,
                    on_record=on_record,
                    wait_s=float("inf") if wait else 0.0,
                )
            store.add_notes(list(getattr(m, "notes", []) or []))  # and what the run found
            latest = store.latest()
            correct = sum(is_correct(s, latest[s.id].response) for s in chosen if s.id in latest)
    except CartoqaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except OSError as exc:  # a full disk: every whole line written before is kept
        typer.echo(f"error: writing to the run store failed: {exc}; rerun to resume", err=True)
        raise typer.Exit(1) from None
    finally:
        m.close()

    _print_summary(Console(), summary)
    Console().print(
        f"correct: {correct}/{len(chosen)} (by each task's scorer; cartoqa score gives the "
        "metrics and breakdowns)"
    )
    if summary.stopped:
        typer.echo(f"run stopped: {summary.stopped}", err=True)
        raise typer.Exit(130 if summary.stopped.startswith("interrupted") else 1)
    if summary.all_failed:
        first = latest[summary.failed_ids[0]].error if summary.failed_ids[0] in latest else "?"
        typer.echo(
            f"error: every request of this run failed ({summary.failed} of {summary.failed}); "
            f"the first error: {first}. Check the model spec and the server, then run the "
            "same command again to retry them",
            err=True,
        )
        raise typer.Exit(1)


def _print_summary(console: Console, s: RunSummary) -> None:
    table = Table(title=f"{s.model}: {s.selected} samples", show_header=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    rate = s.answered / s.wall_s if s.wall_s > 0 else 0.0
    rows = [
        ("already answered (resumed past)", s.skipped),
        ("answered now", s.answered),
        ("failed now", s.failed),
        ("still unanswered", s.remaining),
        ("requests retried (retries)", f"{s.retried} ({s.retries})"),
        ("tokens in / out", f"{s.input_tokens:,} / {s.output_tokens:,}"),
        ("cost", "unknown (give --price IN,OUT)" if s.cost_usd is None else f"${s.cost_usd:.4f}"),
        ("wall time", f"{s.wall_s:.1f} s ({rate:.2f} answers/s)"),
    ]
    if s.mended:
        rows.append(("responses mended to be stored (see note)", s.mended))
    for k, v in rows:
        table.add_row(k, str(v))
    console.print(table)
    console.print(f"responses: {s.store}")
    if s.failed_ids:
        shown = ", ".join(s.failed_ids[:5]) + (" ..." if len(s.failed_ids) > 5 else "")
        console.print(
            f"{s.failed} failed ({shown}); their errors are in the store. "
            "Run the same command again to retry them."
        )
