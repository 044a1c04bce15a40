"""Build a dataset of map tasks from one OSM extract: sample, render, write.

    report = build_dataset(Path("out"), extract=Path("monaco.osm.pbf"),
                           tasks=["srn", "rle", "mml"], per_task=20, seed=7)

The same extract, tasks, count and seed give the same samples (the same
``samples_sha256``).  Candidates that would make unfair questions are
rejected and counted by reason in the report; when the extract cannot give
``per_task`` samples within the attempt budget, the build writes what it
has, records the shortfall in the manifest and says how many are missing.  A
build that makes no sample of a task it was asked for raises ``BuildError``
(with the report, rejection reasons included) and writes no dataset.

The output folder is checked and locked first (``DatasetWriter``), before
any sampling or rendering: a folder that holds a dataset (without
``overwrite``), a file, an unwritable place or a folder another build is
writing is refused at once.

``workers=N`` (or ``ray="auto"``/an address) builds the same bytes in N processes (or Ray
actors): the view groups are sampled one per worker, the accepted maps rendered in contiguous
chunks, and the one writer here merges them in the order a single process uses
(``cartoqa.tasks.build_shards``; ``cartoqa.tasks.build_ray``).  Tasks that build themselves
(MFS) and GPS tasks stay in this process.  A worker that dies fails the build with
``BuildError`` and no dataset is written (a Ray actor's shard is retried once first).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cartoqa import __version__
from cartoqa.errors import CartoqaError
from cartoqa.records import OSM_ATTRIBUTION, Metadata, Prompt, Provenance, Sample
from cartoqa.stores import DatasetWriter

from .build_groups import (
    GroupResult,
    GroupShard,
    PerTask,
    count_of,
    maps_wanted,
    sample_group,
    why_stopped,
)
from .build_groups import task_spec as _spec
from .navigation import NAVIGATION_TASKS
from .spec import registered_tasks
from .templates import PromptSet, load_prompts
from .variants import parse_variants
from .variants.apply import BaseItem, make_variants
from .views import Plan

if TYPE_CHECKING:
    from maps import MapEngine

    from .build_shards import Pool

__all__ = [
    "BuildError",
    "BuildReport",
    "build_dataset",
    "buildable_tasks",
    "extract_tasks",
    "map_tasks",
    "maps_wanted",
]

log = logging.getLogger(__name__)

OSM_SOURCE = f"OpenStreetMap, ODbL 1.0, {OSM_ATTRIBUTION}"


@dataclass
class BuildReport:
    """What a build made and what it turned down."""

    path: Path
    samples: dict[str, int] = field(default_factory=dict)
    """Task -> samples written."""
    maps: dict[str, int] = field(default_factory=dict)
    """Task -> maps rendered."""
    wanted: dict[str, int] = field(default_factory=dict)
    """Task -> samples asked for."""
    rejected: dict[str, Counter[str]] = field(default_factory=dict)
    """Task -> reason -> candidates rejected for it."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Stage -> seconds: graph (roads and labels set-up), sampling, rendering, writing."""

    gave_up: dict[str, str] = field(default_factory=dict)
    """Task -> why sampling stopped before it had what was asked for."""
    extract_name: str = ""
    """The extract the map tasks came from ("" when there were none)."""
    credits: list[str] = field(default_factory=list)
    """Credits other than OSM's and GeoNames' that the data asks for (MFS: the legend's)."""
    workers: int = 1
    """Processes or Ray actors that sampled and rendered the map views (1: this process)."""
    retried: list[str] = field(default_factory=list)
    """Shards run again on a new Ray actor after theirs died (what and why)."""
    variants: dict[str, Any] = field(default_factory=dict)
    """The paired variants made and left out (the manifest's ``variants``; empty when none
    was asked: ``cartoqa.tasks.variants.apply.VariantReport.manifest``)."""

    @property
    def short(self) -> dict[str, int]:
        """Task -> samples missing (the extract ran out of fair candidates)."""
        return {
            t: self.wanted[t] - self.samples.get(t, 0)
            for t in self.wanted
            if self.samples.get(t, 0) < self.wanted[t]
        }


@dataclass(frozen=True)
class OwnBuild:
    """What a task that builds itself (``TaskSpec.builder``) is given."""

    task: str
    per_task: int
    seed: int
    prompts: PromptSet
    cache: Path | None = None
    carto_files: Path | None = None
    dsn: str | None = None
    progress: bool = True
    strict: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    """The build's task options (``build_dataset(task_options=...)``: MFS's CLIP weights)."""


