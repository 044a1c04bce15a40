"""A tolerance that wraps round a circle accepts only answers in the quantity's own range
(issue 26, finding 11).

The bearing's tolerance took any answer modulo 360, so 4827 was scored right for a true
151.5 (4827 = 13 turns + 147) and a random-weight model scored 0.10-0.17 on bearing.  What
counts now:

- a bearing is written from 0 to 360 degrees (360 is north again), or in the signed form
  from -180 to 0 that atan2 and pyproj give (-2 for 358); 4827, 511.5 (360 + 151.5) and
  -208.5 (151.5 - 360) are numbers of turns, not bearings, and are wrong;
- a longitude lies in [-180, 180] (180 and -180 are one meridian), a latitude in [-90, 90];
  190 for -170, or 350 for -10, is wrong, in every task that asks for a point and in the
  missing-data probe.
"""

import pytest

from cartoqa.records import (
    CoordinateTruth,
    Metadata,
    NumberTruth,
    Prompt,
    Provenance,
    Sample,
    TextTruth,
    Tolerance,
)
from tests.gps_scores import score_gps


def sample(task, truth, track="pure", **meta):
    return Sample(
        id="x1",
        task=task,
        prompt=Prompt(text="q"),
        ground_truth=truth,
        metadata=Metadata(track=track, **meta),
        provenance=Provenance(generator="t"),
    )


def bearing(value, tolerance=True):
    tol = Tolerance(abs=5.0, wrap=360.0) if tolerance else None
    return sample("bearing", NumberTruth(value=value, unit="deg", tolerance=tol))


def ok(s, answer):
    return score_gps(s, f"FINAL ANSWER: {answer}").correct


# a truth, and answers equal to it modulo 360 that are no bearing
HOSTILE = [
    (151.5, "4827 degrees"),  # the audit's case: 13 turns + 147
    (151.5, "4827"),
    (151.5, "-208.5 degrees"),  # 151.5 - 360
    (151.5, "511.5°"),  # 360 + 151.5
    (151.5, "871.5 deg"),  # 720 + 151.5
    (2.0, "362 degrees"),  # 360 + 2, within 5 degrees of 2 without any wrapping
    (358.0, "718 degrees"),
    (358.0, "-362 degrees"),
    (10.0, "-350 degrees"),
]


@pytest.mark.parametrize("with_tolerance", [True, False], ids=["truth's tolerance", "legacy"])
@pytest.mark.parametrize(("truth", "answer"), HOSTILE)
def test_a_bearing_outside_its_range_is_wrong_however_it_wraps(truth, answer, with_tolerance):
    s = bearing(truth, with_tolerance)
    result = score_gps(s, f"FINAL ANSWER: {answer}")
    assert not result.correct
    assert "bearing" in (result.why or ""), result.why


@pytest.mark.parametrize("with_tolerance", [True, False], ids=["truth's tolerance", "legacy"])
def test_a_bearing_in_range_still_wraps_across_north(with_tolerance):
    assert ok(bearing(151.5, with_tolerance), "147 degrees")  # 4.5 off, no turns
    assert ok(bearing(358.0, with_tolerance), "1.5 degrees")  # across north
    assert ok(bearing(358.0, with_tolerance), "360 degrees")  # 360 is north
    assert ok(bearing(2.0, with_tolerance), "359 degrees")
    assert ok(bearing(2.0, with_tolerance), "0")
    assert ok(bearing(358.0, with_tolerance), "-2 degrees")  # the signed form
    assert ok(bearing(180.0, with_tolerance), "-180 degrees")
    assert ok(bearing(200.0, with_tolerance), "-160.5 degrees")  # 199.5, signed
    assert not ok(bearing(358.0, with_tolerance), "352.9 degrees")


# a point's truth and answers whose longitude (or latitude) is out of range
POINTS = [
    ("interpolation", CoordinateTruth(lat=-33.86, lon=151.5, tolerance=Tolerance(abs=0.01))),
    ("interpolation", CoordinateTruth(lat=-33.86, lon=179.995, tolerance=Tolerance(abs=0.01))),
    ("format_conversion", CoordinateTruth(lat=10.0, lon=-170.0, tolerance=Tolerance(abs=1e-4))),
]


@pytest.mark.parametrize(
    ("case", "answer"),
    [
        (0, "-33.86, -208.5"),
        (0, "-33.86, 511.5"),
        (0, "-33.86, 4827"),
        (1, "-33.86, -180.005"),  # 179.995 one turn round
        (1, "-33.86, 180.005"),  # 0.01 east of 179.995 but past the antimeridian
        (2, "10, 190"),  # -170 written as an east longitude
        (2, "10°00'00.0\"N, 190°00'00.0\"E"),
        (2, "370, -170"),  # a latitude of one turn and 10 degrees
    ],
)
def test_a_point_outside_the_globe_is_wrong(case, answer):
    task, truth = POINTS[case]
    assert not ok(sample(task, truth), answer)
    assert not ok(sample(task, truth.model_copy(update={"tolerance": None})), answer)


def test_a_point_in_range_still_wraps_at_the_antimeridian():
    task, truth = POINTS[1]
    assert ok(sample(task, truth), "-33.86, -179.999")  # 0.006 degrees across 180
    assert ok(sample(task, truth), "-33.86, 180")


def test_the_dms_answer_keeps_its_longitude_in_range():
    s = sample("format_conversion", TextTruth(answer="10°00'00.0\"N, 0°00'36.0\"W"))
    assert ok(s, "10°00'00.0\"N, 0°00'36.0\"W")
    assert not ok(s, "10°00'00.0\"N, 359°59'24.0\"E")  # -0.01 as 359.99


def _missing(value, given):
    truth = NumberTruth(value=value, unit="deg", tolerance=Tolerance(abs=0.1))
    return sample("missing_data", truth, track="probe", given=given)


@pytest.mark.parametrize(
    ("value", "given", "answer", "expected"),
    [
        (179.96, "latitude", "180.05", False),  # 0.09 off, but no longitude
        (179.96, "latitude", "-179.98", True),  # 0.06 away across the antimeridian
        (179.96, "latitude", "179.9", True),
        (-170.0, "latitude", "190", False),
        (-170.0, "latitude", "190 E", False),
        (89.95, "longitude", "90.04", False),  # no latitude beyond the pole
        (89.95, "longitude", "89.9", True),
        (-10.0, "latitude", "350", False),
    ],
)
def test_the_missing_coordinate_lies_in_its_range(value, given, answer, expected):
    assert ok(_missing(value, given), answer) is expected


def test_a_wrapping_tolerance_never_takes_whole_turns_off():
    """Any tolerance with a ``wrap`` (matched by a truth's own tolerance where a task has no
    scorer of its own) accepts only the circle's usual forms, [0, 360] or [-180, 180]."""
    tol = Tolerance(abs=5.0, wrap=360.0)
    assert not any(tol.allows(x, 151.5) for x in (4827.0, -208.5, 511.5, 871.5, -568.5))
    assert not tol.allows(362.0, 2.0) and not tol.allows(-362.0, 358.0)
    assert tol.allows(147.0, 151.5) and tol.allows(-2.0, 358.0) and tol.allows(360.0, 2.0)
    assert tol.allows(-179.999, 179.995)
