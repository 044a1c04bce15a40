"""Run a model over a dataset into a run store: resumable, concurrent, fault-tolerant.

``run_model`` sends every selected sample that has no successful response
in the store yet, writes each response (or its error) as soon as it comes,
and returns a ``RunSummary``.  A failed request is recorded with its sample
and the run goes on; run again and the failed samples are tried again.  Only
a ``ModelError`` (no request can succeed: a refused key, an unknown model)
or a stop request ends a run early; what was answered stays in the store.
A run pins the dataset it started on (``cartoqa.pinned``): each image is read once,
checked against the manifest the run loaded and sent from a private copy of those bytes (a
replaced one fails its sample, unsent); a dataset rebuilt or replaced under the run stops it
with a message saying what changed, every answer so far kept under the dataset it was asked
from.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from cartoqa.errors import CartoqaError, ModelError
from cartoqa.models import GenerationSettings, Model, Request, Response, price_for
from cartoqa.models.prices import cost_usd
from cartoqa.pinned import PinnedDataset
from cartoqa.records import RunRecord, Sample
from cartoqa.stores import Dataset, RunStore

__all__ = [
    "GPS_MAX_TOKENS",
    "MAP_MAX_TOKENS",
    "RunSummary",
    "default_max_tokens",
    "image_problem",
    "open_run_store",
    "run_model",
    "select_samples",
    "storable_record",
    "storable_text",
]

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


#: output tokens when a run does not say: GPSBench lets models write 8,192 (they reason at
#: length); CartoMapQA's answers are short
GPS_MAX_TOKENS = 8192
MAP_MAX_TOKENS = 1024


def default_max_tokens(samples: Sequence[Sample]) -> int:
    """8192 when every sample is a GPS question (its metadata names a track), else 1024."""
    if samples and all((s.metadata.model_extra or {}).get("track") for s in samples):
        return GPS_MAX_TOKENS
    return MAP_MAX_TOKENS


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
    mended: int = 0
    """Records whose response had to be mended to be stored (see ``RunRecord.note``)."""
    wall_s: float = 0.0
    stopped: str | None = None
    """Why the run ended early, or None when it went through."""
    failed_ids: list[str] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        """Samples still without a successful response."""
        return self.selected - self.skipped - self.answered

    @property
    def all_failed(self) -> bool:
        """This run sent requests and not one succeeded (a dead endpoint, a wrong URL)."""
        return self.failed > 0 and self.answered == 0


def _count(name: str, value: object, notes: list[str]) -> int | None:
    """A token count as stored: a whole number >= 0, else unknown (with a note)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    notes.append(f"{name}={value!r:.40} is not a count; stored as unknown")
    return None


def storable_text(text: str) -> tuple[str, bool]:
    """``text`` as JSON can store it: unpaired surrogates (from a JSON-escaped ``\\ud800``)
    written as the escape's six characters.  Returns (text, changed)."""
    try:
        text.encode("utf-8")
        return text, False
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8"), True


def storable_record(sample_id: str, spec: str, r: Response, *, attempt: int) -> RunRecord:
    """The run record of one response, whatever it holds: text made storable, counts that
    are not counts stored as unknown, each mend said in ``note``; a response that still
    cannot be stored becomes a failed record saying why (a sample fails alone)."""
    notes: list[str] = []
    text = r.text if r.ok else None
    if text is not None:
        text, changed = storable_text(text)
        if changed:
            notes.append("unpaired surrogates in the reply escaped as \\uXXXX")
    error = None if r.ok else storable_text(r.error or "the model returned no text")[0]
    latency = r.latency_s if isinstance(r.latency_s, int | float) and r.latency_s >= 0 else None
    try:
        return RunRecord(
            sample_id=sample_id,
            model=spec,
            response=text,
            error=error,
            latency_s=latency,
            input_tokens=_count("input_tokens", r.input_tokens, notes),
            output_tokens=_count("output_tokens", r.output_tokens, notes),
            attempt=attempt,
            retries=r.retries if isinstance(r.retries, int) and r.retries >= 0 else 0,
            image_tokens=_count("image_tokens", r.image_tokens, notes),
            note="; ".join(notes) or None,
        )
    except ValidationError as exc:
        return RunRecord(
            sample_id=sample_id,
            model=spec,
            error=f"the response could not be stored: {str(exc)[:300]}",
            attempt=attempt,
        )


