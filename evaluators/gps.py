"""Scoring the GPS tasks with GPSBench's tolerances, robust where a public harness is not.

``score_gps(sample, response)`` -> ``GpsScore(correct, closeness, why)``:
``closeness`` is 1 - |error| / |truth| (floored at 0) for the numeric tasks
(distance, polygon area, and area and perimeter in the variant), else None.  It never raises: an
unreadable answer is wrong, with the reason.

Tolerances (the spec's): format conversion exact after normalising
precision (half the last written unit: 0.05" of arc, or 0.0001 degrees);
UTM within 10 m, Web Mercator within 100 m, their inverses within 0.0001 /
0.001 degrees; distance within max(5 km, 5 %); bearing within 5 degrees,
wrapping at 360 for an answer in a bearing's range (``RANGES``: 0-360, or the
signed -180-180; 4827 or -208.5 is wrong, never taken modulo 360);
interpolation within 0.01 degrees; polygon within 5 %; bounding box per value
as the sample states; missing data within 0.1 degrees, a longitude in
-180-180 (wrapping at the antimeridian) and a latitude in -90-90; spatial
patterns' outlier by name (GeoNames or alternate name, a
qualifier such as "(Murun)" or "city" allowed).  Place association accepts
the GeoNames name or any alternate name, and is also graded at province/state
level (GeoNames' admin1 name, accents, case and words such as "Province"
or "Governorate" aside, or a letter code such as "CA") and at country level.

Numbers are read in the truth's unit (``evaluators.numeric.in_unit``): a distance in
miles, metres or nautical miles, an area in m², mi², ha or acres, an angle in radians is
converted, and one of another dimension (a polygon's "1000 km", a bearing's "26.8 km") or
a word that is no unit is unreadable; the values of an answer's object are read in their
key's unit (the truth's ``units``; degrees for a latitude or longitude).  Negated and
hedged answers are unreadable (``evaluators.hedges``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from cartoqa.geodesy import parse_coordinate
from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    CoordinateTruth,
    IndicesTruth,
    NumberTruth,
    Sample,
    TextTruth,
    Tolerance,
    ValuesTruth,
)

from .answers import (
    CACHED_NAME_CHARS,
    answer_matches,
    last_json_value,
    normalise_name,
    parse_answer,
    parse_choice,
    parse_yes_no,
)
from .metrics import closeness
from .numeric import (
    AnswerParseError,
    final_answer_region,
    final_answer_text,
    in_unit,
    parse_number,
    parse_result_number,
    within_tolerance,
)

__all__ = [
    "RANGES",
    "GpsScore",
    "angle_difference_deg",
    "city_names",
    "country_code",
    "division_core",
    "out_of_range",
    "province_matches",
    "read_values",
    "score_gps",
]

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


#: The values each circular quantity may be written as; a tolerance wraps (360 and 0 are
#: one direction, 180 and -180 one meridian) only for an answer inside its range, and any
#: other value is wrong, never taken modulo 360 (4827 is no bearing of 151.5, nor -208.5).
#: A bearing is the spec's 0-360 clockwise from north or the signed -180-180 that atan2
#: and pyproj give (-10 for 350); a longitude is -180-180 only (east positive, as GeoNames
#: and the prompts write it: 350 is no longitude of -10); a latitude -90-90.
RANGES: dict[str, tuple[float, float]] = {
    "bearing": (-180.0, 360.0),
    "longitude": (-180.0, 180.0),
    "latitude": (-90.0, 90.0),
}


def out_of_range(value: float, quantity: str) -> str | None:
    """Why ``value`` is no ``quantity`` ("bearing", "longitude", "latitude"), or None."""
    lo, hi = RANGES[quantity]
    if lo <= value <= hi:
        return None
    return f"{value:g} is outside a {quantity}'s range ({lo:g} to {hi:g} degrees); never wrapped"


def _coordinate(text: str) -> tuple[float, float]:
    """The point an answer gives; ``parse_coordinate`` refuses a latitude or longitude out of
    its range (``RANGES``), so the longitude's wrap never takes a turn off."""
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
    """A province or state name without accents, case, punctuation or division words; a
    name made of division words only ("Federal District", "Capital District") is kept whole."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = re.sub(r"[^\w]+", " ", text)
    return " ".join(_DIVISION_WORDS.sub(" ", text).split()) or " ".join(text.split())


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
        # a province whose own name has commas ("Southern Nations, Nationalities, and
        # People's Region"): everything between the city and the country, as one field
        fields.append(" ".join(fields))
    want = division_core(province)
    if want and any(re.search(rf"\b{re.escape(want)}\b", f) for f in fields):
        return True
    return code.isalpha() and code.casefold() in fields


# ------------------------------------------------------------------ numbers and values

# "53.0261° W", "53.0261 degrees west", "12.5 S"
_HEMI_AFTER = re.compile(r"\d\s*(?:°|deg(?:rees?)?)?\s*(west|south|w|s)\b", re.IGNORECASE)


def _degrees(response: str) -> float:
    """A signed angle: the result number (in degrees, converted from radians; another unit
    refused), negative where a hemisphere letter says W or S."""
    value = in_unit(parse_result_number(response), "deg")
    if value > 0 and _HEMI_AFTER.search(final_answer_text(response)[:1000]):
        value = -value
    return value


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.casefold())


def _loose_object(text: str) -> dict[str, object]:
    """The last {...} in ``text`` read leniently: single quotes, unquoted keys and numbers
    with thousands commas ("810,891.5") allowed."""
    start = text.rfind("{")
    end = text.find("}", start)
    if start < 0 or end < 0:
        raise AnswerParseError(f"no {{...}} in {text[:80]!r}")
    body = text[start + 1 : end]
    out: dict[str, object] = {}
    for m in re.finditer(
        r"""["']?([A-Za-z_][\w ]{0,40}?)["']?\s*:\s*("[^"]{0,80}"|'[^']{0,80}'|"""
        r"""[+\-\u2212]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[^,}]{1,80})""",
        body,
    ):
        out[m.group(1).strip()] = m.group(2).strip().strip("'\"")
    return out


# "Zone 13N, 810891.5 E, 2252034.6 N", "zone 13, easting 810891.5 m, northing 2252034.6 m"
_UTM_TEXT = {
    "zone": re.compile(r"zone\s*[:=]?\s*(\d{1,2})", re.IGNORECASE),
    "easting": re.compile(
        r"easting\s*[:=]?\s*([\d,.]+)|(\d{4}[\d,.]*)\s*(?:m\s*)?(?:E\b|easting)", re.IGNORECASE
    ),
    "northing": re.compile(
        r"northing\s*[:=]?\s*([\d,.]+)|(\d{4}[\d,.]*)\s*(?:m\s*)?(?:N\b|northing)",
        re.IGNORECASE,
    ),
}


def _as_number(value: object, unit: str | None = None) -> float | None:
    """A value of an answer's object as a number in ``unit`` (None: as written); a string
    is read by ``parse_number`` ("13N" -> 13, "810,891.5 m" -> 810891.5, "465.6 km" in m
    -> 465600); a string with no digit is no value (None), one hedged, negated or in a unit
    of another dimension is ``AnswerParseError``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.search(r"\d", value[:200]):
        got = parse_number(value[:200])
        return got.value if unit is None and got.unknown is None else in_unit(got, unit)
    return None


