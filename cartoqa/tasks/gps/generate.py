"""Generate the text-only GPS set: every task, split 60/10/30, written as a dataset.

    cartoqa gps generate OUT --per-task 3400 --seed 42

Each task draws from its own generator seeded by (seed, task), so a task's
samples do not depend on which other tasks are asked for.  The split is per
task, stratified by difficulty and region: samples are ordered by stratum
and dealt to train/dev/test in proportion, so every stratum is split
60/10/30 as nearly as whole samples allow, and the totals are exact.
Tasks whose answer is a city, a city's coordinate or a fact of the cities
named deal their own splits by city (``Sampler.split_of``,
``Sampler.split_pools``): no city of a test question is in a train sample
of the task; name disambiguation deals its name groups.
"""

from __future__ import annotations

import gc
import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cartoqa import __version__
from cartoqa.errors import CartoqaError
from cartoqa.records import Metadata, Prompt, Provenance, Sample
from cartoqa.stores import DatasetWriter

from ..spec import TaskSpec, get_task, registered_tasks
from ..templates import PromptSet, default_prompts, load_prompts
from ._cities import GEONAMES_SOURCE, load_cities
from ._sampling import SPLIT_SHARES, Sampler, deal_splits

__all__ = [
    "GPS_CREDITS",
    "SPLIT_SHARES",
    "GpsReport",
    "add_gps_samples",
    "assign_splits",
    "check_gps_tasks",
    "generate_gps",
    "gps_tasks",
    "gps_variants",
]


def gps_tasks() -> dict[str, TaskSpec]:
    """The GPS tasks a set holds by default, by name, in registration order: GPSBench's 17
    in the paper's question forms and its missing-data probe (every registered GPS task
    with a generator whose track is not "variant")."""
    return {
        name: spec
        for name, spec in registered_tasks().items()
        if spec.family == "gps" and spec.generator is not None and spec.track != "variant"
    }


def gps_variants() -> dict[str, TaskSpec]:
    """cartoqa's richer forms, by name, in registration order: made only when asked for by
    name; their track is "variant", so they never enter the Pure, Applied or overall
    scores."""
    return {
        name: spec
        for name, spec in registered_tasks().items()
        if spec.family == "gps" and spec.generator is not None and spec.track == "variant"
    }


