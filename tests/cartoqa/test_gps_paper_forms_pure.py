"""Issue 28, item 14 (the Pure track): GPSBench's forms by default, cartoqa's earlier ones
as named variants.

Format conversion is exact at the precision asked ("30.43" for "30.4" is wrong, "30.40"
right), its variant ``format_conversion_lenient`` right within half the last written unit,
and a dataset made before (no precision in its metadata) still scored leniently; UTM, Web
Mercator and the bounding box are asked in plain text (the box as the paper's list north,
west, south, east), JSON still read; pure relative position lists north, south, east, west
in that order, its variant ``relative_position_pure_latlon`` judges by the larger of the
latitude and longitude differences; and every pure task's difficulty labels hold a real
share each.
"""

from __future__ import annotations

import collections
import re

import pytest

from cartoqa.geodesy import compass_direction, initial_bearing_deg, parse_coordinate
from cartoqa.models.baselines import oracle_answer
from cartoqa.records import Sample
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps
from cartoqa.tasks.gps.pure.relative_position_pure import latlon_direction
from cartoqa.tasks.spec import registered_tasks
from tests.gps_scores import score_gps

#: the Pure track's tasks and their variants (their generators' modules are in gps.pure)
MINE = [
    name
    for name, spec in registered_tasks().items()
    if spec.generator is not None
    and spec.generator.__module__.startswith("cartoqa.tasks.gps.pure.")
]


@pytest.fixture(scope="module")
def by_task(tmp_path_factory) -> dict[str, list[Sample]]:
    folder = tmp_path_factory.mktemp("pure_forms") / "g"
    generate_gps(folder, per_task=300, seed=42, tasks=MINE)
    out: dict[str, list[Sample]] = collections.defaultdict(list)
    for s in load_dataset(folder):
        out[s.task].append(s)
    return out


def _md(s: Sample) -> dict:
    return s.metadata.model_extra or {}


def _direction(s: Sample, direction: str) -> bool:
    return _md(s)["direction"] == direction


# ------------------------------------------------------------------ 1: format conversion

_DMS = re.compile(r"(\d+)°(\d+)'([\d.]+)\"([NSEW])")


def _dms_parts(s: Sample) -> list[tuple[str, str, str, str]]:
    parts = _DMS.findall(s.ground_truth.answer)
    assert len(parts) == 2, s.ground_truth.answer
    return parts


def _dms(parts, seconds=lambda x: x, before: bool = False) -> str:
    """A DMS answer from the truth's parts, its seconds rewritten by ``seconds``; with
    ``before``, hemisphere letters first and spaces for symbols."""
    if before:
        return ", ".join(f"{h} {d} {m} {seconds(sec)}" for d, m, sec, h in parts)
    return ", ".join(f"{d}°{m}'{seconds(sec)}\"{h}" for d, m, sec, h in parts)


def _plus(step: float):
    return lambda sec: f"{float(sec) + step:.1f}"


# (name, the answer from the truth's DMS parts, right by the default, right by the variant)
TO_DMS = [
    ("as the truth", lambda p: _dms(p), True, True),
    ("trailing zero, 30.40 for 30.4", lambda p: _dms(p, lambda x: x + "0"), True, True),
    ("letters first, spaces", lambda p: _dms(p, before=True), True, True),
    ("a digit more, 30.43 for 30.4", lambda p: _dms(p, lambda x: x + "3"), False, True),
    ("a tenth of a second off", lambda p: _dms(p, _plus(0.1)), False, False),
]


@pytest.mark.parametrize("task", ["format_conversion", "format_conversion_lenient"])
@pytest.mark.parametrize(("name", "answer", "exact", "lenient"), TO_DMS)
def test_to_dms_is_exact_by_default_and_lenient_in_the_variant(
    by_task, task, name, answer, exact, lenient
):
    want = exact if task == "format_conversion" else lenient
    samples = [s for s in by_task[task] if _direction(s, "to_dms")][:20]
    assert samples
    for s in samples:
        text = "FINAL ANSWER: " + answer(_dms_parts(s))
        assert score_gps(s, text).correct is want, (name, text, s.ground_truth.answer)


def _given(s: Sample) -> tuple[float, float]:
    """The DMS the prompt gives, in decimal degrees (not rounded)."""
    m = re.search(r"Convert (.+?) to decimal degrees", s.prompt.text)
    assert m, s.prompt.text
    return parse_coordinate(m.group(1))


def _not_at_4(v: float) -> bool:
    """Whether ``v`` written to 5 decimals is another number than to 4."""
    return abs(round(v, 5) - round(v, 4)) > 5e-6


TO_DECIMAL = [
    ("4 decimals", lambda la, lo: f"{la:.4f}, {lo:.4f}", True, True),
    ("trailing zeros", lambda la, lo: f"{round(la, 4):.6f}, {round(lo, 4):.6f}", True, True),
    (
        "hemisphere letters",
        lambda la, lo: f"{abs(la):.4f}° {'NS'[la < 0]}, {abs(lo):.4f}° {'EW'[lo < 0]}",
        True,
        True,
    ),
    ("5 decimals, more than asked", lambda la, lo: f"{la:.5f}, {lo:.5f}", False, True),
    ("a thousandth off", lambda la, lo: f"{la + 0.001:.4f}, {lo:.4f}", False, False),
]


