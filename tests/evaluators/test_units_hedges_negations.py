"""Issue 27, item 4: scorers fooled by units, signs, hedges and negations.

Every unit a parser meets is converted to the unit asked (km, miles, nautical miles, feet,
yards, radians, acres, hectares, m², mi²) or refused (a word that is no unit, a unit of
another dimension: a length for an area); a multiplier word ("2 million") is applied; a
negated answer ("not 2", "not E") is no answer, a rejected option ("E is wrong; it is A")
is passed over for the one given; a hedged answer ("A or B", "2 or 3", "133° or 313°",
"maybe 4, maybe 5") is wrong.  The cases run for every task family: the six map tasks
(MFS, STMF presence / count / names, MTMF, RLE, MML, SRN) and the 17 GPS tasks, on the
samples of ``test_hostile_answers`` (generated GPS samples, whose oracle answers score
right there).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest

from cartoqa.records import (
    ChoiceTruth,
    CountTruth,
    NumberTruth,
    Sample,
    Tolerance,
    ValuesTruth,
)
from cartoqa.scoring import is_correct, score_sample
from cartoqa.tasks.gps import GPS_TASKS
from evaluators import AnswerParseError, parse_number
from evaluators.numeric import in_unit
from tests.evaluators.test_gps_scoring import sample as gps_sample
from tests.evaluators.test_hostile_answers import _sample as map_sample

Make = Callable[[Sample], str]


def _key(s: Sample) -> str:
    if s.task == "rle":
        return f"rle-{s.ground_truth.unit}"
    if s.task in ("format_conversion", "coordinate_transformation"):
        return f"{s.task}/{s.ground_truth.kind}"
    return s.task


@pytest.fixture(scope="module")
def samples(every_task_samples) -> dict[str, Sample]:
    out = {}
    for s in every_task_samples:
        if s.id != "srn-free":
            out.setdefault(_key(s), s)
    return out


def v(s: Sample) -> float:
    return s.ground_truth.value


def fa(text: str) -> Make:
    """A constant answer after FINAL ANSWER."""
    return lambda s: f"FINAL ANSWER: {text}"


def num(template: str, f: Callable[[float], float] = lambda x: x) -> Make:
    """FINAL ANSWER with the truth's value (transformed by ``f``) put in ``template``."""
    return lambda s: "FINAL ANSWER: " + template.format(f(v(s)))


def first_line(template: str, f: Callable[[float], float] = lambda x: x) -> Make:
    """RLE's layout: the length on the first line."""
    return lambda s: template.format(f(v(s))) + "\nMeasured along the path."


# ------------------------------------------------------------------ option letters


def _right(s: Sample) -> str:
    return s.ground_truth.answer


def _other(s: Sample) -> str:
    return next(k for k in sorted(s.ground_truth.options) if k != s.ground_truth.answer)


def choice_cases(final: bool) -> list[tuple[str, Make, bool]]:
    """Hedged, negated and rejected option letters (with a FINAL ANSWER marker or bare, as
    the MFS prompt asks for the letter alone); R the right letter, O another (in the ids)."""
    lead = "FINAL ANSWER: " if final else ""

    def say(template: str) -> Make:
        return lambda s: lead + template.format(r=_right(s), o=_other(s))

    return [
        (lead + label, make, ok)
        for label, make, ok in [
            ("R", say("{r}"), True),
            ("not R", say("not {r}"), False),
            ("NOT (R)", say("NOT ({r})"), False),
            ("R or O", say("{r} or {o}"), False),
            ("R, O", say("{r}, {o}"), False),
            ("R/O", say("{r}/{o}"), False),
            ("R and O", say("{r} and {o}"), False),
            ("maybe R, maybe O", say("maybe {r}, maybe {o}"), False),
            ("R is wrong; it is O", say("{r} is wrong; it is {o}"), False),
            ("O is wrong; it is R", say("{o} is wrong; it is {r}"), True),
            ("O is incorrect, so R", say("{o} is incorrect, so {r}"), True),
            ("R, not O", say("{r}, not {o}"), True),
        ]
    ]


# ------------------------------------------------------------------ yes or no


def _word(s: Sample, right: bool) -> str:
    return "yes" if s.ground_truth.value is right else "no"


