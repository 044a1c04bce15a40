"""evaluators.metrics against independent computations: numpy, scikit-learn and hand-worked
examples; the edge cases (empty, None, zero truths, constant truths); grouped and "all"."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators import gps, metrics, navigation, numeric
from evaluators.metrics import (
    accuracy,
    closeness,
    grouped,
    mae,
    mape,
    mean,
    one_minus_mape,
    precision_recall_f1,
    r_squared,
    rmse,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")
MultiLabelBinarizer = pytest.importorskip("sklearn.preprocessing").MultiLabelBinarizer

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
nonzero = finite.filter(lambda x: abs(x) > 1e-3)


def _pairs(elements: st.SearchStrategy[float], min_size: int = 1) -> st.SearchStrategy:
    return st.lists(st.tuples(finite, elements), min_size=min_size, max_size=30)


# ------------------------------------------------------------------ mean, accuracy


@given(st.lists(finite, min_size=1, max_size=50))
def test_mean_is_numpys(xs):
    assert mean(xs) == pytest.approx(float(np.mean(xs)), rel=1e-9, abs=1e-6)


def test_mean_of_nothing_is_nan():
    assert math.isnan(mean([]))


@given(st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=50))
def test_accuracy_counts_unanswered_as_wrong(correct):
    want = np.mean([c is True for c in correct])
    assert accuracy(correct) == pytest.approx(float(want))
    assert accuracy(correct) == sklearn_metrics.accuracy_score(
        [True] * len(correct), [c is True for c in correct]
    )


def test_accuracy_by_hand():
    assert accuracy([True, None, False, True]) == 0.5
    assert math.isnan(accuracy([]))
    assert numeric.tolerance_accuracy([True, False, True, True]) == 0.75


# ------------------------------------------------------------------ RMSE, MAE, MAPE


@given(_pairs(finite))
def test_rmse_and_mae_are_sklearns(pairs):
    p, t = [a for a, _ in pairs], [b for _, b in pairs]
    want_rmse = math.sqrt(sklearn_metrics.mean_squared_error(t, p))
    assert rmse(p, t) == pytest.approx(want_rmse, rel=1e-9, abs=1e-6)
    assert mae(p, t) == pytest.approx(sklearn_metrics.mean_absolute_error(t, p), abs=1e-6)


@given(_pairs(nonzero))
def test_mape_is_sklearns_where_no_truth_is_zero(pairs):
    p, t = [a for a, _ in pairs], [b for _, b in pairs]
    want = sklearn_metrics.mean_absolute_percentage_error(t, p)
    assert mape(p, t) == pytest.approx(want, rel=1e-9)


def test_error_metrics_leave_unanswered_out():
    p, t = [110.0, None, 180.0, 300.0], [100.0, 5.0, 200.0, 300.0]
    # by hand: errors 10, -20, 0 over the three answered
    assert rmse(p, t) == pytest.approx(math.sqrt(500 / 3))
    assert mae(p, t) == pytest.approx(10.0)
    assert mape(p, t) == pytest.approx((0.1 + 0.1 + 0.0) / 3)
    for f in (rmse, mae, mape, r_squared):
        assert math.isnan(f([None, None], [1.0, 2.0]))
        assert math.isnan(f([], []))
        with pytest.raises(ValueError, match="2 predictions for 1 truths"):
            f([1.0, 2.0], [1.0])


def test_mape_zero_truth_adds_nothing_but_counts():
    # |12 - 10| / 10 = 0.2, the zero truth adds 0 and stays in the denominator (n = 2)
    assert mape([12.0, 3.0], [10.0, 0.0]) == pytest.approx(0.1)
    assert mape([5.0], [0.0]) == 0.0
    assert mape([100.0], [10.0]) == pytest.approx(9.0)  # not floored


def test_huge_errors_give_inf_not_an_overflow():
    assert rmse([1e200], [0.0]) == math.inf
    assert mae([1e308, -1e308], [-1e308, 1e308]) == math.inf


# ------------------------------------------------------------------ closeness, 1 - MAPE


@given(_pairs(nonzero))
def test_one_minus_mape_is_numpys_clipped_mean(pairs):
    p, t = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    per_sample = np.clip(1 - np.abs(p - t) / np.abs(t), 0, None)
    assert one_minus_mape(list(p), list(t)) == pytest.approx(float(per_sample.mean()), abs=1e-9)
    for a, b, want in zip(p, t, per_sample, strict=True):
        assert closeness(float(a), float(b)) == pytest.approx(float(want), abs=1e-12)


def test_closeness_and_one_minus_mape_by_hand():
    assert closeness(110.0, 100.0) == pytest.approx(0.9)
    assert closeness(-90.0, -100.0) == pytest.approx(0.9)
    assert closeness(300.0, 100.0) == 0.0  # floored
    assert closeness(None, 100.0) == 0.0
    assert closeness(5.0, 0.0) == 0.0 and closeness(0.0, 0.0) == 0.0
    assert closeness(math.inf, 1.0) == 0.0 and closeness(math.nan, 1.0) == 0.0
    assert one_minus_mape([110, None, 300, 1], [100, 50, 100, 0]) == pytest.approx(0.9 / 4)
    assert math.isnan(one_minus_mape([], []))
    with pytest.raises(ValueError):
        one_minus_mape([1.0], [])


# ------------------------------------------------------------------ r^2


@given(_pairs(finite, min_size=2))
def test_r_squared_is_sklearns(pairs):
    p, t = [a for a, _ in pairs], [b for _, b in pairs]
    if float(np.var(t)) < 1e-6:  # constant (or nearly) truths: tested below
        return
    want = sklearn_metrics.r2_score(t, p)
    assert r_squared(p, t) == pytest.approx(want, rel=1e-6, abs=1e-6)


def test_r_squared_by_hand_and_edges():
    # truths 1, 2, 3 (mean 2, SS_tot 2); predictions 1, 3, 3: SS_res 1
    assert r_squared([1.0, 3.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(0.5)
    assert r_squared([1.0, None, 3.0, 3.0], [1.0, 99.0, 2.0, 3.0]) == pytest.approx(0.5)
    assert r_squared([3.0, 1.0], [1.0, 3.0]) == pytest.approx(1 - 8 / 2)  # can be negative
    assert math.isnan(r_squared([1.0], [1.0]))  # fewer than two truths
    assert math.isnan(r_squared([1.0, None], [1.0, 2.0]))  # fewer than two left
    assert math.isnan(r_squared([1.0, 2.0], [4.0, 4.0]))  # constant truths
    # sklearn without its "force finite" patch agrees that constant truths have no r^2
    with np.errstate(divide="ignore"):
        sk = sklearn_metrics.r2_score([4.0, 4.0], [1.0, 2.0], force_finite=False)
    assert not math.isfinite(sk)
    assert math.isnan(r_squared([1e200, 1e200], [1.0, 2.0]))  # SS_res too large
    assert math.isnan(r_squared([1.0, 2.0], [1e300, -1e300]))  # SS_tot too large


# ------------------------------------------------------------------ precision, recall, F1

labels = st.frozensets(st.sampled_from("abcdef"), max_size=4)


def _sklearn_prf(pairs, average):
    mlb = MultiLabelBinarizer(classes=list("abcdef"))
    y_true = mlb.fit_transform([t for _, t in pairs])
    y_pred = mlb.transform([p for p, _ in pairs])
    p, r, f, _ = sklearn_metrics.precision_recall_fscore_support(
        y_true, y_pred, average=average, zero_division=0
    )
    return (p, r, f)


@settings(deadline=None)
@given(st.lists(st.tuples(labels, labels), min_size=1, max_size=20))
def test_micro_is_sklearns(pairs):
    if all(not p and not t for p, t in pairs):
        return  # all empty: our convention, tested by hand
    assert precision_recall_f1(pairs, "micro") == pytest.approx(_sklearn_prf(pairs, "micro"))


@settings(deadline=None)
@given(st.lists(st.tuples(labels, labels).filter(lambda pt: pt[0] or pt[1]), min_size=1))
def test_macro_is_sklearns_samples_average(pairs):
    assert precision_recall_f1(pairs, "macro") == pytest.approx(_sklearn_prf(pairs, "samples"))


def test_precision_recall_f1_by_hand():
    pairs = [({"a", "b"}, {"a"}), (set(), set()), ({"c"}, {"c", "d"}), ({"x"}, {"y"})]
    # micro: TP 2, FP 2 (b, x), FN 2 (d, y)
    assert precision_recall_f1(pairs, "micro") == pytest.approx((0.5, 0.5, 0.5))
    # macro, per sample (p, r, f1): (1/2, 1, 2/3), (1, 1, 1), (1, 1/2, 2/3), (0, 0, 0)
    want = ((0.5 + 1 + 1 + 0) / 4, (1 + 1 + 0.5 + 0) / 4, (2 / 3 + 1 + 2 / 3 + 0) / 4)
    assert precision_recall_f1(pairs, "macro") == pytest.approx(want)
    assert precision_recall_f1([(["a", "a"], ["a"])]) == (1.0, 1.0, 1.0)  # sets: once


def test_precision_recall_f1_edges():
    assert all(math.isnan(x) for x in precision_recall_f1([], "micro"))
    assert all(math.isnan(x) for x in precision_recall_f1([], "macro"))
    for average in ("micro", "macro"):
        assert precision_recall_f1([(set(), set())] * 3, average) == (1.0, 1.0, 1.0)
        assert precision_recall_f1([(set(), {"a"})], average) == (0.0, 0.0, 0.0)
        assert precision_recall_f1([({"a"}, set())], average) == (0.0, 0.0, 0.0)
        # unanswered is never right, even where nothing is true
        assert precision_recall_f1([(None, set())], average) == (0.0, 0.0, 0.0)
        assert precision_recall_f1([(None, {"a"})], average) == (0.0, 0.0, 0.0)
    # micro: an unanswered sample's truths are all missed
    assert precision_recall_f1([({"a"}, {"a"}), (None, {"b"})], "micro") == pytest.approx(
        (1.0, 0.5, 2 / 3)
    )
    assert precision_recall_f1([(set(), set()), (None, set())], "macro") == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="average"):
        precision_recall_f1([], "weighted")  # type: ignore[arg-type]


# ------------------------------------------------------------------ grouped


def test_grouped_by_hand():
    items = [("b", 2), ("a", 1), (None, 5), (3, 7), ("a", 3)]
    out = grouped(items, key=lambda t: t[0], reduce=lambda xs: [x for _, x in xs])
    assert out == {3: [7], None: [5], "a": [1, 3], "b": [2], "all": [2, 1, 5, 7, 3]}
    assert list(out) == [3, None, "a", "b", "all"]  # by str of the key, "all" last
    assert grouped([], key=len, reduce=len) == {"all": 0}


@pytest.mark.parametrize("grouper", [metrics.grouped, navigation.grouped])
def test_grouped_refuses_a_group_named_all(grouper):
    items = [{"id": "s1", "split": "test"}, {"id": "s2", "split": "all"}]
    with pytest.raises(ValueError, match=r"'all'.*reserved") as err:
        grouper(items, key=lambda d: d["split"], reduce=len)
    assert "s2" in str(err.value)
    # "All" and other spellings are ordinary groups
    out = grouper([{"split": "All"}], key=lambda d: d["split"], reduce=len)
    assert out == {"All": 1, "all": 1}


def test_grouped_names_an_item_with_a_bounded_repr():
    items = [("all", "x" * 10_000)]
    with pytest.raises(ValueError) as err:
        grouped(items, key=lambda t: t[0], reduce=len)
    assert len(str(err.value)) < 300


# ------------------------------------------------------------------ the old names, unchanged


def _old_rle(pairs):
    """The RLE arithmetic as navigation wrote it before metrics.py (results must not move)."""
    got = [(p, t) for p, t in pairs if p is not None]
    n = len(got)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    errors = [p - t for p, t in got]
    return (
        math.sqrt(sum(e * e for e in errors) / n),
        sum(abs(e) for e in errors) / n,
        sum(abs(p - t) / abs(t) for p, t in got if t) / n,
    )


@given(st.lists(st.tuples(st.one_of(st.none(), finite), finite), max_size=30))
def test_old_names_are_bit_identical(pairs):
    m = navigation.rle_metrics(pairs)
    got = (m["rmse"], m["mae"], m["mape"])
    want = _old_rle(pairs)
    assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(got, want, strict=True))
    p, t = [a for a, _ in pairs], [b for _, b in pairs]
    old_close = [
        0.0 if a is None or b == 0 else max(0.0, 1.0 - abs(a - b) / abs(b)) for a, b in pairs
    ]
    if pairs:
        assert numeric.one_minus_mape(p, t) == sum(old_close) / len(old_close)
    for a, b in pairs:
        if a is not None:
            assert gps._close(a, b) == closeness(a, b)