def _key_unit(key: str, units: dict[str, str]) -> str | None:
    """The unit a value of the answer's object is asked in: the truth's ``units``, else
    degrees for a latitude or longitude ("min_lat", "centroid_lon")."""
    if key in units:
        return units[key]
    return "deg" if re.search(r"(?:^|_)(?:lat|lon)(?:$|_)", key) else None


def read_values(
    response: str, keys: list[str], units: dict[str, str] | None = None
) -> dict[str, float | None]:
    """The values of ``keys`` a response gives: a JSON object after the last FINAL ANSWER
    (or anywhere), else the same object read leniently (single quotes, "810,891.5"), else a
    UTM written as text ("Zone 13N, 810891.5 E, 2252034.6 N").  Keys match whatever their
    case or spacing ("Easting", "zone_number" is not "zone"); numbers written as strings
    ("13N") are read, in the key's unit of ``units`` (a unit written is converted, one of
    another dimension refused).  A key not found maps to None."""
    got: dict[str, object] = {}
    for where in (final_answer_text(response), final_answer_region(response), response):
        try:
            value = last_json_value(where, "{")
        except AnswerParseError:
            continue
        if isinstance(value, dict):
            got = value
            break
    if not got:
        for where in (final_answer_region(response), response):
            try:
                got = _loose_object(where)
                break
            except AnswerParseError:
                continue
    by_key = {_key(str(k)): v for k, v in got.items()}
    out = {k: _as_number(by_key.get(_key(k)), _key_unit(k, units or {})) for k in keys}
    if any(v is None for v in out.values()) and set(keys) <= set(_UTM_TEXT):
        text = final_answer_region(response)[:2000]
        for k in keys:
            m = _UTM_TEXT[k].search(text)
            if out[k] is None and m:
                out[k] = _as_number(m.group(1) or m.group(2))
    return out


