"""Sampling one view group of a map build: the tasks that share views, drawn by one
``ViewSampler`` seeded by the build's seed and the group.

A group's plans depend only on its ``GroupShard`` (and the extract), not on which process
samples it: ``cartoqa.tasks.build`` samples groups in turn, ``cartoqa.tasks.build_shards``
and ``cartoqa.tasks.build_ray`` in workers, with the same bytes.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cartoqa.errors import CartoqaError

from .spec import TaskSpec, get_task
from .templates import PromptSet
from .views import Plan, Reject, ViewSampler

__all__ = [
    "ATTEMPTS_PER_MAP",
    "MAX_REJECTIONS_IN_A_ROW",
    "GroupResult",
    "GroupShard",
    "PerTask",
    "count_of",
    "maps_wanted",
    "sample_group",
    "task_spec",
    "why_stopped",
]

#: candidates tried per wanted map before the build gives up on a task
ATTEMPTS_PER_MAP = 80
#: rejections in a row after which a task is given up: the extract has no more fair
#: candidates (bounds a --per-task far beyond what a small extract holds)
MAX_REJECTIONS_IN_A_ROW = 2000


PerTask = int | Mapping[str, int]
"""Questions wanted of each task: one count for all, or a count per task name."""


@dataclass
class GroupShard:
    """One view group (tasks sharing views, ``TaskSpec.views``) to sample: a worker's share of
    a build.  Its plans depend only on these fields (and the extract), not on who samples it."""

    seed: int
    group: str
    members: tuple[str, ...]
    per_task: PerTask
    repeat_places: bool
    prompts: PromptSet


@dataclass
class GroupResult:
    """What sampling a ``GroupShard`` made."""

    plans: list[Plan]
    rejected: Counter[str]
    label_seconds: float
    """Seconds the label checks took (``RoadLabels`` and the generators' own)."""


def sample_group(
    shard: GroupShard,
    roads: Any,
    labels: Any,
    extract: Any,
    *,
    on_plan: Callable[[], None] | None = None,
    on_attempt: Callable[[str, int, int], None] | None = None,
) -> GroupResult:
    """Sample one view group with its own ``ViewSampler`` (seeded by the build's seed and the
    group): the same plans in this process or in a worker."""
    members = list(shard.members)
    n_maps = max(maps_wanted(t, shard.per_task) for t in members)
    sampler = ViewSampler(
        roads,
        labels,
        extract.bounds,
        _task_seed(shard.seed, shard.group),
        covered_share=extract.covered_share,
        repeat_places=shard.repeat_places,
        prompts=shard.prompts,
    )
    rejected: Counter[str] = Counter()
    before = _label_seconds(labels)
    plans = _plans(sampler, members[0], n_maps, rejected, on_plan, on_attempt)
    if len(members) > 1 or task_spec(members[0]).views:
        plans = _keep_asked(plans, members, shard.per_task)
    seconds = _label_seconds(labels) - before
    seconds += sum(_label_seconds(s) for s in sampler.state.values())
    return GroupResult(plans=plans, rejected=rejected, label_seconds=seconds)


def _task_seed(seed: int, task: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{task}".encode()).digest()[:8], "big")


def _plans(
    sampler: ViewSampler,
    task: str,
    n_maps: int,
    rejected: Counter[str],
    on_plan: Callable[[], None] | None,
    on_attempt: Callable[[str, int, int], None] | None = None,
) -> list[Plan]:
    plans: list[Plan] = []
    attempts = 0
    in_a_row = 0
    make = task_spec(task).generator
    assert make is not None
    while len(plans) < n_maps and attempts < ATTEMPTS_PER_MAP * n_maps:
        if in_a_row >= MAX_REJECTIONS_IN_A_ROW:
            break
        attempts += 1
        i = len(plans)
        try:
            plan = make(sampler, i)
        except Reject as r:
            rejected[r.reason] += 1
            in_a_row += 1
            if on_attempt:
                on_attempt(task, len(plans), sum(rejected.values()))
            continue
        in_a_row = 0
        plans.append(plan)
        if on_plan:
            on_plan()
        if on_attempt:
            on_attempt(task, len(plans), sum(rejected.values()))
    return plans


def _keep_asked(plans: list[Plan], members: list[str], per_task: PerTask) -> list[Plan]:
    """A view group's plans with the questions of the tasks asked for only, each task's on
    its first ``maps_wanted`` maps (a task asking two questions a map needs half as many);
    maps left with no question are dropped."""
    kept = []
    for n, plan in enumerate(plans):
        questions = [
            q
            for q in plan.questions
            if (q.task or plan.task) in members and n < maps_wanted(q.task or plan.task, per_task)
        ]
        if questions:
            plan.questions = questions
            kept.append(plan)
    return kept


def task_spec(task: str) -> TaskSpec:
    spec = get_task(task)
    if spec is None:
        raise CartoqaError(f"task {task!r} is not registered")
    return spec


def count_of(task: str, per_task: PerTask) -> int:
    """The questions wanted of ``task``: ``per_task`` itself, or its entry for the task."""
    return per_task if isinstance(per_task, int) else per_task[task]


def maps_wanted(task: str, per_task: PerTask) -> int:
    """Maps to render for ``per_task`` questions (RLE asks each map twice: metres, feet)."""
    return math.ceil(count_of(task, per_task) / task_spec(task).questions_per_map)


def why_stopped(plans: list[Plan], n_maps: int, rejected: Counter[str]) -> str:
    tried = len(plans) + sum(rejected.values())
    if tried >= ATTEMPTS_PER_MAP * n_maps:
        return f"tried {tried} candidates ({ATTEMPTS_PER_MAP} per map asked for)"
    return f"{MAX_REJECTIONS_IN_A_ROW} candidates in a row were rejected"


def _label_seconds(labels: object) -> float:
    return float(getattr(labels, "seconds", 0.0))