@pytest.mark.parametrize("task", ["format_conversion", "format_conversion_lenient"])
@pytest.mark.parametrize(("name", "answer", "exact", "lenient"), TO_DECIMAL)
def test_to_decimal_is_exact_by_default_and_lenient_in_the_variant(
    by_task, task, name, answer, exact, lenient
):
    want = exact if task == "format_conversion" else lenient
    samples = [
        s
        for s in by_task[task]
        if _direction(s, "to_decimal") and all(_not_at_4(v) for v in _given(s))
    ][:20]
    assert samples
    for s in samples:
        text = "FINAL ANSWER: " + answer(*_given(s))
        assert score_gps(s, text).correct is want, (name, text, s.ground_truth)


def test_the_default_asks_the_precision_it_scores(by_task):
    for s in by_task["format_conversion"]:
        if _direction(s, "to_dms"):
            assert "exactly one decimal" in s.prompt.text and _md(s)["seconds_decimals"] == 1
        else:
            assert "exactly 4 decimals" in s.prompt.text and _md(s)["decimals"] == 4
    for s in by_task["format_conversion_lenient"]:
        assert "exactly" not in s.prompt.text
        assert "decimals" not in _md(s) and "seconds_decimals" not in _md(s)


def test_a_value_halfway_between_two_roundings_is_right_either_way(by_task):
    # 0.9" is 0.00025 degrees: "x.xxx2" and "x.xxx3" are both the value to 4 decimals
    (s,) = [x for x in by_task["format_conversion"] if _direction(x, "to_decimal")][:1]
    tie = s.model_copy(
        update={
            "metadata": s.metadata.model_copy(update={"exact_lat": 10.00025, "exact_lon": 20.00075})
        }
    )
    for answer in ("10.0002, 20.0007", "10.0003, 20.0008", "10.0003, 20.0007"):
        assert score_gps(tie, "FINAL ANSWER: " + answer).correct, answer
    assert not score_gps(tie, "FINAL ANSWER: 10.0004, 20.0008").correct


def test_a_dataset_made_before_still_scores_leniently(by_task):
    """A sample stored before the exact rule carries no precision in its metadata: it is
    scored as it was (30.43 for 30.4 right)."""
    for s in [x for x in by_task["format_conversion"]][:10]:
        old_md = {
            k: v
            for k, v in s.metadata.model_dump().items()
            if k not in ("seconds_decimals", "decimals", "exact_lat", "exact_lon")
        }
        old = s.model_copy(update={"metadata": type(s.metadata)(**old_md)})
        if _direction(s, "to_dms"):
            text = _dms(_dms_parts(s), lambda x: x + "3")
        else:
            la, lo = _given(s)
            text = f"{la:.6f}, {lo:.6f}"
        assert score_gps(old, "FINAL ANSWER: " + text).correct, text


# ------------------------------------------------------------------ 2: plain text


def _mode(s: Sample, mode: str) -> bool:
    return _md(s).get("mode") == mode


def test_utm_web_mercator_and_the_box_are_asked_in_plain_text(by_task):
    for s in by_task["coordinate_transformation"]:
        assert "{" not in s.prompt.text, s.prompt.text
    for s in by_task["bounding_box"]:
        assert "{" not in s.prompt.text
        assert "FINAL ANSWER: [<north>, <west>, <south>, <east>]" in s.prompt.text
    # the variants keep their JSON
    assert all('{"area_km2"' in s.prompt.text for s in by_task["polygon_perimeter"])
    assert all('{"min_lat"' in s.prompt.text for s in by_task["bounding_box_full"])


def _box(v: dict[str, float]) -> list[float]:
    return [v["max_lat"], v["min_lon"], v["min_lat"], v["max_lon"]]


# (task, mode, an answer in the form asked, the same in JSON)
PLAIN = [
    (
        "to_utm",
        lambda v: f"easting = {v['easting']:.2f}, northing = {v['northing']:.2f}",
        lambda v: f'{{"easting": {v["easting"]}, "northing": {v["northing"]}}}',
    ),
    (
        "to_mercator",
        lambda v: f"x = {v['x']:.2f}, y = {v['y']:.2f}",
        lambda v: f'{{"x": {v["x"]}, "y": {v["y"]}}}',
    ),
    (
        "box",
        lambda v: "[" + ", ".join(f"{x:.4f}" for x in _box(v)) + "]",
        lambda v: "{" + ", ".join(f'"{k}": {x}' for k, x in v.items()) + "}",
    ),
]


