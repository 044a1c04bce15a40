"""The metrics, each written once: small pure functions over plain sequences.

Conventions, the same for every function here:

- empty input (nothing left to average) gives ``nan``, never a ``ZeroDivisionError``;
- ``None`` is an unanswered (or unreadable) prediction.  Scores of each answer
  (``accuracy``, ``closeness``, ``one_minus_mape``, ``precision_recall_f1``) count
  it as wrong: it stays in the denominator and scores 0.  Error metrics
  (``rmse``, ``mae``, ``mape``, ``r_squared``) leave it out, since an error of
  an answer that was not given cannot be measured; callers report how many
  were left out (``evaluators.navigation.rle_metrics``: ``unanswered``);
- a prediction and a truth sequence of different lengths is a ``ValueError``;
- summation is Python's ``sum`` in input order (not ``math.fsum``), so the numbers
  are bit-identical to the arithmetic the scorers used before it lived here.

``grouped`` breaks a table down by a key, with the overall row under "all";
a group may not be called "all".
"""

from __future__ import annotations

import math
import reprlib
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import Any, Literal

__all__ = [
    "ALL",
    "accuracy",
    "closeness",
    "grouped",
    "mae",
    "mape",
    "mean",
    "one_minus_mape",
    "precision_recall_f1",
    "r_squared",
    "rmse",
]

ALL = "all"
"""The overall row's name in ``grouped``: reserved, no group may use it."""


def mean(xs: Sequence[float]) -> float:
    """Arithmetic mean, ``sum(xs) / len(xs)``; ``nan`` for an empty sequence.

    No ``None`` handling: the values are scores already.  Non-finite values
    propagate (a mean with ``inf`` in it is ``inf`` or ``nan``)."""
    return sum(xs) / len(xs) if xs else float("nan")


def accuracy(correct: Sequence[bool | None]) -> float:
    """Share of true entries.  ``None`` (unanswered) counts as wrong: it stays in the
    denominator.  ``nan`` for an empty sequence."""
    return mean([1.0 if c else 0.0 for c in correct])


def _answered(
    predicted: Sequence[float | None], truth: Sequence[float]
) -> tuple[list[float], list[float]]:
    """The (prediction, truth) pairs whose prediction is not ``None``, as two lists."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} truths")
    pairs = [(p, t) for p, t in zip(predicted, truth, strict=True) if p is not None]
    return [p for p, _ in pairs], [t for _, t in pairs]


def rmse(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """Root mean squared error, ``sqrt(mean((p - t)^2))``.

    ``None`` predictions are left out; ``nan`` when none is left.  An error too
    large to square gives ``inf`` (``x * x``, never an ``OverflowError``)."""
    p, t = _answered(predicted, truth)
    return math.sqrt(mean([e * e for e in (a - b for a, b in zip(p, t, strict=True))]))


def mae(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """Mean absolute error, ``mean(|p - t|)``.  ``None`` predictions are left out;
    ``nan`` when none is left."""
    p, t = _answered(predicted, truth)
    return mean([abs(a - b) for a, b in zip(p, t, strict=True)])


def mape(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """Mean absolute percentage error, ``mean(|p - t| / |t|)``, as a fraction (0.1 is 10%).

    ``None`` predictions are left out; ``nan`` when none is left.  A zero truth
    has no percentage error: its sample adds 0 to the sum but still counts in
    the denominator (the RLE scorer's arithmetic, kept; route lengths are never
    0).  No flooring: an answer ten times the truth adds 9."""
    p, t = _answered(predicted, truth)
    return mean([abs(a - b) / abs(b) if b else 0.0 for a, b in zip(p, t, strict=True)])


def closeness(pred: float | None, truth: float) -> float:
    """One sample's ``1 - |pred - truth| / |truth|``, floored at 0 (so in [0, 1]).

    0 for ``None`` (unanswered), a non-finite prediction, or a zero truth (no
    relative error exists, so no credit)."""
    if pred is None or truth == 0 or not math.isfinite(pred):
        return 0.0
    return max(0.0, 1.0 - abs(pred - truth) / abs(truth))


def one_minus_mape(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """1 - mean absolute percentage error, floored at 0 per sample: the mean of
    ``closeness``.  ``None`` counts as 0 (and stays in the denominator), as do a
    non-finite prediction and a zero truth; ``nan`` for empty input."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} truths")
    return mean([closeness(p, t) for p, t in zip(predicted, truth, strict=True)])