def _indices(response: str) -> list[object]:
    """The index list after the last FINAL ANSWER (a list in later reasoning never wins),
    else the last list in the response."""
    for where in (final_answer_text(response), final_answer_region(response), response):
        try:
            value = last_json_value(where, "[")
        except AnswerParseError:
            continue
        if isinstance(value, list):
            return value
    raise AnswerParseError(f"no index list in {response[:80]!r}")


# ------------------------------------------------------------------ place names


def _fold(name: str) -> str:
    """``normalise_name`` with accents taken off: "Jyväskylä" -> "jyvaskyla"."""
    if len(name) <= CACHED_NAME_CHARS:  # a dataset's names recur in every run scored
        return _fold_cached(name)
    return _fold_name(name)


def _fold_name(name: str) -> str:
    text = normalise_name(name)
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return text.replace("’", "'").replace("‘", "'")


_fold_cached = lru_cache(maxsize=50_000)(_fold_name)


def city_names(written: str) -> set[str]:
    """The names a written city may be, folded: "Mörön (Murun)" -> mörön, murun; "Mörön city",
    "City of Mörön" -> mörön."""
    written = written[:200]
    out = {written}
    m = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", written)
    if m:
        out |= {m.group(1), m.group(2)}
    for name in list(out):
        out.add(re.sub(r"\s+city$|^city\s+of\s+", "", name.strip(), flags=re.IGNORECASE))
    return {_fold(n) for n in out if n.strip()}


def _names_city(text: str, names: set[str]) -> bool:
    """Whether the first field of an answer is one of these folded names (``city_names``); a
    name with commas of its own ("Sant Pere, Santa Caterina i La Ribera") is matched as the
    answer's beginning."""
    if city_names(text.split(",", 1)[0]) & names:
        return True
    folded = _fold(text[:300])
    return any("," in n and (folded == n or folded.startswith(n + ",")) for n in names)