def yes_no_cases(final: bool) -> list[tuple[str, Make, bool]]:
    lead = "FINAL ANSWER: " if final else ""
    return [
        ("the right word", lambda s: f"{lead}{_word(s, True).capitalize()}", True),
        ("right or wrong", lambda s: f"{lead}{_word(s, True)} or {_word(s, False)}", False),
        ("Right/Wrong", lambda s: f"{lead}{_word(s, True).capitalize()}/{_word(s, False)}", False),
        (
            "maybe right, maybe wrong",
            lambda s: f"{lead}Maybe {_word(s, True)}, maybe {_word(s, False)}",
            False,
        ),
        ("not right", lambda s: f"{lead}Not {_word(s, True)}", False),
    ]


# ------------------------------------------------------------------ coordinates and JSON


def coordinate_cases() -> list[tuple[str, Make, bool]]:
    def point(s: Sample, d: float = 0.0) -> str:
        t = s.ground_truth
        return f"{t.lat + d:.6f}, {t.lon + d:.6f}"

    return [
        ("the point", lambda s: f"FINAL ANSWER: {point(s)}", True),
        ("not the point", lambda s: f"FINAL ANSWER: not {point(s)}", False),
        ("the point or another", lambda s: f"FINAL ANSWER: {point(s)} or {point(s, 1)}", False),
        (
            "maybe the point, maybe another",
            lambda s: f"FINAL ANSWER: maybe {point(s)}, maybe {point(s, 1)}",
            False,
        ),
    ]


def values_cases(scale: dict[str, tuple[str, float]]) -> list[tuple[str, Make, bool]]:
    """A ValuesTruth's object with one value written as a string: converted from a unit of
    its dimension (``scale``: unit written -> how many of them one asked unit is), refused
    in another's, hedged or negated."""

    def obj(s: Sample, first: Callable[[float], str]) -> str:
        values = dict(s.ground_truth.values)
        k = next(iter(values))
        out: dict[str, object] = {**values, k: first(values[k])}
        return "FINAL ANSWER: " + json.dumps(out, ensure_ascii=False)

    (unit, per), (wrong_unit, _) = list(scale.items())
    return [
        ("all numbers", lambda s: obj(s, lambda x: x), True),
        ("a value as text", lambda s: obj(s, lambda x: f"{x}"), True),
        (f"a value in {unit}", lambda s: obj(s, lambda x: f"{x * per:.10g} {unit}"), True),
        (f"a value in {wrong_unit}", lambda s: obj(s, lambda x: f"{x} {wrong_unit}"), False),
        ("a value in furlongs", lambda s: obj(s, lambda x: f"{x} furlongs"), False),
        ("a value hedged", lambda s: obj(s, lambda x: f"{x} or {x + 50}"), False),
        ("a value negated", lambda s: obj(s, lambda x: f"not {x}"), False),
        ("a value in thousands", lambda s: obj(s, lambda x: f"{x / 1000:.10g} thousand"), True),
        ("a value times a million", lambda s: obj(s, lambda x: f"{x} million"), False),
    ]


# ------------------------------------------------------------------ every family


