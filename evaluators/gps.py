"""Scoring the GPS tasks with GPSBench's tolerances, robust where a public harness is not.

``score_gps(sample, response)`` -> ``GpsScore(correct, closeness, why)``:
``closeness`` is 1 - |error| / |truth| (floored at 0) for the numeric tasks
(distance, polygon area and perimeter), else None.  It never raises: an
unreadable answer is wrong, with the reason.

Tolerances (the spec's): format conversion exact after normalising
precision (half the last written unit: 0.05" of arc, or 0.0001 degrees);
UTM within 10 m, Web Mercator within 100 m, their inverses within 0.0001 /
0.001 degrees; distance within max(5 km, 5 %); bearing within 5 degrees,
wrapping at 360; interpolation within 0.01 degrees; polygon within 5 %;
bounding box per value as the sample states; missing data within 0.1
degrees.  Place association accepts the GeoNames name or any alternate
name, and is also graded at province/state level (GeoNames' admin1 name,
accents, case and words such as "Province" or "Governorate" aside, or a
letter code such as "CA") and at country level.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from cartoqa.geodesy import parse_coordinate
from cartoqa.records import (
    CoordinateTruth,
    NumberTruth,
    Sample,
    TextTruth,
    ValuesTruth,
)

from .answers import answer_matches, normalise_name, parse_answer
from .numeric import AnswerParseError, final_answer_text, parse_number, within_tolerance

__all__ = ["GpsScore", "angle_difference_deg", "division_core", "province_matches", "score_gps"]

_DMS_HALF_UNIT_DEG = 0.05 / 3600 + 1e-9


@dataclass(frozen=True)
class GpsScore:
    correct: bool
    closeness: float | None = None
    """1 - absolute percentage error, floored at 0, for numeric tasks."""
    why: str | None = None
    country_correct: bool | None = None
    """Place association: the answer names the right country."""
    province_correct: bool | None = None
    """Place association: the answer names the right province or state (None where the
    sample has no province name)."""


def angle_difference_deg(a: float, b: float) -> float:
    """The smaller angle between two bearings, in [0, 180]."""
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _lon_difference(a: float, b: float) -> float:
    return angle_difference_deg(a, b)


def _coordinate(text: str) -> tuple[float, float]:
    try:
        return parse_coordinate(final_answer_text(text))
    except ValueError as exc:
        raise AnswerParseError(str(exc)) from None


# words that name the kind of division, not the division ("Bavaria" = "Free State of
# Bavaria"; "Muhafazat al Qahirah" = "al Qahirah Governorate")
_DIVISION_WORDS = re.compile(
    r"\b(?:province|provincia|provinz|state|estado|etat|region|oblast|governorate|muhafazat|"
    r"prefecture|district|county|department|departamento|territory|krai|kray|republic|"
    r"respublika|autonomous|free|federal|capital|of|the|de|del|do|da|des|du|la|le|"
    r"al|ad|an|ar|as|ash|at|az|el)\b"
)


def division_core(name: str) -> str:
    """A province or state name without accents, case, punctuation or division words."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = re.sub(r"[^\w]+", " ", text)
    return " ".join(_DIVISION_WORDS.sub(" ", text).split())


_MAX_FIELDS = 20


def province_matches(answer: str, province: str, code: str = "") -> bool:
    """Whether a "city, province, country" answer names ``province`` (its GeoNames name,
    division words aside), or its letter code where GeoNames uses one (US states: "CA")."""
    written = final_answer_text(answer).split(",", _MAX_FIELDS)
    if len(written) > _MAX_FIELDS:  # a list of places, not "city, province, country"
        return False
    fields = [division_core(f) for f in written[1:]]
    if len(fields) > 2:
        fields = fields[:-1]  # the last is the country
    want = division_core(province)
    if want and any(re.search(rf"\b{re.escape(want)}\b", f) for f in fields):
        return True
    return code.isalpha() and code.casefold() in fields


def _close(pred: float, truth: float) -> float:
    if truth == 0 or not math.isfinite(pred):
        return 0.0
    return max(0.0, 1.0 - abs(pred - truth) / abs(truth))


