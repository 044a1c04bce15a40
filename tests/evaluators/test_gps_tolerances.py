"""Tolerances live on the truths (issue 14): every numeric GPS truth carries its own, the
scorer reads it there, and a dataset made before (no tolerance on its truths) scores the
same answers the same way."""

import random

import pytest

from cartoqa.records import CoordinateTruth, NumberTruth, Tolerance
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from tests.gps_scores import score_gps

TASKS = ["distance", "bearing", "polygon", "missing_data", "interpolation",
         "coordinate_transformation", "format_conversion"]  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("tol") / "g"
    generate_gps(out, per_task=40, seed=8, tasks=TASKS)
    return load_dataset(out)


def _legacy(sample):
    """The sample as cartoqa wrote it before truths carried tolerances."""
    truth = sample.ground_truth.model_copy(update={"tolerance": None})
    extra = dict(sample.metadata.model_extra or {})
    mode = extra.get("mode")
    if mode in ("from_utm", "from_mercator"):
        extra["tolerance_deg"] = 0.0001 if mode == "from_utm" else 0.001
    md = type(sample.metadata).model_validate({**vars(sample.metadata), **extra})
    return sample.model_copy(update={"ground_truth": truth, "metadata": md})


def _answers(truth, rng):
    """Answers around the tolerance's edge: inside, on it, just outside, far off."""
    if isinstance(truth, NumberTruth):
        width = max(truth.tolerance.abs, truth.tolerance.rel * abs(truth.value))
        for k in (0.0, 0.5, 0.999, 1.001, 1.5, 40.0):
            sign = rng.choice((-1, 1))
            yield f"FINAL ANSWER: {truth.value + sign * k * width:.6f} {truth.unit or ''}"
    elif isinstance(truth, CoordinateTruth):
        w = truth.tolerance.abs
        for k in (0.0, 0.5, 0.99, 1.01, 3.0):
            lat = max(-90, min(90, truth.lat + rng.choice((-1, 1)) * k * w))
            lon = (truth.lon + rng.choice((-1, 1)) * k * w + 180) % 360 - 180
            yield f"FINAL ANSWER: {lat:.7f}, {lon:.7f}"


def test_every_numeric_truth_carries_a_tolerance(dataset):
    with_tolerance = [
        s for s in dataset if isinstance(s.ground_truth, NumberTruth | CoordinateTruth)
    ]
    assert len(with_tolerance) > 150
    assert all(isinstance(s.ground_truth.tolerance, Tolerance) for s in with_tolerance)
    assert "tolerance_deg" not in {k for s in dataset for k in (s.metadata.model_extra or {})}
    bearing = next(s for s in dataset if s.task == "bearing").ground_truth.tolerance
    assert bearing.wrap == 360 and bearing.allows(359.0, 2.0) and not bearing.allows(350.0, 2.0)


def test_the_truths_tolerance_and_the_old_datasets_agree_on_every_answer(dataset):
    rng = random.Random(3)
    compared = inside = outside = 0
    for s in dataset:
        if not isinstance(s.ground_truth, NumberTruth | CoordinateTruth):
            continue
        old = _legacy(s)
        for answer in _answers(s.ground_truth, rng):
            now, before = score_gps(s, answer), score_gps(old, answer)
            assert now.correct == before.correct, (s.id, answer)
            compared += 1
            inside += now.correct
            outside += not now.correct
    assert compared > 800 and inside > 200 and outside > 200


def test_a_sample_without_a_tolerance_keeps_its_bytes():
    t = NumberTruth(value=3.0, unit="m")
    assert "tolerance" not in t.model_dump_json()
    with_tol = NumberTruth(value=3.0, unit="km", tolerance=Tolerance(rel=0.05))
    assert NumberTruth.model_validate_json(with_tol.model_dump_json()) == with_tol


@pytest.mark.parametrize(
    ("tol", "got", "want", "ok"),
    [
        (Tolerance(abs=5, rel=0.05), 104.9, 100, True),
        (Tolerance(abs=5, rel=0.05), 105.1, 100, False),
        (Tolerance(abs=5, rel=0.05), 2099, 2000, True),
        (Tolerance(abs=5, wrap=360), 358, 2, True),
        (Tolerance(abs=5, wrap=360), 2, 358, True),
        (Tolerance(abs=5, wrap=360), 350, 2, False),
        (Tolerance(abs=5, wrap=360), 722, 1, False),  # two turns are no bearing (issue 26)
        (Tolerance(rel=0.05), float("nan"), 1, False),
        (Tolerance(rel=0.05), float("inf"), 1, False),
    ],
)
def test_tolerance_arithmetic(tol, got, want, ok):
    assert tol.allows(got, want) is ok


def test_a_negative_tolerance_is_refused():
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        Tolerance(abs=-1)


def test_any_task_whose_truth_carries_a_tolerance_is_scored_by_it():
    # a number or point truth of a task with no scorer of its own (the exact-match codec)
    from cartoqa.records import Metadata, Prompt, Provenance, Sample
    from evaluators.answers import score_response

    def sample(truth, task="bearing"):
        return Sample(
            id="t-1",
            task=task,  # any task of the kind: the codec reads the truth
            prompt=Prompt(text="?"),
            ground_truth=truth,
            metadata=Metadata(),
            provenance=Provenance(generator="test"),
        )

    metres = sample(NumberTruth(value=100, unit="m", equivalents={"ft": 328.084},
                                tolerance=Tolerance(abs=5)))  # fmt: skip
    assert score_response(metres, "FINAL ANSWER: 103 m")[0]
    assert not score_response(metres, "FINAL ANSWER: 106 m")[0]
    assert score_response(metres, "FINAL ANSWER: 338 ft")[0]  # 103.0 m
    assert not score_response(metres, "FINAL ANSWER: 350 ft")[0]  # 106.7 m
    angle = sample(NumberTruth(value=359, unit="deg", tolerance=Tolerance(abs=5, wrap=360)))
    assert score_response(angle, "FINAL ANSWER: 2 deg")[0]
    point = sample(
        CoordinateTruth(lat=10, lon=179.99, tolerance=Tolerance(abs=0.05)), "interpolation"
    )
    assert score_response(point, "FINAL ANSWER: 10.01, -179.99")[0]
    assert not score_response(point, "FINAL ANSWER: 10.1, 179.99")[0]
    exact = sample(NumberTruth(value=100, unit="m"))  # no tolerance: exact, as before
    assert not score_response(exact, "FINAL ANSWER: 100.5 m")[0]


@pytest.mark.parametrize(
    "bad", [{"abs": float("inf")}, {"rel": float("nan")}, {"wrap": float("inf")}]
)
def test_a_tolerance_is_finite(bad):
    with pytest.raises(ValueError, match="finite"):
        Tolerance(**bad)