CASES: dict[str, list[tuple[str, Make, bool]]] = {
    "mfs": choice_cases(final=False) + choice_cases(final=True),
    "stmf_presence": yes_no_cases(final=False),
    "stmf_count": [
        ("3", lambda s: "3", True),
        ("not 3", lambda s: "not 3", False),
        ("3 million", lambda s: "3 million", False),
        ("3 thousand", lambda s: "3 thousand", False),
        ("3 or 4", lambda s: "3 or 4", False),
        ("three or four", lambda s: "three or four", False),
        ("maybe 3, maybe 4", lambda s: "maybe 3, maybe 4", False),
        ("3-4", lambda s: "3-4", False),
        ("between 3 and 4", lambda s: "between 3 and 4", False),
        ("There are 3 or 4 banks", lambda s: "There are 3 or 4 banks", False),
        ("3 (or maybe 4)", lambda s: "3 (or maybe 4)", False),
        ("2 is wrong; it is 3", lambda s: "2 is wrong; it is 3", True),
        ("3 is wrong; it is 4", lambda s: "3 is wrong; it is 4", False),
        ("Not 4, but 3", lambda s: "Not 4, but 3", True),
    ],
    "stmf_names": [
        ("the names", lambda s: 'Café Noir\n""', True),
        ("a name or another", lambda s: 'Café Noir or Café Rouge\n""', False),
        ("not the name", lambda s: 'not Café Noir\n""', False),
        ("both as a list", lambda s: '["Café Noir", "Café Rouge", ""]', False),
    ],
    "mtmf": [
        ("the table", lambda s: '{"bank": {"count": 1, "names": ["Nordea"]}}', True),
        ("a count as text", lambda s: '{"bank": {"count": "1", "names": ["Nordea"]}}', True),
        ("a hedged count", lambda s: '{"bank": {"count": "1 or 2", "names": ["Nordea"]}}', False),
        ("a negated count", lambda s: '{"bank": {"count": "not 1", "names": ["Nordea"]}}', False),
        (
            "a count in millions",
            lambda s: '{"bank": {"count": "1 million", "names": ["Nordea"]}}',
            False,
        ),
        (
            "a hedged name",
            lambda s: '{"bank": {"count": 1, "names": ["Nordea or Danske Bank"]}}',
            False,
        ),
    ],
    "rle-m": [
        ("metres", first_line("{:g} m"), True),
        ("kilometres", first_line("{:g} km", lambda x: x / 1000), True),
        ("feet", first_line("{:.1f} ft", lambda x: x / 0.3048), True),
        ("yards", first_line("{:.1f} yards", lambda x: x / 0.9144), True),
        ("miles", first_line("{:.5f} miles", lambda x: x / 1609.344), True),
        ("the number in km", first_line("{:g} km"), False),
        ("the number in miles", first_line("{:g} miles"), False),
        ("the number in feet", first_line("{:g} ft"), False),
        ("the number in furlongs", first_line("{:g} furlongs"), False),
        ("the number in m²", first_line("{:g} m²"), False),
        ("the number in degrees", first_line("{:g}°"), False),
        ("not the length", first_line("not {:g} m"), False),
        ("the length or more", first_line("{:g} or 400 m"), False),
        ("the length in two units", first_line("{:g} m (or 984 ft)"), True),
        ("the length in thousands", first_line("{:g} thousand m"), False),
        ("a fraction of a thousand", first_line("{:g} thousand m", lambda x: x / 1000), True),
    ],
    "rle-ft": [
        ("feet", first_line("{:g} ft"), True),
        ("metres", first_line("{:.2f} m", lambda x: x * 0.3048), True),
        ("yards", first_line("{:g} yd", lambda x: x / 3), True),
        ("the number in m", first_line("{:g} m"), False),
        ("the number in nautical miles", first_line("{:g} nautical miles"), False),
        ("not the length", first_line("not {:g} ft"), False),
        ("the length or more", first_line("{:g} ft or 1300 ft"), False),
    ],
    "mml": [
        ("the pair", lambda s: "FINAL ANSWER: Rue Grimaldi and Quai Antoine 1er", True),
        (
            "a hedged road",
            lambda s: (
                '{"road_1": "Rue Grimaldi or Rue Princesse Caroline", "road_2": "Quai Antoine 1er"}'
            ),
            False,
        ),
        (
            "negated roads",
            lambda s: "FINAL ANSWER: not Rue Grimaldi and not Quai Antoine 1er",
            False,
        ),
    ],
    "srn": [
        (
            "the route",
            lambda s: (
                '["blue", "continue straight", "North Street", "turn right", "East Road", "red"]'
            ),
            True,
        ),
        (
            "a hedged road",
            lambda s: (
                '["blue", "continue straight", "North Street or East Road", "turn right", '
                '"East Road", "red"]'
            ),
            False,
        ),
        (
            "a hedged action",
            lambda s: (
                '["blue", "continue straight or turn right", "North Street", "turn right", '
                '"East Road", "red"]'
            ),
            False,
        ),
        (
            "a bare list with a hedge",
            lambda s: (
                "[blue, continue straight, North Street, turn right or turn left, East Road, red]"
            ),
            False,
        ),
    ],
    # ---------------------------------------------------------------- GPS
    "format_conversion/text": [
        ("the DMS", lambda s: "FINAL ANSWER: " + s.ground_truth.answer, True),
        ("not the DMS", lambda s: "FINAL ANSWER: not " + s.ground_truth.answer, False),
        (
            "the DMS or another",
            lambda s: f"FINAL ANSWER: {s.ground_truth.answer} or 33°16'00.0\"N, 4°38'00.0\"E",
            False,
        ),
    ],
    "format_conversion/coordinate": coordinate_cases(),
    "coordinate_transformation/values": values_cases({"km": 0.001, "deg": 1.0}),
    "coordinate_transformation/coordinate": coordinate_cases(),
    "distance": [
        ("km", num("{:g} km"), True),
        ("miles", num("{:.1f} miles", lambda x: x / 1.609344), True),
        ("metres", num("{:.0f} m", lambda x: x * 1000), True),
        ("nautical miles", num("{:.1f} nautical miles", lambda x: x / 1.852), True),
        ("thousands of km", num("{:g} thousand km", lambda x: x / 1000), True),
        ("the number in km²", num("{:g} km²"), False),
        ("the number in light years", num("{:g} light years"), False),
        ("the number in furlongs", num("{:g} furlongs"), False),
        ("the number in radians", num("{:g} rad"), False),
        ("the number in thousands of km", num("{:g} thousand km"), False),
        ("the number in millions of km", num("{:g} million km"), False),
        ("not the distance", num("not {:g} km"), False),
        ("the distance or twice it", lambda s: f"FINAL ANSWER: {v(s):g} or {2 * v(s):g} km", False),
        (
            "maybe the distance, maybe twice it",
            lambda s: f"FINAL ANSWER: maybe {v(s):g} km, maybe {2 * v(s):g} km",
            False,
        ),
        (
            "the distance in two units",
            lambda s: f"FINAL ANSWER: {v(s):g} km or {v(s) / 1.609344:.1f} miles",
            True,
        ),
        (
            "a working whose result is hedged",
            lambda s: f"FINAL ANSWER: d = 2R asin(h) = {v(s):g} or {2 * v(s):g} km",
            False,
        ),
    ],
    "bearing": [
        ("degrees", num("{:g}°"), True),
        ("radians", num("{:.6f} rad", math.radians), True),
        ("the number in radians", num("{:g} rad"), False),
        ("the number in gradians", num("{:g} gradians"), False),
        ("the number in km", num("{:g} km"), False),
        ("plus 36000", num("{:g}°", lambda x: x + 36000), False),
        ("minus 360", num("{:g}°", lambda x: x - 360), False),
        ("the number in thousands of degrees", num("{:g} thousand degrees"), False),
        (
            "the bearing or its back bearing",
            lambda s: f"FINAL ANSWER: {v(s):g}° or {v(s) + 180:g}°",
            False,
        ),
        ("not the bearing", num("not {:g}°"), False),
    ],
    "interpolation": coordinate_cases(),
    "polygon": [
        ("km²", num("{:g} km²"), True),
        ("sq km", num("{:g} sq km"), True),
        ("square kilometres", num("{:g} square kilometres"), True),
        ("acres", num("{:.0f} acres", lambda x: x / 0.0040468564224), True),
        ("hectares", num("{:.0f} hectares", lambda x: x * 100), True),
        ("square miles", num("{:.1f} square miles", lambda x: x / 2.589988110336), True),
        ("m²", num("{:.4g} m²", lambda x: x * 1e6), True),
        ("thousands of km²", num("{:g} thousand km²", lambda x: x / 1000), True),
        ("the number in km", num("{:g} km"), False),
        ("the number in miles", num("{:g} miles"), False),
        ("the number in light years", num("{:g} light years"), False),
        ("the number in acres", num("{:g} acres"), False),
        ("the number in hectares", num("{:g} ha"), False),
        ("the number in furlongs", num("{:g} furlongs"), False),
        ("the number in millions of km²", num("{:g} million km²"), False),
        ("not the area", num("not {:g} km²"), False),
        ("the area or twice it", lambda s: f"FINAL ANSWER: {v(s):g} or {2 * v(s):g} km²", False),
    ],
    "bounding_box": values_cases({"rad": math.pi / 180, "km": 1.0}),
    "route_geometry": choice_cases(final=True),
    "relative_position_pure": choice_cases(final=True),
    "place_association": [
        ("the place", lambda s: f"FINAL ANSWER: {s.ground_truth.answer}, Spain", True),
        ("not the place", lambda s: f"FINAL ANSWER: not {s.ground_truth.answer}, Spain", False),
        (
            "the city or another",
            lambda s: f"FINAL ANSWER: {s.ground_truth.answer} or Toledo, Spain",
            False,
        ),
    ],
    "name_disambiguation": choice_cases(final=True),
    "relative_position_applied": choice_cases(final=True),
    "proximity": choice_cases(final=True),
    "route_analysis": yes_no_cases(final=True),
    "spatial_patterns": [
        ("the outlier", lambda s: "FINAL ANSWER: " + s.ground_truth.answer, True),
        ("not the outlier", lambda s: "FINAL ANSWER: not " + s.ground_truth.answer, False),
        (
            "the outlier or another",
            lambda s: f"FINAL ANSWER: {s.ground_truth.answer} or Tabriz",
            False,
        ),
    ],
    "boundary_analysis": [
        ("the groups", lambda s: "FINAL ANSWER: " + json.dumps(s.ground_truth.groups), True),
        (
            "a city in two groups",
            lambda s: (
                "FINAL ANSWER: "
                + json.dumps(
                    {
                        k: [*g, *next(iter(s.ground_truth.groups.values()))]
                        for k, g in s.ground_truth.groups.items()
                    }
                )
            ),
            False,
        ),
    ],
    "terrain_classification": choice_cases(final=True),
    "missing_data": [
        ("degrees", num("{:g}°"), True),
        ("degrees east", num("{:g}° E"), True),
        ("radians", num("{:.7f} rad", math.radians), True),
        ("the number in radians", num("{:g} rad"), False),
        ("the number in km", num("{:g} km"), False),
        ("not the longitude", num("not {:g}"), False),
        ("the longitude or its opposite", lambda s: f"FINAL ANSWER: {v(s):g} or {-v(s):g}", False),
    ],
}


