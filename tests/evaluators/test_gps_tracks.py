"""GPS track scores as GPSBench's Table 3 computes them (issue 13, item 6)."""

import pytest


def test_track_scores_follow_gpsbench_table_3_and_leave_tasks_not_run_out():
    """Pure: mean of its tasks; Applied: mean of its tasks and the missing-data probe;
    overall: mean of the two tracks. A task with no response at all is missing, not 0."""
    from cartoqa.records import (
        ChoiceTruth,
        CoordinateTruth,
        Metadata,
        NumberTruth,
        Prompt,
        Provenance,
        Sample,
    )
    from cartoqa.scoring import score_run

    truths = {
        "distance": ("pure", NumberTruth(value=100.0, unit="km")),
        "bearing": ("pure", NumberTruth(value=100.0, unit="deg")),
        "interpolation": ("pure", CoordinateTruth(lat=10.0, lon=20.0)),
        "proximity": ("applied", ChoiceTruth(answer="B", options={"A": "x", "B": "y"})),
        "missing_data": ("probe", NumberTruth(value=50.0, unit="deg")),
    }
    samples = [
        Sample(
            id=f"{task}-{i}",
            task=task,
            prompt=Prompt(text="q"),
            ground_truth=truth,
            metadata=Metadata(track=track),
            provenance=Provenance(generator="test"),
        )
        for i in range(2)
        for task, (track, truth) in truths.items()
    ]
    responses = {
        "distance-0": "FINAL ANSWER: 100 km",
        "distance-1": "FINAL ANSWER: 101 km",  # both within 5 km: 1.0
        "bearing-0": "FINAL ANSWER: 100 degrees",
        "bearing-1": "FINAL ANSWER: 200 degrees",  # 0.5
        "proximity-0": "FINAL ANSWER: B",
        "proximity-1": "FINAL ANSWER: A",  # 0.5
        "missing_data-0": "FINAL ANSWER: 50",
        "missing_data-1": "FINAL ANSWER: 51",  # one within 0.1: 0.5
        # interpolation: not run (no response at all)
    }
    scores = score_run(samples, responses)
    gps = scores["gps"]
    assert scores["interpolation"]["all"]["accuracy"] == 0.0  # its own table says so
    assert gps["track=pure"] == {"tasks": 2, "missing": 1, "accuracy": pytest.approx(0.75)}
    assert gps["track=applied"] == {"tasks": 2, "missing": 0, "accuracy": pytest.approx(0.5)}
    assert gps["track=probe"]["accuracy"] == 0.5
    assert gps["overall"]["accuracy"] == pytest.approx((0.75 + 0.5) / 2)
    assert gps["overall"]["missing"] == 1
