"""One seam for tasks: a ``TaskSpec`` per task, registered once, looked up by name.

A spec holds what build, run, score, the baselines and ``cartoqa tasks`` need
to know about a task, so none of them names a task:

    register_task(TaskSpec(name="distance", family="gps", track="pure", ...))
    spec = get_task("distance")
    score = spec.score(sample, response)          # a SampleScore
    table = spec.scores_table(rows)               # group -> metric -> value

The modules that register tasks are found through the entry-point group
``cartoqa.tasks`` (``cartoqa.records.tasks.load_task_modules``): cartoqa's
``pyproject.toml`` declares ``cartoqa.tasks.builtin``, which imports its own
(``cartoqa.tasks.navigation``, ``.gps``, ``.poi``, ``.mfs``), and a distribution
installed beside cartoqa adds its own the same way (the docs' "Adding a task").  ``get_task`` and
``registered_tasks`` load the group on first use, whatever was imported
before.  A task defined in a program or a test may also call
``register_task`` with its spec.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from cartoqa.errors import CartoqaError
from cartoqa.records import Sample
from cartoqa.records.scores import SampleScore
from cartoqa.records.tasks import declare_truth_kinds, load_task_modules

from .templates import bring_templates, brought_templates, package_keys, parse_template

__all__ = [
    "Reduce",
    "Scorer",
    "Table",
    "TaskSpec",
    "get_task",
    "grouped_table",
    "register_task",
    "registered_tasks",
    "task_templates",
]

Scorer = Callable[[Sample, "str | None"], SampleScore]
"""(sample, raw response or None) -> SampleScore; pure, never raises."""
Reduce = Callable[[Sequence[tuple[Sample, SampleScore]]], dict[str, float]]
"""Scored samples -> metric name -> value."""
Table = dict[str, dict[str, float]]
"""group ("all", "zoom=18", ...) -> metric -> value."""


def grouped_table(
    rows: Sequence[tuple[Sample, SampleScore]], reduce: Reduce, group_by: Sequence[str]
) -> Table:
    """``{"all": reduce(rows)}`` and one row per value of each metadata key in ``group_by``
    ("zoom=18"), in the order of the values written out; a key no sample carries gives no
    rows, and samples without it are the group "None".  "split" is the sample's split."""
    table: Table = {"all": reduce(rows)}
    for key in group_by:
        values = [_group_value(row[0], key) for row in rows]
        if all(v is None for v in values):
            continue
        groups: dict[str, list[tuple[Sample, SampleScore]]] = {}
        for row, value in zip(rows, values, strict=True):
            if str(value) == "all":
                raise CartoqaError(
                    f"sample {row[0].id}: its {key} is 'all', the name of the overall row; "
                    "give the metadata another value"
                )
            groups.setdefault(str(value), []).append(row)
        for value in sorted(groups):
            table[f"{key}={value}"] = reduce(groups[value])
    return table


def _group_value(sample: Sample, key: str) -> Any:
    if key == "split":
        return sample.split
    md = sample.metadata
    # the declared fields, then the extra ones (getattr would try both, more slowly)
    value = vars(md).get(key)
    return value if value is not None else (md.model_extra or {}).get(key)


