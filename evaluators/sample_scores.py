"""Every task family's scorer in the one shape, ``SampleScore``, and its metrics.

Each ``*_score(sample, response)`` wraps a family's scorer (``navigation``,
``answers``; the GPS scorers are ``evaluators.gps``'s own) and never raises; each
``*_metrics(rows)`` reduces a list of (sample, score) pairs to the family's metric values.
The task specs (``cartoqa.tasks``) pair them; nothing here names a task.
"""

from __future__ import annotations

from collections.abc import Sequence

from cartoqa.records import NumberTruth, RoadPairTruth, RouteTruth, Sample, SampleScore

from .answers import score_response
from .metrics import mean as _mean
from .navigation import grouped, mml_correct, rle_length, rle_metrics, score_route
from .numeric import AnswerParseError
from .verdicts import verdict as _score
from .verdicts import why_unreadable as _why_not

__all__ = [
    "accuracy_metrics",
    "exact_metrics",
    "exact_score",
    "gps_metrics",
    "mml_score",
    "rle_metrics_rows",
    "rle_score",
    "rle_table",
    "route_metrics",
    "route_score",
]

Rows = Sequence[tuple[Sample, SampleScore]]


def _value(row: tuple[Sample, SampleScore], key: str) -> float | None:
    return row[1].values.get(key)


def route_score(sample: Sample, response: str | None) -> SampleScore:
    """SRN: SR^2 (the verdict), aSA and connectivity."""
    assert isinstance(sample.ground_truth, RouteTruth)
    sc = score_route(sample.ground_truth, response)
    values: dict[str, float | None] = {
        "exact": float(sc.exact),
        "step_accuracy": sc.step_accuracy,
        "connected": None if sc.connected is None else float(sc.connected),
    }
    return _score(
        correct=sc.exact,
        values=values,
        why=None if sc.exact else (sc.why or ("no response" if response is None else "wrong")),
    )


def route_metrics(rows: Rows) -> dict[str, float]:
    """n, SR2, aSA and connectivity (over the answers it applies to)."""
    conn = [c for c in (_value(r, "connected") for r in rows) if c is not None]
    return {
        "n": len(rows),
        "SR2": _mean([float(r[1].values["exact"] or 0.0) for r in rows]),
        "aSA": _mean([float(r[1].values["step_accuracy"] or 0.0) for r in rows]),
        "connectivity": _mean(conn),
    }


def rle_score(sample: Sample, response: str | None) -> SampleScore:
    """RLE: the length read (``predicted``, None when unreadable) beside the truth; right
    within 5 %."""
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    try:
        value: float | None = rle_length(truth, response)
    except AnswerParseError as exc:
        value, unreadable = None, _why_not(response, exc)
    ok = value is not None and abs(value - truth.value) <= 0.05 * abs(truth.value)
    why = None if ok else (unreadable if value is None else "out of tolerance")
    return _score(
        correct=ok,
        values={"predicted": value, "truth": truth.value},
        parsed=None if value is None else repr(value),
        why=why,
    )


def rle_metrics_rows(rows: Rows) -> dict[str, float]:
    """RMSE, MAE, MAPE and r^2 of the lengths read, whatever their unit."""
    return rle_metrics([(_value(r, "predicted"), float(r[1].values["truth"] or 0.0)) for r in rows])


def rle_table(rows: Rows) -> dict[str, dict[str, float]]:
    """RMSE, MAE, MAPE and r^2 by difficulty x unit, and overall per unit ("all m")."""
    table: dict[str, dict[str, float]] = {}
    for unit in sorted({s.metadata.unit or "?" for s, _ in rows}):
        of_unit = [r for r in rows if (r[0].metadata.unit or "?") == unit]
        by = grouped(
            of_unit,
            key=lambda r: r[0].metadata.difficulty,
            reduce=rle_metrics_rows,
        )
        table |= {f"{g} {unit}" if g != "all" else f"all {unit}": v for g, v in by.items()}
    return table


def mml_score(sample: Sample, response: str | None) -> SampleScore:
    """MML: both roads of the junction named."""
    assert isinstance(sample.ground_truth, RoadPairTruth)
    ok = mml_correct(sample.ground_truth, response)
    return _score(correct=ok, why=None if ok else "wrong")


def accuracy_metrics(rows: Rows) -> dict[str, float]:
    """n and accuracy."""
    return {"n": len(rows), "accuracy": _mean([float(bool(r[1].correct)) for r in rows])}


def gps_metrics(rows: Rows) -> dict[str, float]:
    """n, accuracy, and where the scores carry them 1-MAPE, province and country accuracy."""
    out = accuracy_metrics(rows)
    got: dict[str, list[float]] = {}
    for _, score in rows:  # one pass: most GPS scores carry none of these
        for key, v in score.values.items():
            if v is not None:
                got.setdefault(key, []).append(v)
    for key, name in _GPS_VALUES:
        if got.get(key):
            out[name] = _mean(got[key])
    return out


_GPS_VALUES = (
    ("closeness", "1-MAPE"),
    ("province", "province accuracy"),
    ("country", "country accuracy"),
)


def exact_score(sample: Sample, response: str | None) -> SampleScore:
    """Exact match of the parsed answer (``evaluators.answers``)."""
    ok, why = score_response(sample, response)
    return _score(correct=ok, why=why)


def exact_metrics(rows: Rows) -> dict[str, float]:
    """n and exact match."""
    return {"n": len(rows), "exact match": _mean([float(bool(r[1].correct)) for r in rows])}