def __getattr__(name: str) -> Any:
    """``GPS_TASKS`` and ``GPS_VARIANTS``, task name -> generator, read from the registry
    when asked for (``gps_tasks``, ``gps_variants``)."""
    if name == "GPS_TASKS":
        return {n: spec.generator for n, spec in gps_tasks().items()}
    if name == "GPS_VARIANTS":
        return {n: spec.generator for n, spec in gps_variants().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the one-line credit a user sees with a GPS set
GPS_CREDITS = (
    "City data: GeoNames (CC BY 4.0). Terrain: Köppen-Geiger zones (Rubel et al. 2016), "
    "GLOBE land/sea mask (NOAA)."
)


@dataclass
class GpsReport:
    path: Path
    samples: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    """Step -> seconds: ``cities`` (loading the table), ``generating`` (every task)."""
    task_seconds: dict[str, float] = field(default_factory=dict)
    """Task -> seconds to draw and write its samples (the first task to need a table, such
    as the name index, also pays for building it)."""
    rejected: dict[str, dict[str, int]] = field(default_factory=dict)
    """Task -> reason -> draws turned down as ambiguous (also in the manifest)."""


def assign_splits(strata: Sequence[str], rng: np.random.Generator) -> list[str]:
    """train/dev/test for each item, 60/10/30 within every stratum as nearly as possible and
    exactly over all items (``_sampling.deal_splits``)."""
    return deal_splits(strata, rng)


#: redraws of a repeated question after which a task gives up (none comes near it)
MAX_DUPLICATES_IN_A_ROW = 1000


def _seed(seed: int, task: str) -> list[int]:
    return [seed, int.from_bytes(hashlib.sha256(task.encode()).digest()[:4], "big")]


def check_gps_tasks(names: Sequence[str], per_task: int) -> None:
    """``CartoqaError`` for a name that is no GPS task or a count too small to split."""
    known, variants = gps_tasks(), gps_variants()
    unknown = sorted(set(names) - set(known) - set(variants))
    if unknown:
        raise CartoqaError(
            f"--tasks {','.join(unknown)}: not a GPS task; known: {', '.join(known)}; "
            f"variants: {', '.join(variants)}"
        )
    if per_task < 10:
        raise CartoqaError(f"--per-task {per_task}: need at least 10 to split 60/10/30")


def generate_gps(
    out: Path,
    *,
    per_task: int = 3400,
    seed: int = 42,
    tasks: Sequence[str] | None = None,
    overwrite: bool = False,
    on_task: Callable[[str, int], None] | None = None,
    prompts: Path | None = None,
) -> GpsReport:
    """Write ``per_task`` samples of each task (default: GPSBench's 17 and the probe; the
    variants only by name) to a dataset at ``out``.  ``cartoqa build`` makes the same
    samples, beside map tasks or alone (``add_gps_samples``)."""
    names = list(tasks or gps_tasks())
    check_gps_tasks(names, per_task)
    wording = load_prompts(prompts)  # a bad file is refused before any work
    report = GpsReport(path=Path(out))
    # the output is checked and locked before any work; an old dataset there stays whole
    # until the new one is complete
    with DatasetWriter(out, name=f"gps-seed{seed}", overwrite=overwrite) as writer:
        attribution = add_gps_samples(
            writer,
            report,
            per_task=per_task,
            seed=seed,
            tasks=names,
            on_task=on_task,
            prompts=wording,
        )
        writer.finish(
            seeds=[seed],
            attribution=attribution,
            rejected=report.rejected,
            prompts={"sha256": wording.sha256, "source": wording.source},
        )
    return report


def add_gps_samples(
    writer: DatasetWriter,
    report: GpsReport,
    *,
    per_task: int,
    seed: int,
    tasks: Sequence[str],
    on_task: Callable[[str, int], None] | None = None,
    prompts: PromptSet | None = None,
) -> list[str]:
    """Add ``per_task`` samples of each GPS task to an open ``writer``, recording counts,
    rejections and seconds in ``report``; returns the data's attribution lines.  Each task
    draws from its own generator seeded by (seed, task): its samples are the same whatever
    else the dataset holds."""
    check_gps_tasks(tasks, per_task)
    with _collector_paused():
        return _add_gps_samples(writer, report, per_task, seed, tasks, on_task, prompts)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a set is made: the tables loaded (GeoNames'
    rows, their names) are hundreds of thousands of long-lived objects that every full
    collection would walk again for nothing; the samples make no cycles to collect."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _add_gps_samples(
    writer: DatasetWriter,
    report: GpsReport,
    per_task: int,
    seed: int,
    tasks: Sequence[str],
    on_task: Callable[[str, int], None] | None,
    prompts: PromptSet | None,
) -> list[str]:
    wording = prompts or default_prompts()
    system = wording.text("gps.system")
    t0 = time.perf_counter()
    cities = load_cities()
    report.seconds["cities"] = time.perf_counter() - t0
    provenance_of: dict[str, Provenance] = {}
    t0 = time.perf_counter()
    for task in tasks:
        t_task = time.perf_counter()
        rng = np.random.default_rng(_seed(seed, task))
        sampler = Sampler(cities, rng, per_task, wording)
        spec = _spec(task)
        make = spec.generator
        assert make is not None  # check_gps_tasks: a GPS task with a generator
        drafts = []
        asked: set[str] = set()
        for n in range(per_task):
            d = make(sampler, n)
            tries = 0
            while d.text in asked:  # the same question twice (the same city drawn again)
                sampler.reject("duplicate")
                tries += 1
                if tries > MAX_DUPLICATES_IN_A_ROW:
                    raise CartoqaError(
                        f"{task}: {tries} questions in a row repeated an earlier one; the "
                        "wording cannot tell the draws apart, or the task has run out of them"
                    )
                d = make(sampler, n)
            asked.add(d.text)
            drafts.append(d)
        if all(d.split for d in drafts):  # the task dealt its own splits
            splits = [str(d.split) for d in drafts]
        else:
            splits = assign_splits([f"{d.difficulty}|{d.region}" for d in drafts], rng)
        prov = provenance_of.setdefault(
            task,
            Provenance(
                generator=f"cartoqa {__version__} tasks.gps.{task}",
                seed=seed,
                source="; ".join(filter(None, [GEONAMES_SOURCE, *spec.sources])),
                prompts_sha256=wording.sha256,
            ),
        )
        for n, (d, split) in enumerate(zip(drafts, splits, strict=True)):
            writer.add(
                Sample.model_construct(
                    id=f"{task}-{n:05d}",
                    task=task,
                    split=split,  # type: ignore[arg-type]
                    prompt=Prompt(text=d.text, system=system),
                    ground_truth=d.truth,
                    metadata=Metadata(
                        region=d.region, difficulty=d.difficulty, track=spec.track, **d.meta
                    ),
                    provenance=prov,
                )
            )
        report.samples[task] = len(drafts)
        report.task_seconds[task] = time.perf_counter() - t_task
        if sampler.rejected:
            report.rejected[task] = dict(sampler.rejected)
        if on_task:
            on_task(task, len(drafts))
    report.seconds["generating"] = time.perf_counter() - t0
    used = [source for t in tasks for source in _spec(t).sources]
    return [GEONAMES_SOURCE, *used]


def _spec(task: str) -> TaskSpec:
    spec = get_task(task)
    assert spec is not None  # check_gps_tasks said so
    return spec
