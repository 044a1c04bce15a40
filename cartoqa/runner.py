"""Run a model over a dataset into a run store: resumable, concurrent, fault-tolerant.

``run_model`` sends every selected sample that has no successful response
in the store yet, writes each response (or its error) as soon as it comes,
and returns a ``RunSummary``.  A failed request is recorded with its sample
and the run goes on; run again and the failed samples are tried again.  Only
a ``ModelError`` (no request can succeed: a refused key, an unknown model)
or a stop request ends a run early; what was answered stays in the store.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cartoqa.errors import CartoqaError, ModelError
from cartoqa.models import GenerationSettings, Model, Request, Response, price_for
from cartoqa.models.prices import cost_usd
from cartoqa.records import RunRecord, Sample
from cartoqa.stores import Dataset, RunStore

__all__ = ["RunSummary", "open_run_store", "run_model", "select_samples"]

log = logging.getLogger(__name__)


def select_samples(
    dataset: Dataset, *, tasks: Sequence[str] | None = None, limit: int | None = None
) -> list[Sample]:
    """The dataset's samples of the given tasks (all when None), the first ``limit`` of them."""
    samples = list(dataset)
    if tasks:
        known = {s.task for s in samples}
        unknown = sorted(set(tasks) - known)
        if unknown:
            raise CartoqaError(
                f"--tasks {','.join(unknown)}: no such task in {dataset.path} "
                f"(it has: {', '.join(sorted(known))})"
            )
        samples = [s for s in samples if s.task in set(tasks)]
    if limit is not None:
        if limit < 1:
            raise CartoqaError(f"--limit {limit} must be at least 1")
        samples = samples[:limit]
    return samples


def open_run_store(
    runs_dir: Path, dataset: Dataset, model_spec: str, settings: GenerationSettings
) -> RunStore:
    """The store of this (dataset, model, settings): the same arguments find it again."""
    return RunStore.open(
        runs_dir,
        dataset_name=dataset.manifest.name,
        dataset_sha256=dataset.manifest.samples_sha256,
        model=model_spec,
        settings=settings.as_dict(),
    )


@dataclass
class RunSummary:
    """What one ``run_model`` call did."""

    model: str
    store: Path
    selected: int
    """Samples the run was asked for (after --tasks and --limit)."""
    skipped: int
    """Of those, answered by an earlier run (resumed past)."""
    answered: int = 0
    """Answered by this run."""
    failed: int = 0
    """Recorded as failed by this run (after retries)."""
    retried: int = 0
    """Requests of this run that needed at least one retry."""
    retries: int = 0
    """Retries in all."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    """Where the model's price is known (or given)."""
    wall_s: float = 0.0
    stopped: str | None = None
    """Why the run ended early, or None when it went through."""
    failed_ids: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        """Samples still without a successful response."""
        return self.selected - self.skipped - self.answered


def run_model(
    dataset: Dataset,
    model: Model,
    store: RunStore,
    *,
    settings: GenerationSettings | None = None,
    samples: Sequence[Sample] | None = None,
    concurrency: int = 1,
    price: tuple[float, float] | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    stop: threading.Event | None = None,
) -> RunSummary:
    """Answer every sample of ``samples`` (default: the whole dataset) not yet answered in
    ``store``.  ``concurrency`` requests are in flight at once for thread-safe models (API
    adapters); other models get one caller and batches of their ``batch_size``."""
    if concurrency < 1:
        raise CartoqaError(f"concurrency={concurrency} must be at least 1")
    settings = settings or GenerationSettings()
    chosen = list(dataset) if samples is None else list(samples)
    done = store.completed_ids()
    pending = [s for s in chosen if s.id not in done]
    summary = RunSummary(
        model=model.spec, store=store.path, selected=len(chosen), skipped=len(chosen) - len(pending)
    )
    price = price or price_for(model.spec)
    stop = stop or threading.Event()
    lock = threading.Lock()
    errors: list[BaseException] = []

    batch = max(1, model.batch_size)
    jobs: queue.SimpleQueue[list[Sample]] = queue.SimpleQueue()
    for i in range(0, len(pending), batch):
        jobs.put(pending[i : i + batch])

    def request(s: Sample) -> Request:
        return Request(
            id=s.id,
            text=s.prompt.text,
            system=s.prompt.system,
            images=tuple(dataset.image_path(p) for p in s.prompt.images),
            settings=settings,
            sample=s,
        )

    def record(s: Sample, r: Response) -> None:
        rec = RunRecord(
            sample_id=s.id,
            model=model.spec,
            response=r.text if r.ok else None,
            error=None if r.ok else (r.error or "the model returned no text"),
            latency_s=r.latency_s,
            input_tokens=r.input_tokens,
            output_tokens=r.output_tokens,
            attempt=store.attempts(s.id) + 1,
            retries=r.retries,
            image_tokens=r.image_tokens,
        )
        if not store.append(rec):  # another process answered it meanwhile
            return
        with lock:
            if rec.ok:
                summary.answered += 1
            else:
                summary.failed += 1
                summary.failed_ids.append(s.id)
            summary.retried += r.retries > 0
            summary.retries += r.retries
            summary.input_tokens += r.input_tokens or 0
            summary.output_tokens += r.output_tokens or 0
        if on_record:
            on_record(rec)

    def worker() -> None:
        try:
            while not stop.is_set():
                try:
                    chunk = jobs.get_nowait()
                except queue.Empty:
                    return
                responses = model.generate([request(s) for s in chunk])
                if len(responses) != len(chunk):
                    raise ModelError(
                        f"{model.spec} returned {len(responses)} responses "
                        f"for {len(chunk)} requests"
                    )
                for s, r in zip(chunk, responses, strict=True):
                    record(s, r)
        except BaseException as exc:
            with lock:
                errors.append(exc)
            stop.set()

    t0 = time.perf_counter()
    n_threads = min(concurrency if model.thread_safe else 1, max(1, -(-len(pending) // batch)))
    threads = [
        threading.Thread(target=worker, name=f"runner-{i}", daemon=True) for i in range(n_threads)
    ]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.2)
    except KeyboardInterrupt:
        stop.set()
        summary.stopped = "interrupted; run the same command again to resume"
        # give requests in flight a moment to land; one still waiting on a slow server is
        # abandoned (its sample is asked again on resume)
        deadline = time.monotonic() + 5
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
    summary.wall_s = time.perf_counter() - t0
    if errors and isinstance(errors[0], KeyboardInterrupt):
        summary.stopped = "interrupted; run the same command again to resume"
    elif errors:
        exc = errors[0]
        if not isinstance(exc, ModelError):
            log.error("runner thread failed", exc_info=exc)
        summary.stopped = (
            str(exc) if isinstance(exc, CartoqaError) else f"{type(exc).__name__}: {exc}"
        )
    elif stop.is_set() and summary.stopped is None and summary.remaining:
        summary.stopped = "stopped on request; run the same command again to resume"
    if price is not None:
        summary.cost_usd = cost_usd(price, summary.input_tokens, summary.output_tokens)
    return summary