@pytest.mark.parametrize(("mode", "plain", "as_json"), PLAIN)
def test_answers_in_the_plain_form_asked_and_in_json_score_right(by_task, mode, plain, as_json):
    if mode == "box":
        samples = by_task["bounding_box"][:30]
    else:
        samples = [s for s in by_task["coordinate_transformation"] if _mode(s, mode)][:30]
    assert samples
    for s in samples:
        v = s.ground_truth.values
        for text in (plain(v), as_json(v)):
            assert score_gps(s, "FINAL ANSWER: " + text).correct, text
        wrong = {k: x + 1000 if mode != "box" else x + 1 for k, x in v.items()}
        assert not score_gps(s, "FINAL ANSWER: " + plain(wrong)).correct


@pytest.mark.parametrize("task", MINE)
def test_the_oracle_scores_right_on_every_pure_task(by_task, task):
    for s in by_task[task]:
        answer = oracle_answer(s)
        assert score_gps(s, answer).correct, (s.id, answer, score_gps(s, answer))


# ------------------------------------------------------------------ 3: relative position

NSEW = {"A": "north", "B": "south", "C": "east", "D": "west"}
_LABEL = re.compile(r"\((-?\d+\.\d+), (-?\d+\.\d+)\)")


def _ends(s: Sample) -> tuple[float, float, float, float]:
    """origin, then destination, from the labels in the question."""
    m = re.search(r"does (.+) lie from (.+)\?", s.prompt.text)
    assert m, s.prompt.text
    (dest,), (orig,) = _LABEL.findall(m.group(1)), _LABEL.findall(m.group(2))
    return float(orig[0]), float(orig[1]), float(dest[0]), float(dest[1])


_SECTOR = {"N": "north", "S": "south", "E": "east", "W": "west"}


@pytest.mark.parametrize("task", ["relative_position_pure", "relative_position_pure_latlon"])
def test_pure_relative_position_lists_north_south_east_west(by_task, task):
    for s in by_task[task]:
        assert s.ground_truth.options == NSEW, s.ground_truth.options
        assert "A) north\nB) south\nC) east\nD) west" in s.prompt.text
        lat1, lon1, lat2, lon2 = _ends(s)
        if task == "relative_position_pure":
            sector = str(compass_direction(initial_bearing_deg(lat1, lon1, lat2, lon2), points=4))
        else:
            sector, _ = latlon_direction(lat1, lon1, lat2, lon2)
        assert NSEW[s.ground_truth.answer] == _SECTOR[sector], s.id


def test_the_eight_point_variant_still_works(by_task):
    samples = by_task["relative_position_pure_8"]
    assert len(samples) == 300
    for s in samples:
        assert len(s.ground_truth.options) == 8
        assert oracle_answer(s).endswith(s.ground_truth.answer)


def test_the_latlon_rule_across_the_antimeridian_and_on_a_tie():
    # dlon the short way round: from 179 E to 179 W is 2 degrees east
    assert latlon_direction(0.0, 179.0, 1.0, -179.0)[0] == "E"
    assert latlon_direction(0.0, -179.0, 1.0, 179.0)[0] == "W"
    assert latlon_direction(10.0, 0.0, 8.0, 1.0)[0] == "S"
    # an exact tie goes to north or south (and the generator redraws near ties)
    assert latlon_direction(0.0, 0.0, 1.0, 1.0) == ("N", 0.0)


def test_the_papers_321_degree_west_fits_the_latlon_rule_not_the_bearing():
    lat1, lon1, lat2, lon2 = 45.0, 10.0, 52.0, 0.0
    b = float(initial_bearing_deg(lat1, lon1, lat2, lon2))
    assert 318 < b < 323
    assert str(compass_direction(b, points=4)) == "N"
    assert latlon_direction(lat1, lon1, lat2, lon2)[0] == "W"


def test_how_often_the_two_rules_disagree(tmp_path):
    """On the paper's size (3,400 at seed 42) the rules disagree on about a quarter of the
    questions (an outside review counts 24 %); 23.5 % here."""
    generate_gps(tmp_path / "g", per_task=3400, seed=42, tasks=["relative_position_pure"])
    samples = list(load_dataset(tmp_path / "g"))
    differ = 0
    kinds: collections.Counter[tuple[str, str]] = collections.Counter()
    for s in samples:
        lat1, lon1, lat2, lon2 = _ends(s)
        by_latlon, _ = latlon_direction(lat1, lon1, lat2, lon2)
        by_bearing = NSEW[s.ground_truth.answer]
        if _SECTOR[by_latlon] != by_bearing:
            differ += 1
            kinds[by_bearing, _SECTOR[by_latlon]] += 1
    share = differ / len(samples)
    print(f"the rules disagree on {share:.1%} of {len(samples)}: {dict(kinds)}")
    assert 0.18 < share < 0.32, share
    assert kinds["north", "west"] > 0  # the paper's example's kind


# ------------------------------------------------------------------ 4: difficulty labels


@pytest.mark.parametrize("task", MINE)
def test_every_difficulty_label_holds_a_real_share(by_task, task):
    samples = by_task[task]
    counts = collections.Counter(s.metadata.difficulty for s in samples)
    shares = {k: counts[k] / len(samples) for k in ("easy", "medium", "hard")}
    assert all(0.10 <= v <= 0.60 for v in shares.values()), (task, shares)
