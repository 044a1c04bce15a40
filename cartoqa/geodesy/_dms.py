"""Degrees-minutes-seconds text: writing it and reading every common way of writing coordinates."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cartoqa.errors import CoordinateError

from ._validate import as_lat, as_lon, broadcast, fold_lon


def _dms_component(
    value: float, positive: str, negative: str, precision: int, deg_width: int
) -> str:
    hemi = positive if value >= 0 else negative
    a = abs(value)
    deg = math.floor(a)
    minutes = math.floor((a - deg) * 60.0)
    seconds = round(((a - deg) * 60.0 - minutes) * 60.0, precision)
    if seconds >= 60.0:  # rounding carried into the next minute
        seconds -= 60.0
        minutes += 1
    if minutes >= 60:
        minutes -= 60
        deg += 1
    sec_width = 2 + (precision + 1 if precision > 0 else 0)
    sec = f"{seconds:0{sec_width}.{precision}f}"
    return f"{deg:0{deg_width}d}°{minutes:02d}'{sec}\"{hemi}"


def to_dms(lat: ArrayLike, lon: ArrayLike, precision: int = 1) -> Any:
    """Write a coordinate as degrees, minutes and seconds: ``12°34'56.7"N, 98°07'06.5"W``.

    degrees = floor(|x|), minutes = floor(remainder × 60), seconds = what
    remains × 60, rounded to ``precision`` decimals (carrying into minutes and
    degrees when rounding reaches 60).  Arrays give an array of str.
    """
    if precision < 0:
        raise CoordinateError(f"precision={precision!r} must be >= 0 decimals of a second")
    la, lo = broadcast(lat=as_lat("lat", lat), lon=as_lon("lon", lon))
    lo = fold_lon(lo)
    out = [
        _dms_component(float(a), "N", "S", precision, 1)
        + ", "
        + _dms_component(float(b), "E", "W", precision, 1)
        for a, b in zip(la.ravel(), lo.ravel(), strict=True)
    ]
    if la.ndim == 0:
        return out[0]
    return np.asarray(out).reshape(la.shape)


# ---------------------------------------------------------------- parsing

_NORMALISE = str.maketrans(
    {
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash
        "\u2012": "-",
        "\u2032": "'",  # prime
        "\u2019": "'",
        "\u2018": "'",
        "\u00b4": "'",
        "`": "'",
        "\u2033": '"',  # double prime
        "\u201d": '"',
        "\u201c": '"',
        "\u00ba": "°",  # masculine ordinal, often typed for a degree sign
        "\u02da": "°",  # ring above
        "\u00a0": " ",
    }
)

_TOKEN = re.compile(
    r"""
    (?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))
    (?P<unit>\s*(?:°|''|'|"|(?:deg(?:rees?)?|min(?:utes?)?|sec(?:onds?)?)\b)|(?-i:[dms](?![a-z])))?
    | (?P<hemi>\b(?:north|south|east|west)\b|[NSEWnsew](?![a-z]))
    | (?P<sep>[,;/])
    | (?P<space>\s+)
    | (?P<other>.)
    """,
    re.VERBOSE | re.IGNORECASE,
)

#: the longest coordinate text read; a longer one is refused before it is tokenised
MAX_COORDINATE_CHARS = 1_000

_UNIT_KIND = {"°": 0, "d": 0, "'": 1, "m": 1, '"': 2, "''": 2, "s": 2}


def _unit_kind(unit_txt: str) -> int | None:
    if not unit_txt:
        return None
    return _UNIT_KIND.get(unit_txt, {"de": 0, "mi": 1, "se": 2}.get(unit_txt[:2]))


@dataclass
class _Part:
    numbers: list[tuple[str, int | None]] = field(default_factory=list)  # (text, unit kind)
    hemi: str | None = None
    prefix: bool = False

    def closed_by_number(self, unit: int | None) -> bool:
        """Would a new number with this unit start the next coordinate?"""
        if not self.numbers:
            return False
        if self.hemi is not None and not self.prefix:
            return True
        last_text, last_unit = self.numbers[-1]
        if len(self.numbers) == 3 or last_unit == 2 or "." in last_text:
            return True
        return unit is not None and last_unit is not None and unit <= last_unit


def _tokenise(text: str) -> list[_Part]:
    parts: list[_Part] = [_Part()]
    saw_sep = False
    for m in _TOKEN.finditer(text.translate(_NORMALISE).strip()):
        cur = parts[-1]
        if m.group("num") is not None:
            unit_txt = (m.group("unit") or "").strip().lower()
            unit = _unit_kind(unit_txt)
            hemi_after = None
            if unit_txt == "s" and not any(u == 1 for _, u in cur.numbers):
                # "33.86s": a lone s after a number with no minutes before it means south
                unit, hemi_after = None, "S"
            if cur.closed_by_number(unit) and not saw_sep:
                cur = _Part()
                parts.append(cur)
            cur.numbers.append((m.group("num"), unit))
            if hemi_after is not None:
                cur.hemi, cur.prefix = hemi_after, False
        elif m.group("hemi") is not None:
            h = m.group("hemi")[0].upper()
            if not cur.numbers and cur.hemi is None:
                cur.hemi, cur.prefix = h, True
            elif cur.numbers and cur.hemi is None:
                cur.hemi, cur.prefix = h, False
            else:
                cur = _Part(hemi=h, prefix=True)
                parts.append(cur)
        elif m.group("sep") is not None:
            if cur.numbers or cur.hemi:
                parts.append(_Part())
            saw_sep = True
        elif m.group("other") is not None:
            raise CoordinateError(
                f"cannot read {text!r} as a coordinate: unexpected {m.group('other')!r}; "
                "write it as decimal degrees (48.8566, 2.3522) or DMS (48°51'24\"N 2°21'08\"E)"
            )
    return [p for p in parts if p.numbers or p.hemi]


def _split_unmarked(parts: list[_Part]) -> list[_Part]:
    """Whitespace-only integers with no units or letters: split evenly ("48 51 24 2 21 8")."""
    if len(parts) == 2 or len(parts) != 1:
        return parts
    p = parts[0]
    if p.hemi is not None or any(u is not None for _, u in p.numbers):
        return parts
    nums = p.numbers
    if len(nums) % 2 == 0 and len(nums) <= 6:
        half = len(nums) // 2
        return [_Part(numbers=nums[:half]), _Part(numbers=nums[half:])]
    return parts


def _value(part: _Part, text: str) -> float:
    nums = part.numbers
    if not nums:
        raise CoordinateError(f"cannot read {text!r}: the letter {part.hemi!r} has no number")
    values = [0.0, 0.0, 0.0]
    position = -1
    for t, unit in nums:
        slot = position + 1 if unit is None else unit
        if slot <= position or slot > 2:
            raise CoordinateError(
                f"cannot read {text!r}: {t!r} comes out of order; write degrees, then minutes, "
                "then seconds"
            )
        v = float(t)
        if slot > 0 and (t.startswith(("-", "+")) or not 0 <= v < 60):
            raise CoordinateError(
                f"cannot read {text!r}: minutes and seconds must be in [0, 60), got {t!r}"
            )
        values[slot] = v
        position = slot
    if position > 0 and nums[0][1] not in (None, 0):
        raise CoordinateError(
            f"cannot read {text!r}: the degrees are missing before {nums[0][0]!r}"
        )
    if len(nums) > 1 and "." in nums[0][0] and float(nums[0][0]) != int(float(nums[0][0])):
        raise CoordinateError(
            f"cannot read {text!r}: degrees {nums[0][0]!r} have a fraction but minutes follow"
        )
    if len(nums) > 2 and "." in nums[1][0] and float(nums[1][0]) != int(float(nums[1][0])):
        raise CoordinateError(
            f"cannot read {text!r}: minutes {nums[1][0]!r} have a fraction but seconds follow"
        )
    negative = nums[0][0].startswith("-")
    magnitude = abs(values[0]) + values[1] / 60.0 + values[2] / 3600.0
    if part.hemi in ("S", "W"):
        if negative:
            raise CoordinateError(
                f"cannot read {text!r}: both a minus sign and {part.hemi!r} are given; use one"
            )
        negative = True
    return -magnitude if negative else magnitude


# "Latitude: 44.36", "lat = 44.36", '"lon": 90.9' (a label, then ":" or "=" or nothing)
_LABEL = re.compile(
    r"""["']?\b(?P<label>latitude|lat|longitude|long|lon|lng)\b["']?\s*[:=]?""", re.IGNORECASE
)
_WRAPS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _unwrap(text: str) -> tuple[str, bool]:
    """The coordinate text without the brackets around it ("(44.36, 90.90)", "[..]", "{..}")
    or a trailing full stop, and with "latitude:"/"lon =" labels taken out; and whether the
    labels put the longitude first."""
    body = text.strip().rstrip(".").strip()
    while len(body) >= 2 and _WRAPS.get(body[0]) == body[-1]:
        body = body[1:-1].strip()
    labels = [m.group("label").lower() for m in _LABEL.finditer(body)]
    lon_first = False
    if len(labels) == 2 and {lb.startswith("lat") for lb in labels} == {True, False}:
        lon_first = not labels[0].startswith("lat")
        body = _LABEL.sub(" ", body).strip()
        while len(body) >= 2 and _WRAPS.get(body[0]) == body[-1]:
            body = body[1:-1].strip()
    return body, lon_first


def parse_coordinate(text: str) -> tuple[float, float]:
    """Read a coordinate written by a person or a model; return (lat, lon) in degrees.

    Accepts decimal degrees ("48.8566, 2.3522", "-33.87 151.21"), DMS with
    ° ' " or d m s or prime marks (48°51'24"N 2°21'08"E, 48d51m24sN),
    degrees and decimal minutes, hemisphere letters before or after, signs
    (the Unicode minus too), and the longitude first when letters say so
    ("2.35E 48.85N").  Brackets around the pair are read past ("(44.3652, 90.9043)",
    "[44.3652, 90.9043]"), and so are labels ("Latitude: 44.3652, Longitude: 90.9043",
    "lat = 44.3652, lon = 90.9043", which may put the longitude first).  Without letters
    or labels the order is latitude, longitude.
    Raises ``CoordinateError`` (a ``ValueError``) naming the text when it
    cannot be read, is out of range, or is longer than ``MAX_COORDINATE_CHARS``.
    """
    if not isinstance(text, str) or not text.strip():
        raise CoordinateError(f"cannot read {text!r} as a coordinate: it is empty")
    if len(text) > MAX_COORDINATE_CHARS and len(text.strip()) > MAX_COORDINATE_CHARS:
        raise CoordinateError(
            f"cannot read {text[:40]!r}... as a coordinate: {len(text.strip()):,} characters, "
            f"more than the {MAX_COORDINATE_CHARS:,} a coordinate may have; write it as "
            "'48.8566, 2.3522'"
        )
    body, lon_first = _unwrap(text)
    parts = _split_unmarked(_tokenise(body))
    if len(parts) != 2:
        raise CoordinateError(
            f"cannot read {text!r}: found {len(parts)} coordinate part(s), need a latitude and "
            "a longitude, e.g. '48.8566, 2.3522' or '48°51'24\"N 2°21'08\"E'"
        )
    a, b = parts
    if lon_first and a.hemi is None and b.hemi is None:
        a, b = b, a
    if a.hemi in ("E", "W") and b.hemi in ("N", "S", None):
        a, b = b, a
    if a.hemi in ("E", "W") or b.hemi in ("N", "S"):
        raise CoordinateError(
            f"cannot read {text!r}: the hemisphere letters {a.hemi!r} and {b.hemi!r} do not give "
            "one latitude (N/S) and one longitude (E/W)"
        )
    lat, lon = _value(a, text), _value(b, text)
    try:
        as_lat("latitude", lat)
        as_lon("longitude", lon)
    except CoordinateError as exc:
        raise CoordinateError(f"cannot read {text!r}: {exc}") from None
    if abs(lon) > 180.0:
        raise CoordinateError(f"cannot read {text!r}: longitude {lon!r} is outside [-180, 180]")
    return lat, lon
