"""Reading numbers out of model answers, and the numeric metrics.

The parsers read what models write: a ``FINAL ANSWER:`` line, thousands
separators ("1,234.5"), the Unicode minus, units after the number, Markdown
bold, scientific notation ("4.821e1 m", "1.2E-3 km", "4.8 × 10^3 m",
"4.8×10³"), digits grouped in threes by a space, a no-break space or a thin
space ("7 566 km").  "10,20" and "10, 20" are two numbers, not ten thousand
and twenty.

Units and words after a number: a multiplier word is applied ("2 million" is
2,000,000); the unit written is one of ``UNITS`` (lengths, areas, angles, each
in its forms: "km", "kilometres", "sq km", "km²", "km^2", "square miles",
"acres", "nautical miles", "light years", "°", "rad") or, when the word after
the number is none of these nor a common word ("and", "W", "clockwise"), kept
as ``NumberAnswer.unknown``; ``in_unit`` converts to the unit asked and
refuses an unknown word or a unit of another dimension.  A negated number
("not 2", "2 is wrong") is passed over; two different numbers given as
alternatives ("2 or 3", "maybe 4, maybe 5", "2-3") make the answer hedged,
unreadable (``evaluators.hedges``).

``parse_result_number`` reads the result where a model writes a working: in
``FINAL ANSWER: d = 2R·asin(...) = 7566 km`` the number after the last "="
(or "≈", "→", "gives", "equals"), and on a last line with no marker
(``R=6371 km gives 7566 km``) the last number written with a unit, so the
first number of a formula never wins over its result.

End-of-turn tokens a model or its server leaves in the text (``END_OF_TURN_TOKENS``:
"<|eot|>", "<|eot_id|>", "<|im_end|>", "<|endoftext|>", "</s>", ...) are no part of the
answer: ``answer_body`` removes every one of them, wherever it stands, before any default
parser reads the answer (``final_answer_text``, ``final_answer_region``,
``has_final_answer`` and the parsers that read the whole answer start from it).  The
"original" modes keep the published code's own removals instead.

Limits, the same for every task: an answer longer than ``MAX_ANSWER_CHARS``
characters is unreadable ("too long"), and a number that is not finite or
whose size exceeds ``MAX_MAGNITUDE`` ("1e309", a 200-digit integer) is
unreadable, never an infinity or an overflow in a metric.  Every parser
here runs in time linear in the answer's length.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cartoqa.records.truths import within

from . import metrics
from .errors import AnswerParseError
from .hedges import MAX_NEGATED, alternative_at, is_negated

__all__ = [
    "END_OF_TURN_TOKENS",
    "MAX_ANSWER_CHARS",
    "MAX_MAGNITUDE",
    "UNITS",
    "AnswerParseError",
    "NumberAnswer",
    "answer_body",
    "check_answer_length",
    "checked_number",
    "final_answer_region",
    "final_answer_text",
    "has_final_answer",
    "in_unit",
    "multiplier_at",
    "one_minus_mape",
    "parse_number",
    "parse_result_number",
    "tolerance_accuracy",
    "within_tolerance",
]


#: the longest answer read, in characters (about 250,000 tokens); a longer one is unreadable
MAX_ANSWER_CHARS = 1_000_000
#: the largest magnitude a number in an answer may have; a larger one is unreadable (its
#: square, in r^2 or RMSE, stays far from overflowing)
MAX_MAGNITUDE = 1e100


def check_answer_length(response: str) -> str:
    """``response`` itself, or ``AnswerParseError`` when it is longer than ``MAX_ANSWER_CHARS``."""
    if len(response) > MAX_ANSWER_CHARS:
        raise AnswerParseError(
            f"the answer is too long: {len(response):,} characters, more than the "
            f"{MAX_ANSWER_CHARS:,} read (it begins {response[:40]!r})"
        )
    return response


#: the end-of-turn (and end-of-text) tokens of common chat templates, which a model or its
#: server may leave in a reply: removed from every answer before the default parsers read it
END_OF_TURN_TOKENS = (
    "<|eot|>",
    "<|eot_id|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|end|>",
    "<end_of_turn>",
    "</s>",
)
_END_OF_TURN = re.compile("|".join(re.escape(t) for t in END_OF_TURN_TOKENS), re.IGNORECASE)


def answer_body(response: str) -> str:
    """The answer as the default parsers read it: ``response`` with every end-of-turn token
    (``END_OF_TURN_TOKENS``) removed, wherever it stands; ``AnswerParseError`` when it is
    longer than ``MAX_ANSWER_CHARS``.  The one place these tokens are removed."""
    return _END_OF_TURN.sub("", check_answer_length(response))


def checked_number(value: float, written: str) -> float:
    """``value`` when it is finite and within ``MAX_MAGNITUDE``; else ``AnswerParseError``
    naming how it was ``written``."""
    if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        shown = written if len(written) <= 40 else f"{written[:20]}...{written[-10:]}"
        raise AnswerParseError(
            f"the number {shown!r} is not finite or larger than {MAX_MAGNITUDE:g} in size: "
            "not a usable answer"
        )
    return value


# "FINAL ANSWER: x", "**FINAL ANSWER:** x", "__Final answer__: x"
_FINAL = re.compile(r"final\s+answer[\s*_]*[:：][\s*_]*(.+)", re.IGNORECASE)
_THINK = re.compile(r"<think>.*?(</think>|$)", re.IGNORECASE | re.DOTALL)
_NUMBER = re.compile(
    r"(?<![\w.])([+\-\u2212]?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?"
    # groups of three after a space, a no-break space or a thin space: "7 566", "1\u202f234.5"
    r"|\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?!\d)(?:\.\d+)?"
    r"|\d+(?:\.\d+)?|\.\d+)"
    # an exponent: "e1", "E+01", "e-3" (digits required, so "2e" and "5 east" are no exponent),
    # or a power of ten: "× 10^3", "x10**-2", "·10³"
    r"(?:[eE]([+\-]?\d+)|\s*[x×*·]\s*10(?:\^|\*\*)\s*([+\-]?\d+)|\s*[x×*·]\s*10([⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"
    r"(?:\s*([A-Za-z°µ]+\.?))?"
)
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")

#: every unit a number may be written in: canonical name -> (dimension, size in the
#: dimension's base unit: metres, square kilometres, degrees).  A number is converted to the
#: unit asked from any of these of the same dimension; one of another dimension (a length
#: for an area) or a word that is none of these is refused, never read as the unit asked.
UNITS: dict[str, tuple[str, float]] = {}
_LENGTH_M = {
    "m": 1.0,
    "km": 1000.0,
    "mi": 1609.344,
    "nmi": 1852.0,
    "ft": 0.3048,
    "yd": 0.9144,
    "in": 0.0254,
    "cm": 0.01,
    "mm": 0.001,
    "ly": 9_460_730_472_580_800.0,
}
UNITS |= {u: ("length", f) for u, f in _LENGTH_M.items()}
UNITS |= {f"{u}2": ("area", (f / 1000.0) ** 2) for u, f in _LENGTH_M.items()}
UNITS |= {"ha": ("area", 0.01), "acre": ("area", 0.0040468564224)}
UNITS |= {"deg": ("angle", 1.0), "rad": ("angle", 180.0 / math.pi)}

# how each unit is written (case aside; a space in a form is any run of spaces or a hyphen)
_FORMS = {
    "km": "km kms kilometer kilometers kilometre kilometres",
    "m": "m meter meters metre metres",
    "mi": "mi mile miles",
    "nmi": "nmi nm nautical_mile nautical_miles",
    "ft": "ft foot feet",
    "yd": "yd yds yard yards",
    "in": "inch inches",
    "cm": "cm centimeter centimeters centimetre centimetres",
    "mm": "mm millimeter millimeters millimetre millimetres",
    "ly": "ly light_year light_years lightyear lightyears",
    "ha": "ha hectare hectares",
    "acre": "acre acres",
    "deg": "° º ˚ deg degs degree degrees",
    "rad": "rad rads radian radians",
}
_UNIT_OF_FORM = {
    form.replace("_", " "): unit for unit, forms in _FORMS.items() for form in forms.split()
}


def _alternation(units: str) -> str:
    forms = [f for u in units.split() for f in _FORMS[u].split()]
    return "|".join(
        re.escape(f).replace("_", r"[\s\-]+") for f in sorted(forms, key=len, reverse=True)
    )


_LENGTHS = _alternation("km m mi nmi ft yd in cm mm ly")
# a unit after a number: an area ("sq km", "square miles", "km²", "km^2", "km2", "m
# squared", "ha", "acres"), an angle ("°", "rad") or a length; the longest form first
_UNIT = re.compile(
    r"[ \t\u00a0]*(?:"
    rf"(?:sq\.?|square)\s*(?P<sq>{_LENGTHS})"
    rf"|(?P<squared>{_LENGTHS})(?:\s*(?:²|\^\s*2|\*\*\s*2)|2(?!\d)|\s+squared|\s+sq\b\.?)"
    rf"|(?P<other>{_alternation('ha acre deg rad')}|{_LENGTHS})"
    r")(?:(?<=[°º˚²])|(?![A-Za-z]))\.?",
    re.IGNORECASE,
)
# "2 million", "1.5 thousand": applied to the number, never dropped
_MULTIPLIERS = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_MULTIPLIER = re.compile(
    r"[ \t\u00a0]*(hundred|thousand|million|billion|trillion)s?(?![A-Za-z])", re.IGNORECASE
)
# a word straight after a number, read as the unit written when it is no unit known
_WORD = re.compile(r"[ \t\u00a0]*([A-Za-zµ]+)")
# words that may follow a number and are no unit: "7566 and", "53.0 W", "26.8 clockwise"
_NOT_UNITS = frozenset(
    """and or to in into is are was were be at from for of on by with the a an as which that
    this it its so but not than if when where while between approximately approx about
    roughly around exactly nearly almost total n s e w north south east west ne nw se sw nne
    ene ese sse ssw wsw wnw nnw northeast northwest southeast southwest true clockwise along
    via plus minus give gives long away apart each per rounded round estimated because since
    given using measured here there i we you x latitude longitude lat lon lng bearing
    distance area azimuth heading direction t""".split()  # noqa: SIM905
)


def final_answer_text(response: str) -> str:
    """The text after the last ``FINAL ANSWER:`` marker (reasoning inside ``<think>...</think>``
    ignored), else the last non-empty line."""
    response = _THINK.sub("", answer_body(response))
    matches = _FINAL.findall(response)
    if matches:
        text = matches[-1]
    else:
        stripped = response.strip()  # its last line is the last non-empty one
        if not stripped:
            raise AnswerParseError("the answer is empty")
        text = stripped.splitlines()[-1]
    return text.replace("**", "").replace("__", "").strip().strip("`").strip()


def final_answer_region(response: str) -> str:
    """Everything after the last ``FINAL ANSWER:`` marker (reasoning inside
    ``<think>...</think>`` ignored), else the whole response: where a JSON answer that starts
    on the line after the marker is looked for."""
    response = _THINK.sub("", answer_body(response))
    starts = [m.start(1) for m in _FINAL.finditer(response)]
    return response[starts[-1] :] if starts else response


def has_final_answer(response: str) -> bool:
    """Whether the response (outside ``<think>`` blocks) has a ``FINAL ANSWER:`` marker."""
    return _FINAL.search(_THINK.sub("", answer_body(response))) is not None


@dataclass(frozen=True)
class NumberAnswer:
    """A number read from an answer, with its unit when one was written."""

    value: float
    """The number, a multiplier word after it applied ("2 million" -> 2000000)."""
    unit: str | None
    """The unit written, by its name in ``UNITS`` ("km", "km2", "deg"); None for none."""
    unknown: str | None = None
    """The word written straight after the number when it is no unit known ("furlongs",
    "light" of "light-hours"): ``in_unit`` refuses such a number."""


def multiplier_at(text: str, pos: int) -> tuple[float, int]:
    """The multiplier word at ``pos`` ("2 million": 1e6) and where it ends; (1.0, pos) when
    there is none."""
    m = _MULTIPLIER.match(text, pos)
    return (_MULTIPLIERS[m.group(1).lower()], m.end()) if m else (1.0, pos)


def _tail(text: str, pos: int) -> tuple[float, str | None, str | None, int]:
    """What follows a number at ``pos``: (its multiplier, the unit, the unknown word, where
    they end)."""
    factor, pos = multiplier_at(text, pos)
    u = _UNIT.match(text, pos)
    if u:
        if u.group("sq") or u.group("squared"):
            form = (u.group("sq") or u.group("squared")).lower()
            unit = _UNIT_OF_FORM[re.sub(r"[\s\-]+", " ", form)] + "2"
        else:
            unit = _UNIT_OF_FORM[re.sub(r"[\s\-]+", " ", u.group("other").lower())]
        return factor, unit, None, u.end()
    w = _WORD.match(text, pos)
    if w and w.group(1).lower() not in _NOT_UNITS:
        return factor, None, w.group(1)[:40], w.end()
    return factor, None, None, pos


def _digits_end(m: re.Match[str]) -> int:
    """Where a ``_NUMBER`` match's number (with its exponent) ends, before any word."""
    return max(m.end(g) for g in (2, 3, 4, 5) if m.group(g) is not None)