# names pycountry does not hold, or holds otherwise; folded (see _fold) -> alpha-2
_COUNTRY_ALIASES = {
    "usa": "US", "u.s.a": "US", "u.s": "US", "us": "US", "america": "US",
    "united states of america": "US", "the united states": "US",
    "uk": "GB", "u.k": "GB", "britain": "GB", "great britain": "GB", "england": "GB",
    "scotland": "GB", "wales": "GB", "northern ireland": "GB",
    "burma": "MM", "vietnam": "VN", "russia": "RU", "south korea": "KR", "korea": "KR",
    "north korea": "KP", "republic of korea": "KR", "holland": "NL",
    "the netherlands": "NL", "ivory coast": "CI",
    "cape verde": "CV", "swaziland": "SZ", "east timor": "TL", "timor leste": "TL",
    "dr congo": "CD", "drc": "CD", "congo-kinshasa": "CD", "democratic republic of congo": "CD",
    "democratic republic of the congo": "CD", "republic of the congo": "CG",
    "congo-brazzaville": "CG", "congo": "CG", "palestine": "PS",
    "palestinian territory": "PS", "palestinian territories": "PS", "macau": "MO",
    "vatican": "VA", "vatican city": "VA", "kosovo": "XK", "micronesia": "FM",
    "brunei": "BN", "syria": "SY", "laos": "LA", "moldova": "MD", "tanzania": "TZ",
    "iran": "IR", "bolivia": "BO", "venezuela": "VE", "taiwan": "TW", "turkey": "TR",
    "czech republic": "CZ", "macedonia": "MK", "aland islands": "AX",
    "bonaire, saint eustatius and saba": "BQ", "saint barthelemy": "BL",
    "saint martin": "MF", "sint maarten": "SX", "curacao": "CW", "reunion": "RE",
    "cocos islands": "CC", "falkland islands": "FK", "pitcairn": "PN",
    "saint helena": "SH", "u.s. virgin islands": "VI", "us virgin islands": "VI",
    "british virgin islands": "VG", "svalbard and jan mayen": "SJ", "gambia": "GM",
    "the gambia": "GM", "bahamas": "BS", "the bahamas": "BS", "uae": "AE",
}  # fmt: skip


@lru_cache(maxsize=1)
def _country_index() -> dict[str, str]:
    import pycountry

    index: dict[str, str] = {}
    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name", "alpha_2", "alpha_3"):
            value = getattr(c, attr, None)
            if value:
                index.setdefault(_fold(value), c.alpha_2)
    index.update(_COUNTRY_ALIASES)
    return index


def country_code(name: str) -> str | None:
    """The ISO alpha-2 code a whole country name or code stands for ("USA", "UK", "Czech
    Republic", "Türkiye", "Burma", "Viet Nam", "DEU"), from pycountry's names, official
    names, common names and codes plus a small alias table; None when it names no country.
    Whole names only: "Nigeria" is never Niger, "Indiana" never India."""
    folded = _fold(name[:100]).strip(" .")
    return _country_index().get(folded) or _country_index().get(folded.removeprefix("the "))


def _country_ok(text: str, country: str) -> bool:
    """Whether the last field of "city, province, country" names ``country`` as a whole."""
    fields = [f.strip() for f in text.split(",", _MAX_FIELDS)]
    if len(fields) < 2 or len(fields) > _MAX_FIELDS or not country.strip():
        return False
    want = country_code(country)
    for written in (fields[-1], ", ".join(fields[-2:])):
        got = country_code(written)
        if got is not None and want is not None:
            if got == want:
                return True
        elif _fold(written) == _fold(country):
            return True
    return False


#: tasks scored with 1 - MAPE beside the tolerance
_NUMERIC = frozenset({"distance", "polygon", "polygon_perimeter"})


def _close(pred: float, truth: float) -> float:
    return closeness(pred, truth)