def r_squared(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """Coefficient of determination, ``1 - SS_res / SS_tot`` with SS_tot about the
    truths' mean (so it can be negative; not the squared correlation).

    ``None`` predictions are left out.  ``nan`` for fewer than two truths left,
    constant truths (SS_tot = 0), or a sum of squares too large for a float
    (never an ``OverflowError``)."""
    p, t = _answered(predicted, truth)
    if len(t) < 2:
        return math.nan
    centre = sum(t) / len(t)
    ss_tot = sum((x - centre) * (x - centre) for x in t)  # x * x gives inf, x ** 2 raises
    if ss_tot == 0 or not math.isfinite(ss_tot):
        return math.nan
    ss_res = sum((a - b) * (a - b) for a, b in zip(p, t, strict=True))
    if not math.isfinite(ss_res):
        return math.nan
    return 1 - ss_res / ss_tot


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def precision_recall_f1(
    pairs: Iterable[tuple[Collection[Hashable] | None, Collection[Hashable]]],
    average: Literal["micro", "macro"] = "micro",
) -> tuple[float, float, float]:
    """(precision, recall, F1) of (predicted set, true set) pairs, one pair per sample.

    ``average="micro"``: true positives, false positives and false negatives
    summed over the samples, then P = TP / (TP + FP), R = TP / (TP + FN) and
    F1 = 2 TP / (2 TP + FP + FN) (the harmonic mean of P and R).
    ``average="macro"``: P, R and F1 of each sample, then each averaged over the
    samples (scikit-learn calls this ``average="samples"``; it is not a mean over
    labels).  Macro F1 is the mean of the samples' F1, not the harmonic mean of
    macro P and R.

    Zero denominators: a ratio 0 / 0 is 0 (scikit-learn's ``zero_division=0``),
    except that a sample with nothing predicted and nothing true is entirely
    right, (1, 1, 1), in macro; likewise micro gives (1, 1, 1) when every sample
    is answered and all of them are empty on both sides.
    ``None`` (unanswered) predicts nothing and is never right: every true item
    is a false negative, and in macro the sample scores (0, 0, 0) even when its
    truth is empty.  Items are compared as set members (duplicates count once).
    ``nan`` for each of the three when there are no samples."""
    if average not in ("micro", "macro"):
        raise ValueError(f"average must be 'micro' or 'macro', not {average!r}")
    counts = []  # (tp, fp, fn, answered) per sample
    for predicted, true in pairs:
        t = set(true)
        if predicted is None:
            counts.append((0, 0, len(t), False))
            continue
        p = set(predicted)
        tp = len(p & t)
        counts.append((tp, len(p) - tp, len(t) - tp, True))
    if not counts:
        return (math.nan, math.nan, math.nan)
    if average == "micro":
        tp = sum(c[0] for c in counts)
        fp = sum(c[1] for c in counts)
        fn = sum(c[2] for c in counts)
        if tp + fp + fn == 0:
            right = 1.0 if all(c[3] for c in counts) else 0.0
            return (right, right, right)
        return (_ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn))
    per_sample = []
    for tp, fp, fn, answered in counts:
        if tp + fp + fn == 0:
            right = 1.0 if answered else 0.0
            per_sample.append((right, right, right))
        else:
            per_sample.append(
                (_ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn))
            )
    return (
        mean([s[0] for s in per_sample]),
        mean([s[1] for s in per_sample]),
        mean([s[2] for s in per_sample]),
    )


def grouped(
    items: Iterable[Any], key: Callable[[Any], Any], reduce: Callable[[list[Any]], Any]
) -> dict[Any, Any]:
    """``reduce`` of the items in each group of ``key``, plus ``"all"``: ``reduce`` of
    every item.

    The groups come in the order of ``str`` of their keys (so ``None`` and numbers
    sort among strings), each group's items in input order, and "all" last;
    ``reduce`` is called once per group and once for "all", also when there are
    no items (``{"all": reduce([])}``).  A key that returns "all" is a
    ``ValueError`` naming the item: that name is the overall row's, and a group
    of that name would be overwritten by it (or overwrite it)."""
    groups: dict[Any, list[Any]] = defaultdict(list)
    everything = []
    for item in items:
        k = key(item)
        if isinstance(k, str) and k == ALL:
            raise ValueError(
                f"the group of item {reprlib.repr(item)} is {k!r}, a name reserved "
                "for the overall row"
            )
        groups[k].append(item)
        everything.append(item)
    out = {k: reduce(v) for k, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}
    out[ALL] = reduce(everything)
    return out
