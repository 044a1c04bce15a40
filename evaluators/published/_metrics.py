"""The published scorer's metric functions (its ``eval.py``), on plain lists.

The regressions and the macro averages are scikit-learn's, as the published code calls them,
so they agree to the last bit; the name-listing scores are re-stated from its rules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = [
    "f1_name_listing",
    "mae",
    "mape",
    "mean",
    "precision_name_listing",
    "presence_prf",
    "r2",
    "recall_name_listing",
    "rmse",
]


def _quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    # scikit-learn warns (r2 of one value is nan; a macro average over an absent class): the
    # published run prints those warnings and goes on; so do we, silently
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def rmse(true: Sequence[Any], pred: Sequence[Any]) -> float:
    """sqrt(sklearn mean_squared_error); raises as scikit-learn does on empty lists."""
    from sklearn.metrics import mean_squared_error

    return math.sqrt(_quiet(mean_squared_error, true, pred))


def r2(true: Sequence[Any], pred: Sequence[Any]) -> float:
    """sklearn r2_score (nan for one value; 1.0 or 0.0 for a constant truth)."""
    from sklearn.metrics import r2_score

    return float(_quiet(r2_score, true, pred))


def mae(true: Sequence[Any], pred: Sequence[Any]) -> float:
    """sklearn mean_absolute_error."""
    from sklearn.metrics import mean_absolute_error

    return float(_quiet(mean_absolute_error, true, pred))


def mape(true: Sequence[Any], pred: Sequence[Any]) -> float:
    """sklearn mean_absolute_percentage_error: a fraction, not per cent."""
    from sklearn.metrics import mean_absolute_percentage_error

    return float(_quiet(mean_absolute_percentage_error, true, pred))


def presence_prf(true: Sequence[int], pred: Sequence[int]) -> tuple[float, float, float]:
    """Macro precision, recall and F1 (sklearn, ``average="macro"``) of 1/0 labels; raises
    ValueError as scikit-learn does when the lists differ in length."""
    from sklearn.metrics import f1_score, precision_score, recall_score

    return (
        float(_quiet(precision_score, true, pred, average="macro")),
        float(_quiet(recall_score, true, pred, average="macro")),
        float(_quiet(f1_score, true, pred, average="macro")),
    )


def precision_name_listing(true: Sequence[str], pred: Sequence[str]) -> float:
    """The distinct names (each stripped) found in both, over the number of predicted names
    (duplicates counted); with no prediction, 1 if there is no true name else 0."""
    t = {n.strip() for n in true}
    p = [n.strip() for n in pred]
    if p:
        return len(t & set(p)) / len(p)
    return 1 if not true else 0


def recall_name_listing(true: Sequence[str], response: Any) -> float:
    """The share of true names ``in`` ``response``: a substring of it when it is text, a member
    when it is a list (nothing stripped); 1 with no true name."""
    if not true:
        return 1
    return sum(1 for n in true if n in response) / len(true)


def mean(values: Sequence[float]) -> float:
    """numpy's mean, as the published code averages per-item scores (pairwise summation: it
    can differ from ``sum(values) / len(values)`` in the last bits); nan for no value."""
    import numpy as np

    if not values:
        return math.nan
    return float(np.mean([float(v) for v in values]))


def f1_name_listing(precision: float, recall: float) -> float:
    """2PR/(P+R), 0 when both are 0."""
    if precision + recall == 0:
        return 0
    return 2 * (precision * recall) / (precision + recall)