def test_the_cases_cover_every_task_family(samples):
    assert set(CASES) == set(samples)
    assert {k.split("/")[0] for k in CASES} >= set(GPS_TASKS)
    assert {"mfs", "stmf_presence", "stmf_count", "stmf_names", "mtmf", "mml", "srn"} <= set(CASES)


@pytest.mark.parametrize(
    ("key", "text", "make", "expected"),
    [(k, label, make, ok) for k, cases in CASES.items() for label, make, ok in cases],
    ids=[f"{k}: {label}" for k, cases in CASES.items() for label, _, _ in cases],
)
def test_units_hedges_and_negations_score_as_stated(samples, key, text, make, expected):
    s = samples[key]
    answer = make(s)
    got = score_sample(s, answer)
    assert bool(got.correct) is expected, f"{answer!r}: {got.why}"


# ------------------------------------------------------------------ the issue's own cases

BEARING = gps_sample(
    "bearing", NumberTruth(value=26.811, unit="deg", tolerance=Tolerance(abs=5.0, wrap=360.0))
)
RLE = map_sample(
    "rle", "rle", NumberTruth(value=90.0, unit="m", equivalents={"ft": 295.28}), unit="m"
)
POLYGON = gps_sample(
    "polygon", NumberTruth(value=1000.0, unit="km2", tolerance=Tolerance(rel=0.05))
)
COUNT = map_sample("count", "stmf_count", CountTruth(value=2, feature_type="bank"))
_OPTIONS = {"A": "bank", "B": "cafe", "C": "pub", "D": "bar", "E": "atm"}
MFS_E = map_sample("mfs-e", "mfs", ChoiceTruth(answer="E", options=_OPTIONS))
MFS_A = map_sample("mfs-a", "mfs", ChoiceTruth(answer="A", options=_OPTIONS))
PERIMETER = gps_sample(
    "polygon_perimeter",
    ValuesTruth(
        values={"area_km2": 1000.0, "perimeter_km": 130.0},
        tolerances={"area_km2": 50.0, "perimeter_km": 6.5},
        units={"area_km2": "km2", "perimeter_km": "km"},
    ),
)