@dataclass(frozen=True)
class TaskSpec:
    """Everything cartoqa needs to know about one task."""

    name: str
    """Letters, digits and underscores: the ``task`` of its samples."""
    family: Literal["map", "gps"]
    """Map tasks show an image; GPS tasks are text only."""
    track: str
    """Where its score counts: "cartomapqa" for map tasks; GPSBench's "pure", "applied",
    "probe" (missing data, counted in Applied) or "variant" (counted nowhere)."""
    description: str
    """One line for ``cartoqa tasks``."""
    truth_kinds: frozenset[str]
    """The ground-truth kinds its samples may carry."""
    score: Scorer
    """The scorer: (sample, response) -> SampleScore."""
    reduce: Reduce
    """Its metrics: scored samples -> metric -> value."""
    metrics: tuple[str, ...]
    """The names ``reduce`` gives, for ``cartoqa tasks``."""
    group_by: tuple[str, ...] = ()
    """Metadata keys its breakdowns group by ("split" is the sample's split)."""
    table: Callable[[Sequence[tuple[Sample, SampleScore]]], Table] | None = None
    """A table of its own shape, where the default (``grouped_table`` over ``group_by``)
    does not fit (RLE: one table per unit)."""
    answer_format: Callable[[Sample], str] | None = None
    """What the oracle writes; None: the ground truth writes itself (``answer_text()``)."""
    answer_space: Mapping[str, Any] = field(default_factory=dict)
    """What the random baseline draws from where the truth's kind alone does not say (a
    number's range: {"low": 0, "high": 360})."""
    generator: Callable[..., Any] | None = None
    """What makes one question, in the form its family's builder calls: map tasks
    ``(ViewSampler, i) -> Plan`` (``cartoqa.tasks.views``), GPS tasks
    ``(Sampler, n) -> Draft`` (``cartoqa.tasks.gps``); None for a task scored here but
    made elsewhere (a map task that builds itself has a ``builder`` instead)."""
    questions_per_map: int = 1
    """Map tasks: questions asked of each rendered map (RLE: 2, metres and feet)."""
    views: str = ""
    """Map tasks that share their views name the same group here (STMF's three requests and
    MTMF: "map_features"); the build draws one series of views for the group with the
    generator of its first task asked for, which returns every member's questions
    (``Question.task``), and renders each view once.  "" : the task's views are its own."""
    builder: Callable[..., Any] | None = None
    """A map task whose images are not views of an extract makes its samples itself (MFS:
    legend images): ``(writer, report, OwnBuild) -> dict`` of what the manifest records of
    them (``cartoqa.tasks.build.OwnBuild``).  It needs no extract, and has no generator."""
    modes: Mapping[str, Scorer] = field(default_factory=dict)
    """Other scorers by mode name, where a task can also be scored another way ("original":
    the published CartoMapQA arithmetic); the default mode is "cartoqa"."""
    mode_tables: Mapping[str, Callable[[Sequence[tuple[Sample, SampleScore]]], Table]] = field(
        default_factory=dict
    )
    """The table of a mode whose metrics are reduced another way (the published CartoMapQA
    arithmetic's averages, denominators and rounding); a mode without one uses ``table`` or
    ``reduce``."""
    release: Any = None
    """Where the published CartoMapQA release holds this task: a
    ``cartoqa.tasks.release.form.ReleaseForm`` (read by ``cartoqa import-release`` and
    ``score-release``, written by ``cartoqa export --to cartomapqa``); None for a task the
    release does not have."""
    templates: Mapping[str, str] = field(default_factory=dict)
    """Prompt templates the task brings with it, by dotted key ("map.toy_count": "How many
    ..."), for a task defined outside the package; the built-in tasks' wording is in
    ``cartoqa/tasks/prompts/*.toml``.  They join the package's (``cartoqa.tasks.templates``),
    and ``--prompts FILE`` may replace them like any other."""
    headline: str = ""
    """The metric a report sums the task up by (with its interval); "": the first of
    ``metrics``."""
    sources: tuple[str, ...] = ()
    """Where the task's data come from besides its family's common source, one credit line
    each (GPS tasks: GeoNames cities15000 is the common one; place association adds
    cities1000's provinces): they join the dataset's provenance and attribution."""
    describe: Callable[..., str] | None = None
    """The ``text`` and ``image+text`` variants (``cartoqa.tasks.variants``): the view written
    out as text, ``(plan, question, roads) -> str`` (a ``views.Plan``, one of its
    ``Question``s, the extract's ``maps.roads.RoadGraph``), holding everything the question's
    answer needs; None: the task has no text twin."""
    needs_labels: Callable[[Any], bool] | None = None
    """The ``nolabels`` variant: whether a question (a ``views.Question``) can only be
    answered by reading the map's labels (road or place names); such questions are flagged
    unanswerable under ``nolabels`` and never scored as ordinary misses (``view_truth`` is not
    asked of them there).  None: no question of the task needs labels."""
    view_truth: Callable[..., Any] | None = None
    """A variant that draws the question's place again, with another style (``nolabels``,
    ``lang:XX``) or at another zoom (``zoom``): ``(plan, question, engine, view, roads) ->
    GroundTruth | str``, the question's truth recomputed from what ``engine`` draws of
    ``view`` (a ``maps.View`` of the same place and markers; ``roads`` the extract's
    ``maps.roads.RoadGraph``), or a reason (a word such as
    "road_name_not_drawn") where it cannot be kept, and the item is left out of that variant
    and counted.  With the engine and view the question was planned on it gives the
    question's own truth.  The attribute None: the task's truths do not depend on the style
    or zoom (RLE's length: they are kept)."""
    version: str = "1"
    """The scorer's version: bump when the scorer's arithmetic changes (stored scores made
    by another version are then computed afresh)."""

    def scorer(self, mode: str = "cartoqa") -> Scorer:
        """The scorer of ``mode`` ("cartoqa", or one of ``modes``; others fall back to
        "cartoqa")."""
        return self.modes.get(mode, self.score)

    def scores_table(
        self, rows: Sequence[tuple[Sample, SampleScore]], mode: str = "cartoqa"
    ) -> Table:
        """The task's table of metrics, overall and broken down (``mode``'s own table where
        it has one: ``mode_tables``)."""
        if mode in self.mode_tables:
            return self.mode_tables[mode](rows)
        if self.table is not None:
            return self.table(rows)
        return grouped_table(rows, self.reduce, self.group_by)