def _read_at(text: str, m: re.Match[str]) -> tuple[NumberAnswer, int]:
    """The number a ``_NUMBER`` match reads, with what follows it, and where that ends."""
    sign, digits, exp_e, exp_pow, exp_sup = m.groups()[:5]
    exponent = exp_e or exp_pow or (exp_sup.translate(_SUPERSCRIPTS) if exp_sup else "0")
    plain = re.sub(r"[, \u00a0\u2009\u202f]", "", digits)
    value = checked_number(float(f"{plain}e{exponent}"), m.group(0))
    if sign == "-":
        value = -value
    factor, unit, unknown, end = _tail(text, _digits_end(m))
    if factor != 1.0:
        value = checked_number(value * factor, m.group(0))
    return NumberAnswer(value, unit, unknown), end


def _differ(a: NumberAnswer, b: NumberAnswer) -> bool:
    """Whether two numbers are different answers (not one value in two units: "9568 km or
    5945 miles"); a number with no unit is taken in the other's."""
    unit = a.unit or b.unit
    if unit is None or unit not in UNITS:
        return abs(a.value - b.value) > 1e-9 * max(abs(a.value), abs(b.value))
    try:
        va, vb = in_unit(a, unit), in_unit(b, unit)
    except AnswerParseError:  # another dimension, or a word that is no unit
        return True
    return abs(va - vb) > 0.005 * max(abs(va), abs(vb))