#: the tolerances of datasets made before each truth carried its own (``Tolerance`` on the
#: truth, set by the task's generator, is what scores; these are the same values)
_LEGACY = {
    "distance": Tolerance(abs=5.0, rel=0.05),
    "bearing": Tolerance(abs=5.0, wrap=360.0),
    "polygon": Tolerance(rel=0.05),
    "missing_data": Tolerance(abs=0.1),
    "format_conversion": Tolerance(abs=1e-4),
}


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
        ok = truth.within(lat, lon, truth.tolerance or _LEGACY["format_conversion"])
        return GpsScore(ok, why=None if ok else "wrong")
    if isinstance(truth, CoordinateTruth):  # inverse projections, interpolation
        tol = truth.tolerance or Tolerance(abs=float(md.get("tolerance_deg", 0.01)))
        lat, lon = _coordinate(response)
        ok = truth.within(lat, lon, tol)
        return GpsScore(ok, why=None if ok else f"off by more than {tol.abs:g} degrees")
    if task == "distance":
        assert isinstance(truth, NumberTruth)
        value = in_unit(parse_result_number(response), truth.unit or "km")
        tol = truth.tolerance or _LEGACY[task]
        ok = tol.allows(value, truth.value)
        why = None if ok else f"outside max({tol.abs:g} km, {tol.rel:.0%})"
        return GpsScore(ok, _close(value, truth.value), why)
    if task == "bearing":
        assert isinstance(truth, NumberTruth)
        value = in_unit(parse_result_number(response), truth.unit or "deg")
        if why := out_of_range(value, "bearing"):
            return GpsScore(False, why=why)
        tol = truth.tolerance or _LEGACY[task]
        ok = tol.allows(value, truth.value)
        return GpsScore(ok, why=None if ok else f"more than {tol.abs:g} degrees off")
    if task == "polygon":
        assert isinstance(truth, NumberTruth)
        value = in_unit(parse_result_number(response), truth.unit or "km2")
        tol = truth.tolerance or _LEGACY[task]
        ok = tol.allows(value, truth.value)
        return GpsScore(
            ok, _close(value, truth.value), None if ok else f"more than {tol.rel:.0%} off"
        )
    if task == "missing_data":
        assert isinstance(truth, NumberTruth)
        value = _degrees(response)
        # the coordinate asked is the one not given ("given" recorded on every sample; a
        # value beyond 90 can never be a right latitude anyway)
        quantity = "latitude" if md.get("given") == "longitude" else "longitude"
        if why := out_of_range(value, quantity):
            return GpsScore(False, why=why)
        tol = truth.tolerance or _LEGACY[task]
        if quantity == "longitude":  # across the antimeridian, the short way round
            tol = tol.model_copy(update={"wrap": 360.0})
        ok = tol.allows(value, truth.value)
        return GpsScore(ok, why=None if ok else f"more than {tol.abs:g} degrees off")
    if isinstance(truth, ValuesTruth):
        vals = read_values(response, list(truth.values), truth.units)
        missing = [k for k, v in vals.items() if v is None]
        if missing:
            return GpsScore(False, 0.0 if task in _NUMERIC else None, f"missing {missing}")
        ok = all(
            within_tolerance(float(vals[k] or 0.0), v, abs_tol=truth.tolerances.get(k, 0.0))
            for k, v in truth.values.items()
        )
        closeness = None
        if task in _NUMERIC:
            closeness = sum(
                _close(float(vals[k] or 0.0), v) for k, v in truth.values.items()
            ) / len(truth.values)
        return GpsScore(ok, closeness, None if ok else "a value outside its tolerance")
    if task == "place_association":
        assert isinstance(truth, TextTruth)
        text = final_answer_text(response)
        names = {_fold(n) for n in [truth.answer, *truth.accepted]}
        country = str(md.get("country") or "")
        country_ok = _country_ok(text, country)
        province = md.get("province")
        province_ok = (
            province_matches(text, str(province), str(md.get("admin1") or "")) if province else None
        )
        ok = _names_city(text, names)
        return GpsScore(
            ok,
            why=None if ok else "another place",
            country_correct=country_ok,
            province_correct=province_ok,
        )
    if isinstance(truth, TextTruth):  # a city's name (spatial patterns)
        names = {_fold(n) for n in [truth.answer, *truth.accepted]}
        ok = _names_city(final_answer_text(response), names)
        return GpsScore(ok, why=None if ok else "another place")
    if isinstance(truth, ChoiceTruth):
        parsed: object = parse_choice(final_answer_text(response), truth.options)
    elif isinstance(truth, BooleanTruth):
        parsed = parse_yes_no(final_answer_text(response))
    elif isinstance(truth, IndicesTruth):
        parsed = _indices(response)
    else:
        parsed = parse_answer(truth.kind, response)
    ok = answer_matches(truth, parsed)
    return GpsScore(ok, why=None if ok else "wrong")


def score_gps(sample: Sample, response: str | None) -> GpsScore:
    """Score one GPS answer; never raises (unreadable answers are wrong, with the reason)."""
    if response is None or not response.strip():
        return GpsScore(False, 0.0 if sample.task in _NUMERIC else None, "no answer")
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
        closeness = 0.0 if sample.task in _NUMERIC else None
        return GpsScore(False, closeness, f"unreadable: {str(exc)[:120]}")