@pytest.mark.parametrize(
    ("s", "answer", "expected"),
    [
        (BEARING, "FINAL ANSWER: 36026.811°", False),
        (BEARING, "FINAL ANSWER: -333.189°", False),  # outside -180..360: refused, not wrapped
        (BEARING, "FINAL ANSWER: 26.811 rad", False),
        (BEARING, "FINAL ANSWER: 0.467942 rad", True),  # 26.811° in radians
        (BEARING, "FINAL ANSWER: 133° or 313°", False),
        (BEARING, "FINAL ANSWER: 26.811°", True),
        (RLE, "90 km", False),
        (RLE, "90 miles", False),
        (RLE, "0.09 km", True),
        (RLE, "90 m", True),
        (POLYGON, "FINAL ANSWER: 1000 acres", False),
        (POLYGON, "FINAL ANSWER: 1000 km", False),
        (POLYGON, "FINAL ANSWER: 1000 light years", False),
        (POLYGON, "FINAL ANSWER: 247105 acres", True),
        (POLYGON, "FINAL ANSWER: 1000 km²", True),
        (COUNT, "not 2", False),
        (COUNT, "2 million", False),
        (COUNT, "2 or 3", False),
        (COUNT, "maybe 4, maybe 5", False),
        (COUNT, "2", True),
        (MFS_E, "not E", False),
        (MFS_E, "E is wrong; it is A", False),
        (MFS_A, "E is wrong; it is A", True),  # a careful grader reads A
        (MFS_E, "A, B", False),
        (PERIMETER, 'FINAL ANSWER: {"area_km2": "1000 km", "perimeter_km": 130}', False),
        (PERIMETER, 'FINAL ANSWER: {"area_km2": "247105 acres", "perimeter_km": "130 km"}', True),
        (PERIMETER, 'FINAL ANSWER: {"area_km2": 1000, "perimeter_km": "130 km²"}', False),
    ],
)
def test_the_issues_cases(s, answer, expected):
    got = score_sample(s, answer)
    assert bool(got.correct) is expected, f"{answer!r}: {got.why}"
    if not expected and s is not BEARING:
        assert got.why, answer


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("2 million", 2e6, None),
        ("1.5 thousand km", 1500, "km"),
        ("3 nautical miles", 3, "nmi"),
        ("1000 sq. km", 1000, "km2"),
        ("1000 km^2", 1000, "km2"),
        ("1000 km2", 1000, "km2"),
        ("1000 square miles", 1000, "mi2"),
        ("5 hectares", 5, "ha"),
        ("5 acres", 5, "acre"),
        ("2 light-years", 2, "ly"),
        ("0.5 radians", 0.5, "rad"),
        ("53.0261° W", 53.0261, "deg"),
        ("9568 km or 5945 miles", 9568, "km"),  # one distance in two units: no hedge
        ("not 2 but 3", 3, None),
        ("E is wrong; it is 3", 3, None),
    ],
)
def test_parse_number_reads_units_and_multipliers(text, value, unit):
    got = parse_number(text)
    assert got.value == pytest.approx(value) and got.unit == unit and got.unknown is None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not 2", "negated"),
        ("2 or 3", "hedged"),
        ("133° or 313°", "hedged"),
        ("maybe 4, maybe 5", "hedged"),
        ("2-3", "hedged"),
        ("between 2 and 3", "hedged"),
        ("2 km or 3 miles", "hedged"),
    ],
)
def test_parse_number_refuses_hedges_and_negations(text, match):
    with pytest.raises(AnswerParseError, match=match):
        parse_number(text)