def _number_from(text: str, pos: int = 0) -> tuple[NumberAnswer, int] | None:
    """The first number at or after ``pos`` that is not negated, with where it ends; None
    when there is no number; ``AnswerParseError`` when every number is negated ("not 2") or
    the first is one of two alternatives ("2 or 3", "maybe 4, maybe 5", "2-3")."""
    negated, skipped = None, 0
    for m in _NUMBER.finditer(text, pos):
        got, end = _read_at(text, m)
        if is_negated(text, m.start(), end):
            negated = negated or m.group(0)
            skipped += 1
            if skipped > MAX_NEGATED:
                raise AnswerParseError(f"more than {MAX_NEGATED} values ruled out: not an answer")
            continue
        alt = alternative_at(text, m.start(), end)
        if alt is not None:
            n = _NUMBER.match(text, alt)
            if n is not None:
                other, _ = _read_at(text, n)
                if _differ(got, other):
                    raise AnswerParseError(
                        f"a hedged answer: {text[m.start() : n.end()][:80]!r} gives two "
                        "values; one answer is asked"
                    )
        return got, end
    if negated is not None:
        raise AnswerParseError(f"a negated answer: {negated!r} is ruled out and no value given")
    return None


def parse_number(text: str) -> NumberAnswer:
    """The first number in ``text`` with its unit ("1,234.5 km" -> 1234.5, "km";
    "4.821e1 m" -> 48.21, "m"; "2 million" -> 2000000, None; "90 furlongs" -> 90, unknown
    "furlongs").  A negated number ("not 2") is passed over; ``AnswerParseError`` when every
    number is negated, when the first is hedged ("2 or 3", "maybe 4, maybe 5"), when one is
    not finite or larger than ``MAX_MAGNITUDE`` in size, or when there is none."""
    found = _number_from(check_answer_length(text).replace("\u2212", "-"))
    if found is None:
        raise AnswerParseError(f"no number in {text[:80]!r}")
    return found[0]