_REGISTRY: dict[str, TaskSpec] = {}


def register_task(spec: TaskSpec, *, replace: bool = False) -> TaskSpec:
    """Add a task (the one way in).  Its name and truth kinds are declared to the sample
    schema too, so its samples load.  A second spec of the same name is refused unless
    ``replace``."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", spec.name or ""):
        raise CartoqaError(f"task name {spec.name!r} must be letters, digits and underscores")
    if spec.name in _REGISTRY and not replace:
        raise CartoqaError(f"task {spec.name!r} is registered already (pass replace=True)")
    _check_templates(spec)
    _REGISTRY[spec.name] = spec
    declare_truth_kinds(spec.name, spec.truth_kinds)
    bring_templates(spec.name, spec.templates)
    return spec


def _check_templates(spec: TaskSpec) -> None:
    """A spec's own templates: keys under its family, format strings, no key of the
    package's or of another task's."""
    others = {k for s in _REGISTRY.values() if s.name != spec.name for k in s.templates}
    for key, template in spec.templates.items():
        if not re.fullmatch(rf"{re.escape(spec.family)}(\.[A-Za-z0-9_]+)+", key):
            raise CartoqaError(
                f"task {spec.name!r}: template key {key!r} must start with its family, "
                f"'{spec.family}.' (for example '{spec.family}.{spec.name}')"
            )
        if key in package_keys() or key in others:
            raise CartoqaError(
                f"task {spec.name!r}: the template {key!r} is the package's or another "
                "task's already; give it a key of its own"
            )
        parse_template(key, template)


def get_task(name: str) -> TaskSpec | None:
    """The spec of a registered task, or None (the entry-point group ``cartoqa.tasks`` is
    loaded first where the name is not registered yet)."""
    if name not in _REGISTRY:
        load_task_modules()
    return _REGISTRY.get(name)


def task_templates() -> dict[str, str]:
    """The prompt templates registered tasks bring with them (``TaskSpec.templates``; the
    built-in tasks bring none: theirs are package data)."""
    return brought_templates()


def registered_tasks() -> dict[str, TaskSpec]:
    """Every registered task, by name, in registration order (cartoqa's own tasks first,
    then the plug-ins')."""
    load_task_modules()
    return dict(_REGISTRY)