def image_problem(dataset: Dataset, sample: Sample) -> str | None:
    """Why the sample's images cannot be sent, or None: each image's bytes are checked
    against the SHA-256 the dataset's manifest recorded (a dataset made before cartoqa
    recorded them is not checked).  A file replaced after the dataset was made (another map
    under the same name) would be answered and scored as if it were the question's."""
    pin = PinnedDataset(dataset)
    for rel in sample.prompt.images:
        _, problem = pin.read_image(rel)
        if problem is not None:
            return problem
    return None


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
    wait_s: float = 0.0,
) -> RunSummary:
    """Answer every sample of ``samples`` (default: the whole dataset) not yet answered in
    ``store``.  ``concurrency`` requests are in flight at once for thread-safe models (API
    adapters); other models get one caller and batches of their ``batch_size``.

    The run holds the store's writer lock throughout: another run of the same store is
    refused (``RunStoreError`` naming it) unless it ends within ``wait_s`` seconds.

    The run pins ``dataset`` as loaded: the images sent are private copies of the bytes its
    manifest recorded, and when the folder's dataset changes (rebuilt, replaced, deleted)
    the run stops (``RunSummary.stopped`` says what changed and to run again), or raises
    ``DatasetError`` when it changed before the run began."""
    if concurrency < 1:
        raise CartoqaError(f"concurrency={concurrency} must be at least 1")
    with store.claim_writer(wait_s=wait_s):
        store.refresh()  # what a run that held the lock before us wrote
        return _run(dataset, model, store, settings, samples, concurrency, price, on_record, stop)


def _run(
    dataset: Dataset,
    model: Model,
    store: RunStore,
    settings: GenerationSettings | None,
    samples: Sequence[Sample] | None,
    concurrency: int,
    price: tuple[float, float] | None,
    on_record: Callable[[RunRecord], None] | None,
    stop: threading.Event | None,
) -> RunSummary:
    settings = settings or GenerationSettings()
    pin = PinnedDataset(dataset, store=store.path)
    pin.check()  # (changed since it was loaded: nothing started yet)
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

    # the images sent: private copies of the bytes checked, one folder per sample
    has_images = any(s.prompt.images for s in pending)
    copies = Path(tempfile.mkdtemp(prefix="cartoqa-run-")) if has_images else None
    numbers = itertools.count()

    def request(s: Sample, images: tuple[Path, ...]) -> Request:
        return Request(
            id=s.id,
            text=s.prompt.text,
            system=s.prompt.system,
            images=images,
            settings=settings,
            sample=s,
        )

    def record(s: Sample, r: Response) -> None:
        rec = storable_record(s.id, model.spec, r, attempt=store.attempts(s.id) + 1)
        if not store.append(rec):  # another process answered it meanwhile
            return
        with lock:
            if rec.ok:
                summary.answered += 1
            else:
                summary.failed += 1
                summary.failed_ids.append(s.id)
            summary.retried += rec.retries > 0
            summary.retries += rec.retries
            summary.input_tokens += rec.input_tokens or 0
            summary.output_tokens += rec.output_tokens or 0
            if rec.note:
                summary.mended += 1
        if on_record:
            on_record(rec)

    def answer(chunk: list[Sample], requests: list[Request]) -> None:
        try:
            responses = model.generate(requests)
        except ModelError:
            raise
        except Exception as exc:  # one bad batch fails its samples, not the run
            log.warning("%s failed on %s", model.spec, [r.id for r in requests], exc_info=exc)
            why = f"the model raised {type(exc).__name__}: {str(exc)[:300]}"
            responses = [Response(text=None, error=why) for _ in requests]
        if len(responses) != len(requests):
            raise ModelError(
                f"{model.spec} returned {len(responses)} responses for {len(requests)} requests"
            )
        for s, r in zip(chunk, responses, strict=True):
            record(s, r)

    def worker() -> None:
        try:
            while not stop.is_set():
                try:
                    chunk = jobs.get_nowait()
                except queue.Empty:
                    return
                pin.check()  # the dataset rebuilt under the run: stop (DatasetError)
                folders: list[Path] = []
                try:
                    sent, requests = [], []
                    for s in chunk:  # a sample whose image was replaced fails alone, unsent
                        images: tuple[Path, ...] = ()
                        problem = None
                        if s.prompt.images and copies is not None:
                            folders.append(copies / str(next(numbers)))
                            images, problem = pin.pin_images(s, folders[-1])
                        if problem is None:
                            sent.append(s)
                            requests.append(request(s, images))
                        else:
                            record(s, Response(text=None, error=problem))
                    if requests:
                        answer(sent, requests)
                finally:
                    for folder in folders:
                        shutil.rmtree(folder, ignore_errors=True)
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
    finally:
        if copies is not None:
            if any(t.is_alive() for t in threads):  # an abandoned request may still read one
                atexit.register(shutil.rmtree, copies, ignore_errors=True)
            else:
                shutil.rmtree(copies, ignore_errors=True)
    summary.wall_s = time.perf_counter() - t0
    if errors and isinstance(errors[0], KeyboardInterrupt):
        summary.stopped = "interrupted; run the same command again to resume"
    elif errors:
        exc = errors[0]
        if not isinstance(exc, CartoqaError):  # ours say what happened and what to do
            log.error("runner thread failed", exc_info=exc)
        summary.stopped = (
            str(exc) if isinstance(exc, CartoqaError) else f"{type(exc).__name__}: {exc}"
        )
    elif stop.is_set() and summary.stopped is None and summary.remaining:
        summary.stopped = "stopped on request; run the same command again to resume"
    if price is not None:
        summary.cost_usd = cost_usd(price, summary.input_tokens, summary.output_tokens)
    return summary