def _canonical_unit(unit: str | None) -> str | None:
    """A unit's name in ``UNITS`` however a truth writes it ("km²", "metres"), else itself."""
    if unit is None or unit in UNITS:
        return unit
    u = _UNIT.fullmatch(f"1 {unit}", 1)
    return _tail(f"1 {unit}", 1)[1] if u else unit


def in_unit(answer: NumberAnswer, unit: str | None) -> float:
    """``answer``'s value in ``unit`` (a name of ``UNITS``, or None for a plain number):
    converted from the unit written ("90 km" in "m" is 90000; "0.468 rad" in "deg" is
    26.8); a number with no unit is taken to be in ``unit``.  ``AnswerParseError`` when the
    word after the number is no unit known ("90 furlongs") or its unit is of another
    dimension ("1000 km" for an area, "26.8 km" for an angle)."""
    unit = _canonical_unit(unit)
    if answer.unknown is not None:
        raise AnswerParseError(
            f"{answer.value:g} {answer.unknown!r}: {answer.unknown!r} is no unit known "
            f"(the answer is asked in {unit or 'no unit'}; see evaluators.numeric.UNITS)"
        )
    if answer.unit is None or answer.unit == unit:
        return answer.value
    if unit is None or unit not in UNITS:
        raise AnswerParseError(
            f"{answer.value:g} {answer.unit}: the answer is asked in {unit or 'no unit'}"
        )
    (have, size), (want, want_size) = UNITS[answer.unit], UNITS[unit]
    if have != want:
        raise AnswerParseError(
            f"{answer.value:g} {answer.unit} is {'an' if have[0] in 'aeiou' else 'a'} {have}, "
            f"not {'an' if want[0] in 'aeiou' else 'a'} {want} (asked in {unit})"
        )
    return checked_number(answer.value * size / want_size, f"{answer.value:g} {answer.unit}")