@pytest.mark.parametrize(
    ("text", "unit", "expected"),
    [
        ("90 km", "m", 90_000),
        ("90 miles", "m", 144_840.96),
        ("10 ft", "m", 3.048),
        ("10 yd", "m", 9.144),
        ("1 nmi", "m", 1852),
        ("3.141592653589793 rad", "deg", 180),
        ("247.105 acres", "km2", 1.0),
        ("100 ha", "km2", 1.0),
        ("1e6 m²", "km2", 1.0),
        ("1 mi²", "km2", 2.589988110336),
        ("7", "km", 7),  # no unit: the unit asked
        ("2 km²", "km²", 2),  # a truth's unit written otherwise
    ],
)
def test_in_unit_converts(text, unit, expected):
    assert in_unit(parse_number(text), unit) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    ("text", "unit", "match"),
    [
        ("1000 km", "km2", "a length, not an area"),
        ("1000 m", "km²", "a length, not an area"),
        ("1000 light years", "km2", "a length, not an area"),
        ("26.8 km", "deg", "a length, not an angle"),
        ("5 acres", "m", "an area, not a length"),
        ("90 furlongs", "m", "'furlongs' is no unit known"),
        ("26.8 gradians", "deg", "'gradians' is no unit known"),
    ],
)
def test_in_unit_refuses_other_dimensions_and_unknown_words(text, unit, match):
    with pytest.raises(AnswerParseError, match=match):
        in_unit(parse_number(text), unit)


def test_an_answer_that_rules_out_values_without_end_is_unreadable():
    assert not is_correct(MFS_A, "E is wrong; " * 5_000 + "A")
    assert not is_correct(COUNT, "not 3, " * 5_000 + "2")
