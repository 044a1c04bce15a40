"""Scoring the GPS tasks with GPSBench's tolerances, robust where a public harness is not.

One scorer per kind of answer, named by what it reads (``score_km``, ``score_bearing``,
``score_dms``, ``score_place``, ...; each task's spec names its own): ``(sample,
response) -> SampleScore``, with ``closeness`` (1 - |error| / |truth|, floored at 0) in
its values for the scorers of lengths and areas, and ``province`` and ``country`` for
``score_place``.  None raises: an unreadable answer is wrong, with the reason.

Tolerances (the spec's): format conversion exact at the precision asked,
however written (GPSBench's: seconds to one decimal, decimal degrees to exactly
4 decimals; "30.43" for "30.4" is wrong), or, in the variant
format_conversion_lenient and in datasets made before, within half the last
written unit (0.05" of arc, or 0.0001 degrees);
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
Where the city alone was asked (the default's samples carry ``asked: city``), a
city-only answer earns the province and country of the city it names near the point
(``evaluators.place_levels``); an answer that writes them is graded as written.

Numbers are read in the truth's unit (``evaluators.numeric.in_unit``): a distance in
miles, metres or nautical miles, an area in m², mi², ha or acres, an angle in radians is
converted, and one of another dimension (a polygon's "1000 km", a bearing's "26.8 km") or
a word that is no unit is unreadable; the values of an answer's object are read in their
key's unit (the truth's ``units``; degrees for a latitude or longitude).  Negated and
hedged answers are unreadable (``evaluators.hedges``).

Strong models' own forms (issue 28): LaTeX is written out first (``_delatex``); values
labelled in text in any order and case ("Easting = .., Northing = ..", "x = ..; y = ..");
the paper's bounding-box list (north, west, south, east) or the keys' order; the paper's
grouping text ("Asia: a, b; Oceania: c", accents, apostrophes' shape and empty continents
aside); degrees and minutes ("27°52′N"); quadrant bearings ("S 65.5° W"); "lat ≈ ..,
lon ≈ ..".  Naming two of the prompt's cities, or a place "or" another, is a hedge; an
alternate name that is the province or a country earns no city credit.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from cartoqa.geodesy import parse_coordinate
from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    CoordinateTruth,
    GroupingTruth,
    IndicesTruth,
    NumberTruth,
    Sample,
    SampleScore,
    TextTruth,
    Tolerance,
    ValuesTruth,
)

from .answers import (
    CACHED_NAME_CHARS,
    answer_matches,
    last_json_value,
    normalise_name,
    parse_choice,
    parse_yes_no,
    read_grouping,
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
from .place_levels import city_only_levels
from .verdicts import verdict as _verdict

__all__ = [
    "AREA_TOLERANCE",
    "BEARING_TOLERANCE",
    "DEGREE_TOLERANCE",
    "DMS_TOLERANCE",
    "KM_TOLERANCE",
    "RANGES",
    "GpsScore",
    "angle_difference_deg",
    "by_truth",
    "city_names",
    "country_code",
    "division_core",
    "out_of_range",
    "province_matches",
    "read_values",
    "score_area_km2",
    "score_bearing",
    "score_box",
    "score_choice",
    "score_city",
    "score_degree",
    "score_dms",
    "score_grouping",
    "score_indices",
    "score_km",
    "score_place",
    "score_position",
    "score_values",
    "score_values_closeness",
    "score_yes_no",
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
    written = final_answer_text(text)
    try:
        # a labelled decimal pair ("lat ≈ .., lon ≈ .."); degrees and minutes as written
        point = None if _DM.search(written[:2000]) else _labelled_point(written)
        return parse_coordinate(point or written)
    except ValueError as exc:
        raise AnswerParseError(str(exc)) from None


# words that name the kind of division, not the division ("Bavaria" = "Free State of
# Bavaria"; "Muhafazat al Qahirah" = "al Qahirah Governorate")
_DIVISION_WORDS = re.compile(
    r"\b(?:province|provincia|provinz|state|estado|etat|region|oblast|governorate|muhafazat|"
    r"prefecture|district|county|department|departamento|territory|krai|kray|republic|"
    r"respublika|autonomous|free|federal|capital|of|the|de|del|do|da|des|du|la|le|"
    r"al|ad|an|ar|as|ash|at|az|el|"
    # China's in pinyin: province, municipality, autonomous region and its people's name
    # ("Zhejiang Sheng", "Shanghai Shi", "Guangxi Zhuangzu Zizhiqu")
    r"sheng|shi|zizhiqu|zhuangzu|huizu|weiwu er)\b"
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


# ------------------------------------------------------------------ LaTeX and written forms

_LATEX = [
    (re.compile(r"\{,\}"), ","),  # "5{,}448.8"
    (re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\degree\b|\^\s*\{?\s*\\text\{\s*o\s*\}\s*\}?"), "°"),
    (re.compile(r"\\(?:text|mathrm|mathbf|textbf|operatorname|rm)\s*\{([^{}]{0,40})\}"), r"\1"),
    (re.compile(r"\\approx|\\sim"), "≈"),
    (re.compile(r"\\(?:left|right|displaystyle|boxed)"), ""),
    (re.compile(r"\\[,;:! ]"), " "),
    (re.compile(r"\\(?:times|cdot)"), "×"),
    (re.compile(r"\^\s*\{?2\}?"), "²"),
]
# "3.8222 × 10^5", "3.8222 × 10^{5}" (after the table above) -> "3.8222e5"
_POWER = re.compile(r"(\d+(?:\.\d+)?)\s*[×x·*]\s*10\s*\^\s*\{?\s*([+\-\u2212]?\d{1,3})\s*\}?")


def _delatex(text: str) -> str:
    """An answer with its LaTeX written out: "$5{,}448.8$ km" -> "5,448.8 km", "$3.82
    \\times 10^{5}$" -> "3.82e5", "$36.66^\\circ$ N" -> "36.66° N"; text without a backslash,
    "$", "{" or "^" is returned as it is."""
    if not any(c in text for c in "\\$^×"):
        return text
    for pattern, repl in _LATEX:
        text = pattern.sub(repl, text)
    text = _POWER.sub(lambda m: f"{m.group(1)}e{m.group(2).replace(chr(0x2212), '-')}", text)
    # braces only inside math ("$(36.66, 70.74)$", "\\(...\\)"): a JSON answer keeps its own
    if "{" in text:
        text = _MATH.sub(lambda m: re.sub(r"[{}]", "", m.group(1) or m.group(2) or ""), text)
    return text.replace("$", "")


_MATH = re.compile(r"\$([^$]{0,500})\$|\\[(\[]([^\\$]{0,500})\\[)\]]")


# "lat ≈ 36.6631, lon ≈ 70.7445", "latitude = 36.66° N; longitude: 70.74° E"
_LAT_LON = {
    q: re.compile(
        rf"(?<![a-z])(?:{q})\s*(?:[:=≈~]|is|of)\s*({_NUM0})\s*°?\s*([NSEW](?![a-z]))?",
        re.IGNORECASE,
    )
    for q, _NUM0 in (
        ("latitude|lat", r"[+\-\u2212]?\d{1,3}(?:\.\d+)?"),
        ("longitude|long|lon|lng", r"[+\-\u2212]?\d{1,3}(?:\.\d+)?"),
    )
}


def _labelled_point(text: str) -> str | None:
    """A labelled latitude and longitude ("lat ≈ 36.66, lon ≈ 70.74", any order) written
    as "36.66, 70.74"; None where either label is missing."""
    got = [_LAT_LON[q].search(text[:2000]) for q in _LAT_LON]
    if not all(got):
        return None
    return ", ".join(f"{m.group(1)}{m.group(2) or ''}" for m in got if m)


# "27°52′N", "149° 34' W", "27°52'30.5\"N": degrees and minutes (seconds optional)
_DM = re.compile(
    r"(?<![\d.])([+\-\u2212]?)(\d{1,3}(?:\.\d+)?)\s*°\s*(\d{1,2}(?:\.\d+)?)\s*['′’]"
    r"(?:\s*(\d{1,2}(?:\.\d+)?)\s*(?:\"|″|''|′′))?\s*([NSEW](?![a-z]))?",
    re.IGNORECASE,
)


def _dms_degrees(text: str) -> float | None:
    """The one angle written in degrees and minutes (seconds optional), signed by its
    hemisphere letter or a minus; None where none or more than one is written."""
    found = list(_DM.finditer(text[:2000]))
    if len(found) != 1:
        return None
    sign, d, m, s, hemi = found[0].groups()
    value = float(d) + float(m) / 60 + float(s or 0) / 3600
    if sign in ("-", "\u2212") or (hemi or "").upper() in ("S", "W"):
        value = -value
    return value


# "S 65.5° W", "N45E", "S 14.5 deg E": a quadrant bearing
_QUADRANT = re.compile(
    r"(?<![a-z])([NS])\s*(\d{1,2}(?:\.\d+)?)\s*(?:°|deg(?:rees?)?)?\s*([EW])(?![a-z])",
    re.IGNORECASE,
)


def _quadrant_bearing(text: str) -> float | None:
    """The bearing a quadrant bearing gives ("S 65.5° W" is 245.5), where the final answer
    writes exactly one; else None."""
    found = list(_QUADRANT.finditer(text[:2000]))
    if len(found) != 1:
        return None
    ns, angle, ew = found[0].group(1).upper(), float(found[0].group(2)), found[0].group(3).upper()
    if angle > 90:
        return None
    return {
        ("N", "E"): angle,
        ("S", "E"): 180 - angle,
        ("S", "W"): 180 + angle,
        ("N", "W"): (360 - angle) % 360,
    }[ns, ew]


# ------------------------------------------------------------------ numbers and values

# "53.0261° W", "53.0261 degrees west", "12.5 S"
_HEMI_AFTER = re.compile(r"\d\s*(?:°|deg(?:rees?)?)?\s*(west|south|w|s)\b", re.IGNORECASE)


def _degrees(response: str) -> float:
    """A signed angle: the result number (in degrees, converted from radians; another unit
    refused), negative where a hemisphere letter says W or S."""
    dms = _dms_degrees(final_answer_text(response))
    if dms is not None:
        return dms
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


# a number as written in a labelled answer: "810,891.5", "-43.5553", never a trailing comma
_NUM = r"[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

#: the labels a value of an answer written as text may carry, by key ("Easting = 448364.98",
#: "northing: 6469300.24", "E = 448364.98 m", "x = 11,430,296.45 m"); any case, any order
_LABELS = {
    "zone": r"zone",
    "easting": r"easting|e",
    "northing": r"northing|n",
    "x": r"x",
    "y": r"y",
}

# a label, then ":", "=", "≈" or "~" (or, for a word label, only spaces), then the number
_LABELLED = {
    k: re.compile(
        rf"(?<![\w.])(?:{v})(?:\s*\(m\))?\s*(?:[:=≈~]|(?<=[a-z]{{2}})\s)\s*({_NUM})",
        re.IGNORECASE,
    )
    for k, v in _LABELS.items()
}
# "810891.5 E", "810891.5 mE", "2252034.6 m N": a number of four digits or more (never a
# zone's "13N"), then the axis letter or word
_BIG = r"(?<![\d.,])(\d{4,}(?:\.\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?)"
_SUFFIXED = {
    "easting": re.compile(rf"{_BIG}\s*(?:m\s*)?(?:E\b|easting)", re.IGNORECASE),
    "northing": re.compile(rf"{_BIG}\s*(?:m\s*)?(?:N\b|northing)", re.IGNORECASE),
}


def _labelled_values(text: str, keys: list[str]) -> dict[str, float | None]:
    """The values of ``keys`` an answer labels in text, each by its own label ("Easting =
    ..., Northing = ...", "x = ...; y = ..."), in any order and case; a key with no label
    read maps to None."""
    out: dict[str, float | None] = {}
    for k in keys:
        m = _LABELLED[k].search(text) if k in _LABELLED else None
        if m is None and k in _SUFFIXED:
            m = _SUFFIXED[k].search(text)
        out[k] = _as_number(m.group(1)) if m else None
    return out


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
    if any(v is None for v in out.values()) and set(keys) <= set(_LABELS):
        text = final_answer_region(response)[:2000]
        found = _labelled_values(text, keys)
        out = {k: v if v is not None else found[k] for k, v in out.items()}
        if all(v is None for v in out.values()):  # "(589884.73, 4510420.27)": in order
            numbers = _plain_numbers(final_answer_text(response))
            if len(numbers) == len(keys):
                out = dict(zip(keys, numbers, strict=True))
    return out


def _plain_numbers(text: str) -> list[float]:
    """The numbers of a final answer written as a plain list ("-22.7161, 48.5742, ...",
    "[...]", "(x, y)"), in order; [] where anything but numbers, brackets, commas,
    semicolons, degree signs or "m" is written."""
    text = text[:500].strip().rstrip(".")
    if not re.fullmatch(r"[\s\[\]()+\-\u2212\d.,;°m]*", text):
        return []
    return [float(n.replace("\u2212", "-")) for n in re.findall(r"[+\-\u2212]?\d+(?:\.\d+)?", text)]


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


def _city_credit(truth: TextTruth, province: str = "") -> set[str]:
    """The folded names that earn city credit: the city's own name, and its alternate names
    but those that name a country ("Paraguay" for Asunción) or its province ("Bahia" for
    Salvador): a city answer must name the city."""
    out = {_fold(truth.answer)}
    want = division_core(province) if province else None
    for alt in truth.accepted:
        if country_code(alt) is not None or (want and division_core(alt) == want):
            continue
        out.add(_fold(alt))
    return out


_OR = re.compile(r"\s(?:or|and/or)\s|\s/\s|\s\|\s", re.IGNORECASE)


def _names_only_city(text: str, names: set[str]) -> bool:
    """Whether a place answer names the city and no other: alternatives ("Kumasi or
    Tauranga", "A / B") are a hedge, and wrong; two names of the one city ("Bolzano /
    Bozen, Italy") are not."""
    parts = _OR.split(text[:300])
    return all(_names_city(p.strip(), names) for p in parts)


def _listed_names(prompt: str) -> set[str]:
    """The folded items of a prompt's "A; B; C" list (the cities a question offers)."""
    return {_fold(p) for p in re.split(r"[;:]|\.\s", prompt[:5000]) if p.strip()}


def _names_two_listed(text: str, prompt: str) -> bool:
    """Whether an answer names two or more of the cities its prompt lists ("Menongue,
    Tauranga"): a hedge."""
    listed = _listed_names(prompt)
    fields = [f for f in re.split(r"[,;]", text[:300]) if f.strip()]
    return sum(bool(city_names(f) & listed) for f in fields) > 1


def _box_list(truth: ValuesTruth, response: str) -> GpsScore:
    """A bounding box written as four plain numbers: the paper's order (north, west, south,
    east: "-22.7161, 48.5742, -43.5553, 138.1833") or the order the prompt lists its keys
    (min_lat, max_lat, min_lon, max_lon); right where either reading is within tolerance."""
    numbers = _plain_numbers(final_answer_text(response))
    if len(numbers) != 4:
        return GpsScore(False, why=f"missing {list(truth.values)}")
    orders = (("max_lat", "min_lon", "min_lat", "max_lon"), tuple(truth.values))
    for order in orders:
        got = dict(zip(order, numbers, strict=True))
        if set(got) == set(truth.values) and all(
            within_tolerance(got[k], v, abs_tol=truth.tolerances.get(k, 0.0))
            for k, v in truth.values.items()
        ):
            return GpsScore(True)
    return GpsScore(False, why="a value outside its tolerance")


def _group_name(name: str) -> str:
    """A city or continent name as grouping compares it: accents, case, apostrophes' shape
    and surrounding quotes aside ("Burhanpur" is "Burhānpur", "'" is "’")."""
    text = _fold(str(name)[:200])
    text = re.sub(r"[’‘ʼʻ`´]", "'", text)
    return " ".join(text.strip(" \"'[]").split())


def _grouping_matches(truth: GroupingTruth, got: dict[str, list[str]]) -> bool:
    """Whether a grouping read puts every city in its continent: names compared by
    ``_group_name``; an empty continent written is no group."""

    def norm(groups: dict[str, list]) -> dict[str, Counter[str]]:
        return {
            _group_name(k): Counter(_group_name(str(n)) for n in v)
            for k, v in groups.items()
            if isinstance(v, list) and v
        }

    return norm(got) == norm(truth.groups)


def _close(pred: float, truth: float) -> float:
    return closeness(pred, truth)


# ------------------------------------------------------------------ the scorers
#
# One per kind of answer read; a task's spec names the one it needs.  Each is
# (sample, response) -> SampleScore and never raises: no answer, or one that cannot be read,
# is wrong with the reason, and a scorer that gives 1 - MAPE ("numeric") gives 0.0 then.
# Where a truth carries no tolerance of its own (datasets made before they did), the
# scorer's default applies: GPSBench's.

#: the default tolerances, for truths that carry none
KM_TOLERANCE = Tolerance(abs=5.0, rel=0.05)
BEARING_TOLERANCE = Tolerance(abs=5.0, wrap=360.0)
AREA_TOLERANCE = Tolerance(rel=0.05)
DEGREE_TOLERANCE = Tolerance(abs=0.1)
DMS_TOLERANCE = Tolerance(abs=1e-4)

Reader = Callable[[Sample, str], GpsScore]


def _scored(
    sample: Sample, response: str | None, read: Reader, *, numeric: bool = False
) -> SampleScore:
    """``read`` the answer (its LaTeX written out) and make the ``SampleScore``: the
    verdict, ``closeness`` (1 - APE) where the reader gives one, and province and country
    verdicts where it grades them.  An empty or unreadable answer is wrong, with the
    reason, its closeness 0.0 where the scorer is ``numeric``."""
    if response is None or not response.strip():
        sc = GpsScore(False, 0.0 if numeric else None, "no answer")
    else:
        try:
            sc = read(sample, _delatex(response))
        except (
            AnswerParseError,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
            IndexError,
            OverflowError,
        ) as exc:
            sc = GpsScore(False, 0.0 if numeric else None, f"unreadable: {str(exc)[:120]}")
    values: dict[str, float | None] = {}
    if sc.closeness is not None:
        values["closeness"] = sc.closeness
    if sc.province_correct is not None:
        values["province"] = float(sc.province_correct)
    if sc.country_correct is not None:
        values["country"] = float(sc.country_correct)
    return _verdict(correct=sc.correct, values=values, why=sc.why)


def _conversion_exact(truth: object, md: dict, got: tuple[float, float]) -> GpsScore:
    """Format conversion as GPSBench scores it: exact at the precision the prompt asks,
    however the answer writes it (trailing zeros, letters or signs, symbols, spacing).  To
    DMS (``seconds_decimals`` in the metadata): the position the answer writes equals the
    truth's, its seconds rounded as asked ("30.43" for "30.4" is wrong, "30.40" right).  To
    decimal degrees (``decimals``): each value written to at most that many decimals and
    the right rounding of the DMS given (``exact_lat``, ``exact_lon``; either rounding of
    a value halfway between two)."""
    lat, lon = got
    if isinstance(truth, TextTruth):
        want = parse_coordinate(truth.answer)
        # a hundredth of the unit asked: float noise, never another written value
        unit = 10.0 ** -int(md["seconds_decimals"]) / 3600
        ok = abs(lat - want[0]) <= unit / 100 and _lon_difference(lon, want[1]) <= unit / 100
        return GpsScore(ok, why=None if ok else "not the truth at the precision asked")
    assert isinstance(truth, CoordinateTruth)
    places = int(md["decimals"])
    for v in (lat, lon):
        scaled = v * 10.0**places
        if abs(scaled - round(scaled)) > 1e-6:
            return GpsScore(False, why=f"not written to {places} decimals as asked")
    exact = (float(md.get("exact_lat", truth.lat)), float(md.get("exact_lon", truth.lon)))
    half = 0.5 * 10.0**-places + 1e-9
    ok = abs(lat - exact[0]) <= half and _lon_difference(lon, exact[1]) <= half
    return GpsScore(ok, why=None if ok else "not the truth at the precision asked")


def _dms(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    md = sample.metadata.model_extra or {}
    if "seconds_decimals" in md or "decimals" in md:  # the default's exact rule
        return _conversion_exact(truth, md, _coordinate(response))
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
    ok = truth.within(lat, lon, truth.tolerance or DMS_TOLERANCE)
    return GpsScore(ok, why=None if ok else "wrong")


def score_dms(sample: Sample, response: str | None) -> SampleScore:
    """A coordinate converted between decimal degrees and degrees-minutes-seconds (a text
    truth: DMS; a coordinate truth: decimal degrees): exact at the precision the metadata
    asks (``seconds_decimals``, ``decimals``; ``_conversion_exact``), else within half the
    last written unit (0.05" of arc), or the truth's tolerance (default 0.0001 degrees)."""
    return _scored(sample, response, _dms)


def _position(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, CoordinateTruth)
    md = sample.metadata.model_extra or {}
    tol = truth.tolerance or Tolerance(abs=float(md.get("tolerance_deg", 0.01)))
    lat, lon = _coordinate(response)
    ok = truth.within(lat, lon, tol)
    return GpsScore(ok, why=None if ok else f"off by more than {tol.abs:g} degrees")


def score_position(sample: Sample, response: str | None) -> SampleScore:
    """A point (``CoordinateTruth``): latitude and longitude each within the truth's
    tolerance (else the metadata's ``tolerance_deg``, else 0.01 degrees), the longitude
    wrapping at the antimeridian."""
    return _scored(sample, response, _position)


def _km(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    value = in_unit(parse_result_number(response), truth.unit or "km")
    tol = truth.tolerance or KM_TOLERANCE
    ok = tol.allows(value, truth.value)
    why = None if ok else f"outside max({tol.abs:g} km, {tol.rel:.0%})"
    return GpsScore(ok, _close(value, truth.value), why)


def score_km(sample: Sample, response: str | None) -> SampleScore:
    """A length (``NumberTruth``, km unless its unit says): within the truth's tolerance
    (default max(5 km, 5 %)), any length unit converted; with 1 - APE."""
    return _scored(sample, response, _km, numeric=True)


def _bearing(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    quadrant = _quadrant_bearing(final_answer_text(response))
    if quadrant is not None:
        value = quadrant
    else:
        value = in_unit(parse_result_number(response), truth.unit or "deg")
    if why := out_of_range(value, "bearing"):
        return GpsScore(False, why=why)
    tol = truth.tolerance or BEARING_TOLERANCE
    ok = tol.allows(value, truth.value)
    return GpsScore(ok, why=None if ok else f"more than {tol.abs:g} degrees off")


def score_bearing(sample: Sample, response: str | None) -> SampleScore:
    """A bearing (``NumberTruth``, degrees): a number in a bearing's range (``RANGES``) or a
    quadrant bearing ("S 65.5° W"), within the truth's tolerance (default 5 degrees,
    wrapping at 360)."""
    return _scored(sample, response, _bearing)


def _area_km2(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    value = in_unit(parse_result_number(response), truth.unit or "km2")
    tol = truth.tolerance or AREA_TOLERANCE
    ok = tol.allows(value, truth.value)
    return GpsScore(ok, _close(value, truth.value), None if ok else f"more than {tol.rel:.0%} off")


def score_area_km2(sample: Sample, response: str | None) -> SampleScore:
    """An area (``NumberTruth``, km² unless its unit says): within the truth's tolerance
    (default 5 %), any area unit converted; with 1 - APE."""
    return _scored(sample, response, _area_km2, numeric=True)


def _degree(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    md = sample.metadata.model_extra or {}
    value = _degrees(response)
    # the coordinate asked is the one not given ("given" recorded on every sample; a
    # value beyond 90 can never be a right latitude anyway)
    quantity = "latitude" if md.get("given") == "longitude" else "longitude"
    if why := out_of_range(value, quantity):
        return GpsScore(False, why=why)
    tol = truth.tolerance or DEGREE_TOLERANCE
    if quantity == "longitude":  # across the antimeridian, the short way round
        tol = tol.model_copy(update={"wrap": 360.0})
    ok = tol.allows(value, truth.value)
    return GpsScore(ok, why=None if ok else f"more than {tol.abs:g} degrees off")


def score_degree(sample: Sample, response: str | None) -> SampleScore:
    """One latitude or longitude (``NumberTruth``, degrees; the metadata's ``given`` names
    the other, so this one is the longitude unless the longitude was given): in its range,
    signed by a hemisphere letter, within the truth's tolerance (default 0.1 degrees), a
    longitude wrapping at the antimeridian."""
    return _scored(sample, response, _degree)


def _values(sample: Sample, response: str, *, box: bool = False, numeric: bool = False) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, ValuesTruth)
    vals = read_values(response, list(truth.values), truth.units)
    if box and all(v is None for v in vals.values()):
        return _box_list(truth, response)
    missing = [k for k, v in vals.items() if v is None]
    if missing:
        return GpsScore(False, 0.0 if numeric else None, f"missing {missing}")
    ok = all(
        within_tolerance(float(vals[k] or 0.0), v, abs_tol=truth.tolerances.get(k, 0.0))
        for k, v in truth.values.items()
    )
    closeness = None
    if numeric:
        closeness = sum(_close(float(vals[k] or 0.0), v) for k, v in truth.values.items()) / len(
            truth.values
        )
    return GpsScore(ok, closeness, None if ok else "a value outside its tolerance")


def score_values(sample: Sample, response: str | None) -> SampleScore:
    """Named values (``ValuesTruth``: an object's keys, or labelled in text, or a plain
    list in the keys' order), each within its own tolerance, in its key's unit."""
    return _scored(sample, response, _values)


def _values_closeness(sample: Sample, response: str) -> GpsScore:
    return _values(sample, response, numeric=True)


def score_values_closeness(sample: Sample, response: str | None) -> SampleScore:
    """``score_values`` with 1 - MAPE: the mean of each value's 1 - APE (0.0 for an answer
    missing any)."""
    return _scored(sample, response, _values_closeness, numeric=True)


def _box(sample: Sample, response: str) -> GpsScore:
    return _values(sample, response, box=True)


def score_box(sample: Sample, response: str | None) -> SampleScore:
    """A bounding box (``ValuesTruth`` of min/max latitude and longitude): as
    ``score_values``, or, where no value is labelled, four plain numbers in the paper's
    order (north, west, south, east) or the keys' (``_box_list``)."""
    return _scored(sample, response, _box)


def _place(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, TextTruth)
    md = sample.metadata.model_extra or {}
    text = final_answer_text(response)
    names = _city_credit(truth, str(md.get("province") or ""))
    country = str(md.get("country") or "")
    country_ok = _country_ok(text, country)
    province = md.get("province")
    province_ok = (
        province_matches(text, str(province), str(md.get("admin1") or "")) if province else None
    )
    ok = _names_only_city(text, names)
    if md.get("asked") == "city" and "," not in text:
        # the city alone asked and answered: the levels of the city it names
        country_ok, province_ok = city_only_levels(ok, text, md)
    return GpsScore(
        ok,
        why=None if ok else "another place",
        country_correct=country_ok,
        province_correct=province_ok,
    )


def score_place(sample: Sample, response: str | None) -> SampleScore:
    """The city at a point (``TextTruth``: its name or an alternate), and its province and
    country: graded as written ("city, province, country"), or, where the metadata says the
    city alone was asked (``asked: city``) and the answer names a city only, those of the
    city it names (``evaluators.place_levels``)."""
    return _scored(sample, response, _place)


def _city(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, TextTruth)
    text = final_answer_text(response)
    names = _city_credit(truth)
    if _names_two_listed(text, sample.prompt.text):
        return GpsScore(False, why="hedged: more than one city named")
    ok = _names_only_city(text, names)
    return GpsScore(ok, why=None if ok else "another place")


def score_city(sample: Sample, response: str | None) -> SampleScore:
    """A city's name (``TextTruth``: its name or an alternate, a qualifier allowed); naming
    two of the cities the prompt lists is a hedge, and wrong."""
    return _scored(sample, response, _city)


def _grouping(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, GroupingTruth)
    ok = _grouping_matches(truth, read_grouping(response))
    return GpsScore(ok, why=None if ok else "wrong")


def score_grouping(sample: Sample, response: str | None) -> SampleScore:
    """Names grouped under headings (``GroupingTruth``: cities by continent), as JSON or
    as "Asia: A, B; Europe: C"; every name in its group."""
    return _scored(sample, response, _grouping)


def _choice(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, ChoiceTruth)
    ok = answer_matches(truth, parse_choice(final_answer_text(response), truth.options))
    return GpsScore(ok, why=None if ok else "wrong")


def score_choice(sample: Sample, response: str | None) -> SampleScore:
    """One of lettered options (``ChoiceTruth``), by its letter or its text."""
    return _scored(sample, response, _choice)


def _yes_no(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, BooleanTruth)
    ok = answer_matches(truth, parse_yes_no(final_answer_text(response)))
    return GpsScore(ok, why=None if ok else "wrong")


def score_yes_no(sample: Sample, response: str | None) -> SampleScore:
    """Yes or no (``BooleanTruth``)."""
    return _scored(sample, response, _yes_no)


def _index_list(sample: Sample, response: str) -> GpsScore:
    truth = sample.ground_truth
    assert isinstance(truth, IndicesTruth)
    ok = answer_matches(truth, _indices(response))
    return GpsScore(ok, why=None if ok else "wrong")


def score_indices(sample: Sample, response: str | None) -> SampleScore:
    """A list of indices (``IndicesTruth``), the one after the last FINAL ANSWER."""
    return _scored(sample, response, _index_list)


def by_truth(
    **scorers: Callable[[Sample, str | None], SampleScore],
) -> Callable[[Sample, str | None], SampleScore]:
    """One scorer of ``scorers`` by the kind of the sample's truth (``values=score_values,
    coordinate=score_position``), for a task whose samples carry truths of more than one
    kind; a kind not given is wrong, with the reason."""

    def score(sample: Sample, response: str | None) -> SampleScore:
        kind = sample.ground_truth.kind
        scorer = scorers.get(kind)
        if scorer is None:
            return _verdict(correct=False, why=f"unreadable: no scorer for a {kind} truth")
        return scorer(sample, response)

    score.__doc__ = "By the truth's kind: " + ", ".join(
        f"{kind}: {getattr(s, '__name__', s)}" for kind, s in scorers.items()
    )
    return score
