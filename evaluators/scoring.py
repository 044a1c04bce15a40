"""A run scored: each task's metrics, overall and broken down, from samples and responses.

``score_run(samples, responses)`` returns, per task, a table of metric
values by group:

- srn: SR^2, aSA and connectivity, overall, by zoom and by route length in
  steps (mode "original": the published arithmetic, so aSA can be negative,
  and ``crashed`` counts the answers the published scorer raises on);
- rle: RMSE, MAE, MAPE and r^2 by difficulty x unit (and overall per unit);
- mml: accuracy overall, by marker colour and by zoom;
- any other task: exact match (``evaluators.answers``) overall.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cartoqa.records import NumberTruth, RoadPairTruth, RouteTruth, Sample

from .answers import score_response
from .gps import score_gps
from .metrics import mean
from .navigation import Mode, grouped, mml_correct, rle_metrics, rle_value, score_route

__all__ = ["is_correct", "score_run"]

Table = dict[str, dict[str, float]]


def _mean(xs: Sequence[float]) -> float:
    return mean(xs)


def _srn(samples: Sequence[Sample], responses: Mapping[str, str | None], mode: Mode) -> Table:
    rows = []
    for s in samples:
        assert isinstance(s.ground_truth, RouteTruth)
        sc = score_route(s.ground_truth, responses.get(s.id), mode=mode)
        rows.append((s, sc))

    def reduce(items: list[Any]) -> dict[str, float]:
        conn = [sc.connected for _, sc in items if sc.connected is not None]
        out = {
            "n": len(items),
            "SR2": _mean([float(sc.exact) for _, sc in items]),
            "aSA": _mean([sc.step_accuracy for _, sc in items]),
            "connectivity": _mean([float(c) for c in conn]),
        }
        if mode == "original":  # answers the published scorer raises on, scored all the same
            out["crashed"] = sum(1 for _, sc in items if sc.crash is not None)
        return out

    table = {"all": reduce(rows)}
    for label, key in (("zoom", "zoom"), ("steps", "steps")):

        def group_of(row: Any, k: str = key) -> Any:
            md = row[0].metadata
            return getattr(md, k, None) or (md.model_extra or {}).get(k)

        by = grouped(rows, key=group_of, reduce=reduce)
        table |= {f"{label}={g}": v for g, v in by.items() if g != "all"}
    return table


def _rle(samples: Sequence[Sample], responses: Mapping[str, str | None]) -> Table:
    rows = []
    for s in samples:
        assert isinstance(s.ground_truth, NumberTruth)
        rows.append((s, rle_value(s.ground_truth, responses.get(s.id)), s.ground_truth.value))
    table: Table = {}
    for unit in sorted({s.metadata.unit or "?" for s, _, _ in rows}):
        of_unit = [r for r in rows if (r[0].metadata.unit or "?") == unit]
        by = grouped(
            of_unit,
            key=lambda r: r[0].metadata.difficulty,
            reduce=lambda items: rle_metrics([(p, t) for _, p, t in items]),
        )
        table |= {f"{g} {unit}" if g != "all" else f"all {unit}": v for g, v in by.items()}
    return table


def _mml(samples: Sequence[Sample], responses: Mapping[str, str | None]) -> Table:
    rows = []
    for s in samples:
        assert isinstance(s.ground_truth, RoadPairTruth)
        rows.append((s, mml_correct(s.ground_truth, responses.get(s.id))))

    def reduce(items: list[Any]) -> dict[str, float]:
        return {"n": len(items), "accuracy": _mean([float(ok) for _, ok in items])}

    table = {"all": reduce(rows)}
    for key in ("colour", "zoom"):

        def group_of(row: Any, k: str = key) -> Any:
            return getattr(row[0].metadata, k)

        by = grouped(rows, key=group_of, reduce=reduce)
        table |= {f"{key}={g}": v for g, v in by.items() if g != "all"}
    return table


#: the map tasks; every other registered task is a GPS task
MAP_TASKS = frozenset(
    {"mfs", "stmf_presence", "stmf_count", "stmf_names", "mtmf", "rle", "mml", "srn"}
)
#: GPS breakdown keys (metadata), besides split
GPS_GROUPS = ("difficulty", "region", "noise_m", "terrain")


def _gps(samples: Sequence[Sample], responses: Mapping[str, str | None]) -> Table:
    rows = [(s, score_gps(s, responses.get(s.id))) for s in samples]

    def reduce(items: list[Any]) -> dict[str, float]:
        out = {"n": len(items), "accuracy": _mean([float(sc.correct) for _, sc in items])}
        close = [sc.closeness for _, sc in items if sc.closeness is not None]
        if close:
            out["1-MAPE"] = _mean(close)
        province = [sc.province_correct for _, sc in items if sc.province_correct is not None]
        if province:
            out["province accuracy"] = _mean([float(c) for c in province])
        country = [sc.country_correct for _, sc in items if sc.country_correct is not None]
        if country:
            out["country accuracy"] = _mean([float(c) for c in country])
        return out

    table = {"all": reduce(rows)}
    for key in ("split", *GPS_GROUPS):

        def group_of(row: Any, k: str = key) -> Any:
            s = row[0]
            if k == "split":
                return s.split
            return getattr(s.metadata, k, None) or (s.metadata.model_extra or {}).get(k)

        if key in ("noise_m", "terrain") and all(group_of((s,), key) is None for s in samples):
            continue  # a task's own breakdown (noise: place association; terrain class)
        by = grouped(rows, key=group_of, reduce=reduce)
        table |= {f"{key}={g}": v for g, v in by.items() if g != "all"}
    return table


def gps_summary(
    scores: Mapping[str, Table],
    samples: Sequence[Sample],
    responses: Mapping[str, str | None] | None = None,
) -> Table:
    """Track scores as GPSBench's Table 3 computes them: Pure the mean of its tasks'
    accuracies, Applied the mean of its tasks' and the missing-data probe's, and the overall
    score the mean of the two tracks.  A task of the dataset with no response at all was not
    run: it is left out of the means and counted under ``missing`` (never scored 0).  The
    probe's own row (``track=probe``) is shown too."""
    track_of = {s.task: (s.metadata.model_extra or {}).get("track") for s in samples}
    answered = (
        {s.task for s in samples if responses.get(s.id) is not None}
        if responses is not None
        else set(track_of)
    )
    tracks: dict[str, list[float]] = {}
    missing: dict[str, list[str]] = {}
    for task, table in sorted(scores.items()):
        track = track_of.get(task)
        if task in MAP_TASKS or track is None:
            continue
        groups = [str(track)] + (["applied"] if track == "probe" else [])
        for t in groups:
            if task in answered:
                tracks.setdefault(t, []).append(table["all"]["accuracy"])
            else:
                missing.setdefault(t, []).append(task)
            tracks.setdefault(t, [])
    out: Table = {}
    for t in sorted(tracks):
        row = {
            "tasks": len(tracks[t]),
            "missing": len(missing.get(t, [])),
            "accuracy": _mean(tracks[t]),
        }
        out[f"track={t}"] = row
    both = [out[f"track={t}"]["accuracy"] for t in ("pure", "applied") if tracks.get(t)]
    if both:
        out["overall"] = {
            "tracks": len(both),
            "missing": sum(len(v) for k, v in missing.items() if k in ("pure", "applied")),
            "accuracy": _mean(both),
        }
    return out