# the sign or word before a result: "= 7566 km", "≈ 7566", "gives 7566 km", "→ 7566"
_RESULT = re.compile(r"=|≈|→|\bgives\b|\bequals\b", re.IGNORECASE)


def parse_result_number(response: str) -> NumberAnswer:
    """The number a response gives as its result.  After the last ``FINAL ANSWER:``: the
    first number after the last "=", "≈", "→", "gives" or "equals" (a working such as
    ``2·6371·0.594 = 7566 km``; asides in parentheses are not read for this), else the
    first number.  With no marker: the last number written with a unit on the last line,
    else that line's last number (``R=6371 km gives 7566 km`` -> 7566 km).  Raises
    ``AnswerParseError`` when there is no number."""
    body = _THINK.sub("", answer_body(response))
    text = final_answer_text(body)
    if _FINAL.search(body) is not None:
        head = text[:2000].split("(", 1)[0]
        results = list(_RESULT.finditer(head))
        if results:  # a hedged or negated result is unreadable, never passed over
            got = _number_from(head.replace("\u2212", "-"), results[-1].end())
            if got is not None:
                return got[0]
        return parse_number(text)
    # the result is at the end of the line: read its last 2,000 characters
    line = text[-2000:].replace("\u2212", "-")
    found = list(_NUMBER.finditer(line))
    if not found:
        raise AnswerParseError(f"no number in {text[:80]!r}")
    with_unit = [m for m in found if _tail(line, _digits_end(m))[1] is not None]
    last = (with_unit or found)[-1]
    got = _number_from(line, last.start())
    if got is None:  # the last number is negated, and none follows it
        raise AnswerParseError(f"no number in {text[:80]!r}")
    return got[0]


def within_tolerance(
    predicted: float, truth: float, *, abs_tol: float = 0.0, rel_tol: float = 0.0
) -> bool:
    """True when |predicted - truth| <= max(abs_tol, rel_tol × |truth|): the rule of
    ``cartoqa.records.Tolerance``, which a truth carries."""
    return within(predicted, truth, abs_tol, rel_tol)


def tolerance_accuracy(correct: Sequence[bool]) -> float:
    """Share of answers within tolerance (unanswered ones count as wrong):
    ``evaluators.metrics.accuracy``."""
    return metrics.accuracy(correct)


def one_minus_mape(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """1 - mean absolute percentage error, floored at 0 per sample; None counts as 0:
    ``evaluators.metrics.one_minus_mape``."""
    return metrics.one_minus_mape(predicted, truth)