class BuildError(CartoqaError):
    """A build that could make nothing of a task it was asked for; ``report`` says why."""

    def __init__(self, message: str, report: BuildReport) -> None:
        super().__init__(message)
        self.report = report


def build_dataset(
    out: Path,
    *,
    extract: Path | None = None,
    tasks: Sequence[str] = NAVIGATION_TASKS,
    per_task: PerTask = 10,
    seed: int = 0,
    carto_files: Path | None = None,
    cache: Path | None = None,
    dsn: str | None = None,
    overwrite: bool = False,
    progress: bool = True,
    on_plan: Callable[[], None] | None = None,
    on_attempt: Callable[[str, int, int], None] | None = None,
    engine: MapEngine | None = None,
    strict: bool = False,
    repeat_places: bool = False,
    prompts: Path | None = None,
    task_options: Mapping[str, Any] | None = None,
    workers: int | None = 1,
    ray: str | None = None,
    variants: Sequence[str] = (),
) -> BuildReport:
    """Sample ``per_task`` questions of each task (one count for all, or a mapping of task
    name to count covering every task asked) from ``extract`` (default: the embedded one),
    render their maps and write a dataset folder at ``out``.  RLE asks each map in metres and
    in feet, so it renders ``ceil(per_task / 2)`` maps for ``per_task`` (rounded up to even)
    questions.  ``engine`` reuses a ``MapEngine`` (its extract wins over ``extract``).
    ``on_attempt(task, made, rejected)`` is called after every candidate (for progress).
    ``strict`` makes a shortfall an error (``BuildError``, no dataset written);
    ``repeat_places`` allows several questions of one junction or origin-destination pair;
    ``prompts`` is a TOML file of prompt templates to word the questions with instead of the
    package's (``cartoqa.tasks.templates``; its hash goes to the manifest and provenance);
    ``task_options`` go to the tasks that build themselves (``TaskSpec.builder``: MFS takes
    ``clip_checkpoint``, ``clip_hub``, ``clip_model``, ``clip_random_weights``,
    ``clip_seed``, and ``mfs_only``, a list of "category:key=value" entries to draw instead
    of the whole catalogue).
    ``workers``: processes that sample and render the map views (the same bytes whatever the
    number); ``ray``: "auto" or a Ray cluster's address to run them as Ray actors instead
    (``workers`` actors, or one per CPU of the cluster when None; the ``ray`` extra).
    ``variants``: paired variants to add beside each map-view sample ("text", "image+text",
    "coords", "greyscale", "nolabels": ``cartoqa.tasks.variants``), made in this process."""
    from .gps.generate import GpsReport, add_gps_samples, check_gps_tasks

    known = buildable_tasks()
    unknown = sorted(set(tasks) - set(known))
    if unknown:
        raise CartoqaError(
            f"--tasks {','.join(unknown)}: not a task this build makes; use some of "
            f"{', '.join(known)}"
        )
    per_task = _checked_counts(per_task, tasks)
    variants = parse_variants(variants)
    if ray is None and workers is None:
        workers = 1
    if workers is not None and workers < 1:
        raise CartoqaError(f"--workers {workers} must be at least 1 (1 builds in this process)")
    if ray is not None and not ray.strip():
        raise CartoqaError("--ray '': give 'auto' or a Ray cluster's address (HOST:PORT)")
    on_map = [t for t in tasks if _spec(t).family == "map"]
    own = [t for t in on_map if _spec(t).builder is not None]
    on_views = [t for t in on_map if t not in own]
    on_gps = [t for t in tasks if _spec(t).family == "gps"]
    if on_gps:
        gps_count = _gps_count(per_task, on_gps)
        check_gps_tasks(on_gps, gps_count)
    wording = load_prompts(prompts)  # a bad file is refused before any work
    report = BuildReport(path=Path(out))
    # checks and locks the output first: nothing is sampled or rendered for a folder we
    # cannot write; the old dataset there (with overwrite) stays until the new one is in
    writer = DatasetWriter(out, name=f"gps-seed{seed}", overwrite=overwrite)
    try:
        finish: dict[str, Any] = {
            "seeds": [seed],
            "attribution": [],
            "rejected": {},
            "prompts": {"sha256": wording.sha256, "source": wording.source},
        }
        if on_views:
            finish |= _build(
                writer,
                report,
                extract=extract,
                tasks=on_views,
                per_task=per_task,
                seed=seed,
                carto_files=carto_files,
                cache=cache,
                dsn=dsn,
                progress=progress,
                on_plan=on_plan,
                on_attempt=on_attempt,
                engine=engine,
                strict=strict,
                repeat_places=repeat_places,
                prompts=wording,
                workers=workers,
                ray=ray,
                variants=variants,
            )
        if own and not on_views:
            writer.name = f"legend-seed{seed}"
        for task in own:
            builder = _spec(task).builder
            assert builder is not None
            job = OwnBuild(
                task=task,
                per_task=count_of(task, per_task),
                seed=seed,
                prompts=wording,
                cache=cache,
                carto_files=carto_files,
                dsn=dsn,
                progress=progress,
                strict=strict,
                options=dict(task_options or {}),
            )
            finish = _merge(finish, builder(writer, report, job))
        if on_map:
            finish["shortfall"] = report.short
            finish["rejected"] = {**finish["rejected"], **report.rejected}
        if on_gps:  # the same samples as ``cartoqa gps generate`` makes of these tasks
            t0 = time.perf_counter()
            gps = GpsReport(path=Path(out))
            finish["attribution"] = [
                *finish["attribution"],
                *add_gps_samples(
                    writer, gps, per_task=gps_count, seed=seed, tasks=on_gps, prompts=wording
                ),
            ]
            for task in on_gps:
                report.wanted[task] = report.samples[task] = gps.samples[task]
                report.rejected[task] = Counter(gps.rejected.get(task, {}))
            finish["rejected"] = {**finish["rejected"], **report.rejected}
            if on_map:
                writer.name = "cartoqa-" + writer.name.split("-", 1)[1]
            report.seconds["gps"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        writer.finish(**finish)
        report.seconds["writing"] = report.seconds.get("writing", 0.0) + time.perf_counter() - t0
    finally:
        writer.abandon()  # a no-op after finish
    if on_map:
        _warn_short(report, per_task)
    return report


def _merge(finish: dict[str, Any], part: Mapping[str, Any]) -> dict[str, Any]:
    """``finish`` with what a task's own builder returned: lists joined (without repeats),
    dicts joined, anything else set where ``finish`` has none."""
    out = dict(finish)
    for key, value in part.items():
        have = out.get(key)
        if isinstance(value, list):
            out[key] = [*(have or []), *(v for v in value if v not in (have or []))]
        elif isinstance(value, dict):
            out[key] = {**(have or {}), **value}
        elif have is None:
            out[key] = value
    return out


def _build(
    writer: DatasetWriter,
    report: BuildReport,
    *,
    extract: Path | None,
    tasks: Sequence[str],
    per_task: PerTask,
    seed: int,
    carto_files: Path | None,
    cache: Path | None,
    dsn: str | None,
    progress: bool,
    on_plan: Callable[[], None] | None,
    on_attempt: Callable[[str, int, int], None] | None,
    engine: MapEngine | None,
    strict: bool,
    repeat_places: bool,
    prompts: PromptSet,
    workers: int | None = 1,
    ray: str | None = None,
    variants: Sequence[str] = (),
) -> dict[str, Any]:
    """Sample, render and add the map tasks' samples to ``writer``; returns what
    ``writer.finish`` must record of them."""
    from maps import MapEngine
    from maps.roads import load_road_graph

    t0 = time.perf_counter()
    # the database (the private cluster started, the extract imported) and the road graph's
    # cache are made here, before any worker starts: workers find them and never race
    engine = engine or MapEngine(extract, carto_files=carto_files, cache=cache, dsn=dsn)
    roads = load_road_graph(engine.extract, cache=cache)
    #: tasks that share views (``TaskSpec.views``) are sampled as one group, in the order asked
    groups: dict[str, list[str]] = {}
    for task in tasks:
        groups.setdefault(_spec(task).views or task, []).append(task)
    shards = [
        GroupShard(seed, group, tuple(members), per_task, repeat_places, prompts)
        for group, members in groups.items()
    ]
    with contextlib.ExitStack() as stack:
        pool = None
        if workers != 1 or ray is not None:
            from .build_shards import WorkerLostError

            pool = stack.enter_context(
                open_pool(
                    engine, workers=workers, ray=ray, carto_files=carto_files, cache=cache, dsn=dsn
                )
            )
            report.workers = pool.size
        else:
            from maps.labels import RoadLabels

            labels = RoadLabels(engine)
        report.seconds["graph"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        if pool is None:
            results = [
                sample_group(
                    s, roads, labels, engine.extract, on_plan=on_plan, on_attempt=on_attempt
                )
                for s in shards
            ]
        else:
            try:
                results = pool.sample(shards, on_done=_progress(on_plan, on_attempt))
            except WorkerLostError as exc:
                report.retried = list(pool.retried)
                raise BuildError(str(exc), report) from None
        plans: list[Plan] = []
        for shard, result in zip(shards, results, strict=True):
            members = list(shard.members)
            n_maps = max(maps_wanted(t, per_task) for t in members)
            for t in members:
                report.wanted[t] = maps_wanted(t, per_task) * _spec(t).questions_per_map
                report.rejected[t] = result.rejected
                report.maps[t] = sum(
                    any((q.task or p.task) == t for q in p.questions) for p in result.plans
                )
                if report.maps[t] < maps_wanted(t, per_task):
                    report.gave_up[t] = why_stopped(result.plans, n_maps, result.rejected)
            plans += result.plans
        if strict and report.gave_up:
            raise BuildError(
                f"{engine.extract.name}: --strict and "
                + "; ".join(
                    f"{t}: {report.maps.get(t, 0)} of {maps_wanted(t, per_task)} maps ({why})"
                    for t, why in report.gave_up.items()
                )
                + ", so no dataset was written. Ask for fewer, or use a larger extract.",
                report,
            )
        empty = [t for t in tasks if report.maps.get(t, 0) == 0]
        if empty:
            raise BuildError(
                f"{engine.extract.name}: no {', '.join(empty)} question could be made from this "
                "extract, so no dataset was written. Rejections: "
                + "; ".join(
                    f"{t}: " + (", ".join(f"{r} {n}" for r, n in report.rejected[t].most_common(4)))
                    for t in empty
                )
                + ". Use a larger extract, or leave these tasks out with --tasks.",
                report,
            )
        label_seconds = sum(r.label_seconds for r in results)
        # with workers, label checks ran side by side: sampling is the stage's wall time less
        # its share of them
        wall = time.perf_counter() - t0
        report.seconds["sampling"] = max(0.0, wall - label_seconds / report.workers)
        report.seconds["labels"] = label_seconds

        t0 = time.perf_counter()
        views = [p.view for p in plans]
        if pool is None:
            pngs = [shot.png for shot in engine.render_many(views, progress=progress)]
        else:
            try:
                pngs = pool.render(views)
            except WorkerLostError as exc:
                report.retried = list(pool.retried)
                raise BuildError(str(exc), report) from None
            report.retried = list(pool.retried)
        report.seconds["rendering"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    # "navigation-" when every task asked is one of those (the name such datasets had)
    kind = "navigation" if set(tasks) <= set(NAVIGATION_TASKS) else "maps"
    writer.name = f"{kind}-{engine.extract.name}-seed{seed}"
    items: list[BaseItem] = []
    for plan, png in zip(plans, pngs, strict=True):
        image = writer.add_image(f"{plan.view.id}.png", png)
        for q in plan.questions:
            task = q.task or plan.task
            sample = Sample(
                id=f"{plan.view.id}{q.suffix}",
                task=task,
                prompt=Prompt(text=q.text, images=[image]),
                ground_truth=q.truth,
                metadata=Metadata(city=engine.extract.name, **q.metadata),
                provenance=Provenance(
                    generator=f"cartoqa {__version__} {_made_by(task)}",
                    seed=seed,
                    extract_hash=engine.extract.sha256,
                    style_version=engine.style.version,
                    source=OSM_SOURCE,
                    prompts_sha256=prompts.sha256,
                ),
            )
            writer.add(sample)
            if variants:
                items.append(BaseItem(plan, q, sample, png))
            report.samples[task] = report.samples.get(task, 0) + 1
    made: dict[str, Any] = {}
    if variants:
        t1 = time.perf_counter()
        found = make_variants(
            items,
            variants,
            engine=engine,
            roads=roads,
            prompts=prompts,
            add_image=writer.add_image,
            add_sample=writer.add,
            spec_of=_spec,
            progress=progress,
        )
        made = {"variants": found.manifest()}
        report.variants = found.manifest()
        report.seconds["variants"] = time.perf_counter() - t1
    report.seconds["writing"] = time.perf_counter() - t0 - report.seconds.get("variants", 0.0)
    report.extract_name = engine.extract.name
    return {
        "extract_hashes": {engine.extract.name: engine.extract.sha256},
        "style_version": engine.style.version,
        "attribution": [OSM_ATTRIBUTION],
        "shortfall": report.short,
        "rejected": dict(report.rejected),
        **made,
    }


def _progress(
    on_plan: Callable[[], None] | None, on_attempt: Callable[[str, int, int], None] | None
) -> Callable[[GroupShard, GroupResult], None]:
    """What to tell the caller when a worker has sampled a group (once per group)."""

    def done(shard: GroupShard, result: GroupResult) -> None:
        for _ in result.plans:
            if on_plan:
                on_plan()
        if on_attempt:
            on_attempt(shard.members[0], len(result.plans), sum(result.rejected.values()))

    return done


def _warn_short(report: BuildReport, per_task: PerTask) -> None:
    for task in report.short:
        log.warning(
            "%s: %d of %d %s samples made; the extract ran out of fair candidates (%s)",
            report.extract_name,
            report.samples.get(task, 0),
            report.wanted[task],
            task,
            ", ".join(f"{r} {n}" for r, n in report.rejected.get(task, Counter()).most_common(4))
            or report.gave_up.get(task, ""),
        )


def _checked_counts(per_task: PerTask, tasks: Sequence[str]) -> PerTask:
    """``per_task`` checked: every count at least 1, and a count per task for each task asked
    (and no other); a mapping becomes a plain dict (picklable for workers)."""
    if isinstance(per_task, int):
        if per_task < 1:
            raise CartoqaError(f"--per-task {per_task} must be at least 1")
        return per_task
    counts = dict(per_task)
    missing = [t for t in tasks if t not in counts]
    extra = sorted(set(counts) - set(tasks))
    if missing or extra:
        raise CartoqaError(
            "--per-task gives "
            + ", ".join(f"{t}={n}" for t, n in counts.items())
            + (f"; no count for {', '.join(missing)}" if missing else "")
            + (f"; {', '.join(extra)} not asked for in --tasks" if extra else "")
            + ": give one count for all tasks (--per-task 10) or one for each task asked"
        )
    low = [f"{t}={n}" for t, n in counts.items() if not isinstance(n, int) or n < 1]
    if low:
        raise CartoqaError(f"--per-task {', '.join(low)}: each count must be a whole number >= 1")
    return counts


def _gps_count(per_task: PerTask, on_gps: Sequence[str]) -> int:
    """The one count the GPS tasks of a build share (GPS sets are made with one count)."""
    counts = sorted({count_of(t, per_task) for t in on_gps})
    if len(counts) > 1:
        raise CartoqaError(
            f"--per-task: the GPS tasks {', '.join(on_gps)} are given different counts "
            f"({', '.join(map(str, counts))}); GPS tasks are made with one count: give them "
            "the same"
        )
    return counts[0]


def _made_by(task: str) -> str:
    """ "tasks.navigation.srn": the module of the task's generator, and the task."""
    module = getattr(_spec(task).generator, "__module__", None) or "unknown"
    return f"{module.removeprefix('cartoqa.')}.{task}"


def buildable_tasks() -> list[str]:
    """Every registered task a build can make: the map tasks with a generator, then the GPS
    tasks (GPSBench's and the variants)."""
    from .gps.generate import GPS_TASKS, GPS_VARIANTS

    return [*map_tasks(), *GPS_TASKS, *GPS_VARIANTS]


def map_tasks() -> list[str]:
    """The registered map tasks that have a generator or build themselves, in registration
    order."""
    return [
        n for n, s in registered_tasks().items() if s.family == "map" and (s.generator or s.builder)
    ]


def extract_tasks() -> list[str]:
    """The registered map tasks made from an extract's views (a generator; not those that
    build themselves, as MFS does from the legend), in registration order."""
    return [n for n, s in registered_tasks().items() if s.family == "map" and s.generator]


@contextlib.contextmanager
def open_pool(
    engine: MapEngine,
    *,
    workers: int | None,
    ray: str | None,
    carto_files: Path | None,
    cache: Path | None,
    dsn: str | None,
) -> Iterator[Pool]:
    """The pool of a build: ``workers`` local processes, or Ray actors when ``ray`` is set
    (``workers`` of them, or one per CPU of the cluster when None); closed on the way out."""
    from .build_shards import EngineSpec, LocalPool

    spec = EngineSpec.of(engine, carto_files=carto_files, cache=cache, dsn=dsn)
    pool: Any
    if ray is not None:
        from .build_ray import RayPool

        pool = RayPool(spec, address=ray, size=workers)
    else:
        assert workers is not None
        pool = LocalPool(spec, workers)
    failed = True
    try:
        yield pool
        failed = False
    finally:
        pool.close(failed=failed)