def _exact(samples: Sequence[Sample], responses: Mapping[str, str | None]) -> Table:
    ok = [score_response(s, responses.get(s.id))[0] for s in samples]
    return {"all": {"n": len(ok), "exact match": _mean([float(x) for x in ok])}}


def score_run(
    samples: Sequence[Sample], responses: Mapping[str, str | None], *, mode: Mode = "cartoqa"
) -> dict[str, Table]:
    """Task -> group -> metric -> value, for responses keyed by sample id (a missing or failed
    response counts as wrong; RLE reports it as unanswered)."""
    by_task: dict[str, list[Sample]] = {}
    for s in samples:
        by_task.setdefault(s.task, []).append(s)
    out: dict[str, Table] = {}
    for task, items in sorted(by_task.items()):
        if task == "srn":
            out[task] = _srn(items, responses, mode)
        elif task == "rle":
            out[task] = _rle(items, responses)
        elif task == "mml":
            out[task] = _mml(items, responses)
        elif task not in MAP_TASKS and any(
            (s.metadata.model_extra or {}).get("track") for s in items[:1]
        ):
            out[task] = _gps(items, responses)
        else:
            out[task] = _exact(items, responses)
    summary = gps_summary(out, samples, responses)
    if summary:
        out["gps"] = summary
    return out


def is_correct(sample: Sample, response: str | None) -> bool:
    """One answer right or wrong by its task family's scorer: SRN exact (SR^2), MML pair,
    RLE within 5 %, GPS tasks by their tolerances, anything else exact match."""
    truth = sample.ground_truth
    if sample.task == "srn" and isinstance(truth, RouteTruth):
        return score_route(truth, response).exact
    if sample.task == "mml" and isinstance(truth, RoadPairTruth):
        return mml_correct(truth, response)
    if sample.task == "rle" and isinstance(truth, NumberTruth):
        value = rle_value(truth, response)
        return value is not None and abs(value - truth.value) <= 0.05 * abs(truth.value)
    if sample.task not in MAP_TASKS and (sample.metadata.model_extra or {}).get("track"):
        return score_gps(sample, response).correct
    return score_response(sample, response)[0]
