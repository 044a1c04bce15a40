"""A run scored through the task registry: one scorer per task, the same for ``cartoqa run``
and ``cartoqa score``.

``score_samples(samples, responses)`` gives each sample's ``SampleScore``;
``task_versions`` the scorers' versions that stored scores are keyed by;
``tables_from_scores`` reduces them to each task's table (a paired variant's samples
in a table of their own, "srn@text": ``by_variant``) (group -> metric ->
value) and adds the GPS track scores (``gps_summary``); ``score_run`` is the
two in one; ``is_correct`` is one answer's verdict.  A task with no registered
spec is scored by exact match.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cartoqa.records import Sample, SampleScore
from cartoqa.tasks.spec import Table, TaskSpec, get_task
from evaluators.metrics import mean as _mean

__all__ = [
    "by_variant",
    "gps_summary",
    "is_correct",
    "score_run",
    "score_sample",
    "score_samples",
    "scoring_versions",
    "tables_from_scores",
    "task_versions",
]


def _fallback() -> TaskSpec:
    from evaluators.sample_scores import exact_metrics, exact_score

    return TaskSpec(
        name="exact",
        family="map",
        track="",
        description="exact match",
        truth_kinds=frozenset(),
        score=exact_score,
        reduce=exact_metrics,
        metrics=("exact match",),
    )


def _spec(task: str) -> TaskSpec:
    """The spec of a task, or of a score key's task ("srn@text": srn's)."""
    return get_task(task.partition("@")[0]) or _fallback()


def by_variant(
    scored: Mapping[str, Sequence[tuple[Sample, SampleScore]]],
) -> dict[str, list[tuple[Sample, SampleScore]]]:
    """Scores by task, regrouped by score key: a paired variant's samples apart from their
    base task's ("srn@text", and "srn@nolabels/unanswerable" for those a variant flagged:
    ``cartoqa.tasks.variants.score_key``), so that scores never mix.  A dataset without
    variants comes back as it was."""
    from cartoqa.tasks.variants.names import score_key

    out: dict[str, list[tuple[Sample, SampleScore]]] = {}
    for task, rows in scored.items():
        for row in rows:
            key = score_key(row[0]) if row[0].task == task else task
            out.setdefault(key, []).append(row)
    return out


def task_versions(tasks: Iterable[str]) -> dict[str, str]:
    """Each task's scorer version (``TaskSpec.version``), by name; "unregistered" for a task
    with no spec (scored by exact match).  Stored scores are keyed by them
    (``cartoqa.stores.scores.scoring_key``)."""
    out: dict[str, str] = {}
    for name in sorted(set(tasks)):
        spec = get_task(name)
        out[name] = spec.version if spec is not None else "unregistered"
    return out


def scoring_versions(tasks: Iterable[str]) -> dict[str, str]:
    """What stored scores of these tasks are keyed by: each task's scorer version
    (``task_versions``) and the shared answer readers' (``evaluators.READERS_VERSION``, under
    "(answer readers)"): a change there changes many tasks' scores at once."""
    from evaluators import READERS_VERSION

    return task_versions(tasks) | {"(answer readers)": READERS_VERSION}


def score_sample(sample: Sample, response: str | None, *, mode: str = "cartoqa") -> SampleScore:
    """One response scored by its task's scorer (``mode``: "cartoqa" or "original")."""
    return _spec(sample.task).scorer(mode)(sample, response)


def is_correct(sample: Sample, response: str | None) -> bool:
    """One answer right or wrong by its task's scorer."""
    return bool(score_sample(sample, response).correct)


def score_samples(
    samples: Sequence[Sample], responses: Mapping[str, str | None], *, mode: str = "cartoqa"
) -> dict[str, list[tuple[Sample, SampleScore]]]:
    """Task -> (sample, score) for each sample (a missing response scores as no answer)."""
    out: dict[str, list[tuple[Sample, SampleScore]]] = {}
    scorers: dict[str, Any] = {}
    for s in samples:
        score = scorers.get(s.task)
        if score is None:
            score = scorers[s.task] = _spec(s.task).scorer(mode)
        out.setdefault(s.task, []).append((s, score(s, responses.get(s.id))))
    return out


def score_run(
    samples: Sequence[Sample], responses: Mapping[str, str | None], *, mode: str = "cartoqa"
) -> dict[str, Table]:
    """Task -> group -> metric -> value, for responses keyed by sample id, and "gps": the
    GPS track scores where the samples hold GPS tasks."""
    return tables_from_scores(
        score_samples(samples, responses, mode=mode), samples, responses, mode=mode
    )


def tables_from_scores(
    scored: Mapping[str, Sequence[tuple[Sample, SampleScore]]],
    samples: Sequence[Sample],
    responses: Mapping[str, str | None],
    *,
    mode: str = "cartoqa",
) -> dict[str, Table]:
    """``score_run``'s tables from scores already made (``score_samples``' output, or the
    scores stored beside a run store): task -> group -> metric -> value, and "gps".
    ``mode``: the mode the scores were made in (a task may reduce it its own way)."""
    out: dict[str, Table] = {
        key: _spec(key).scores_table(rows, mode) for key, rows in sorted(by_variant(scored).items())
    }
    summary = gps_summary(out, samples, responses)
    if summary:
        out["gps"] = summary
    return out


def gps_summary(
    scores: Mapping[str, Table],
    samples: Sequence[Sample],
    responses: Mapping[str, str | None] | None = None,
) -> Table:
    """Track scores as GPSBench's Table 3 computes them: Pure the mean of its tasks'
    accuracies, Applied the mean of its tasks' and the missing-data probe's, and the overall
    score the mean of the two tracks.  A task of the dataset with no response at all was not
    run: it is left out of the means and counted under ``missing`` (never scored 0).  The
    probe's own row (``track=probe``) and the variants' (``track=variant``) are shown too."""
    tasks = {s.task for s in samples}
    answered = (
        {s.task for s in samples if responses.get(s.id) is not None}
        if responses is not None
        else tasks
    )
    tracks: dict[str, list[float]] = {}
    missing: dict[str, list[str]] = {}
    for task, table in sorted(scores.items()):
        spec = get_task(task)
        if spec is None or spec.family != "gps" or task not in tasks:
            continue
        groups = [spec.track] + (["applied"] if spec.track == "probe" else [])
        for t in groups:
            if task in answered:
                tracks.setdefault(t, []).append(table["all"]["accuracy"])
            else:
                missing.setdefault(t, []).append(task)
            tracks.setdefault(t, [])
    out: Table = {}
    for t in sorted(tracks):
        out[f"track={t}"] = {
            "tasks": len(tracks[t]),
            "missing": len(missing.get(t, [])),
            "accuracy": _mean(tracks[t]),
        }
    both = [out[f"track={t}"]["accuracy"] for t in ("pure", "applied") if tracks.get(t)]
    if both:
        out["overall"] = {
            "tracks": len(both),
            "missing": sum(len(v) for k, v in missing.items() if k in ("pure", "applied")),
            "accuracy": _mean(both),
        }
    return out