def _score(sample: Sample, response: str) -> GpsScore:
    task, truth = sample.task, sample.ground_truth
    md = sample.metadata.model_extra or {}
    if task == "format_conversion":
        if isinstance(truth, TextTruth):  # decimal -> DMS: compare the positions
            want = parse_coordinate(truth.answer)
            lat, lon = _coordinate(response)
            ok = (
                abs(lat - want[0]) <= _DMS_HALF_UNIT_DEG
                and _lon_difference(lon, want[1]) <= _DMS_HALF_UNIT_DEG
            )
            return GpsScore(ok, why=None if ok else "wrong")
        assert isinstance(truth, CoordinateTruth)
        lat, lon = _coordinate(response)
        ok = abs(lat - truth.lat) <= 1e-4 and _lon_difference(lon, truth.lon) <= 1e-4
        return GpsScore(ok, why=None if ok else "wrong")
    if isinstance(truth, CoordinateTruth):  # inverse projections, interpolation
        tol = float(md.get("tolerance_deg", 0.01))
        lat, lon = _coordinate(response)
        ok = abs(lat - truth.lat) <= tol and _lon_difference(lon, truth.lon) <= tol
        return GpsScore(ok, why=None if ok else f"off by more than {tol} degrees")
    if task == "distance":
        assert isinstance(truth, NumberTruth)
        got = parse_number(final_answer_text(response))
        value = got.value
        if got.unit == "mi":
            value *= 1.609344
        elif got.unit == "m":
            value /= 1000
        ok = within_tolerance(value, truth.value, abs_tol=5.0, rel_tol=0.05)
        return GpsScore(ok, _close(value, truth.value), None if ok else "outside max(5 km, 5%)")
    if task == "bearing":
        assert isinstance(truth, NumberTruth)
        value = parse_number(final_answer_text(response)).value
        ok = angle_difference_deg(value, truth.value) <= 5.0
        return GpsScore(ok, why=None if ok else "more than 5 degrees off")
    if task == "missing_data":
        assert isinstance(truth, NumberTruth)
        value = parse_number(final_answer_text(response)).value
        ok = abs(value - truth.value) <= 0.1
        return GpsScore(ok, why=None if ok else "more than 0.1 degrees off")
    if isinstance(truth, ValuesTruth):
        got = parse_answer("values", response)
        missing = [k for k in truth.values if k not in got]
        if missing:
            return GpsScore(False, 0.0 if task == "polygon" else None, f"missing {missing}")
        ok = all(
            isinstance(got[k], int | float)
            and within_tolerance(float(got[k]), v, abs_tol=truth.tolerances.get(k, 0.0))
            for k, v in truth.values.items()
        )
        closeness = None
        if task == "polygon":
            closeness = sum(
                _close(float(got[k]), v) if isinstance(got[k], int | float) else 0.0
                for k, v in truth.values.items()
            ) / len(truth.values)
        return GpsScore(ok, closeness, None if ok else "a value outside its tolerance")
    if task == "place_association":
        assert isinstance(truth, TextTruth)
        text = final_answer_text(response)
        city = normalise_name(text.split(",")[0])
        names = {normalise_name(n) for n in [truth.answer, *truth.accepted]}
        country = str(md.get("country") or "")
        country_ok = bool(country) and normalise_name(country) in normalise_name(text)
        province = md.get("province")
        province_ok = (
            province_matches(text, str(province), str(md.get("admin1") or "")) if province else None
        )
        ok = city in names
        return GpsScore(
            ok,
            why=None if ok else "another place",
            country_correct=country_ok,
            province_correct=province_ok,
        )
    parsed = parse_answer(truth.kind, response)
    ok = answer_matches(truth, parsed)
    return GpsScore(ok, why=None if ok else "wrong")


def score_gps(sample: Sample, response: str | None) -> GpsScore:
    """Score one GPS answer; never raises (unreadable answers are wrong, with the reason)."""
    if response is None or not response.strip():
        return GpsScore(False, 0.0 if sample.task in ("distance", "polygon") else None, "no answer")
    try:
        return _score(sample, response)
    except (
        AnswerParseError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        IndexError,
        OverflowError,
    ) as exc:
        closeness = 0.0 if sample.task in ("distance", "polygon") else None
        return GpsScore(False, closeness, f"unreadable: {str(exc)[:120]}")
