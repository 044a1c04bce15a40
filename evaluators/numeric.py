"""Reading numbers out of model answers, and the numeric metrics.

The parsers read what models write: a ``FINAL ANSWER:`` line, thousands
separators ("1,234.5"), the Unicode minus, units after the number, Markdown
bold, scientific notation ("4.821e1 m", "1.2E-3 km", "4.8 × 10^3 m",
"4.8×10³"), digits grouped in threes by a space, a no-break space or a thin
space ("7 566 km").  "10,20" and "10, 20" are two numbers, not ten thousand
and twenty.

``parse_result_number`` reads the result where a model writes a working: in
``FINAL ANSWER: d = 2R·asin(...) = 7566 km`` the number after the last "="
(or "≈", "→", "gives", "equals"), and on a last line with no marker
(``R=6371 km gives 7566 km``) the last number written with a unit, so the
first number of a formula never wins over its result.

Limits, the same for every task: an answer longer than ``MAX_ANSWER_CHARS``
characters is unreadable ("too long"), and a number that is not finite or
whose size exceeds ``MAX_MAGNITUDE`` ("1e309", a 200-digit integer) is
unreadable, never an infinity or an overflow in a metric.  Every parser
here runs in time linear in the answer's length.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cartoqa.records.truths import within

from . import metrics

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_MAGNITUDE",
    "AnswerParseError",
    "NumberAnswer",
    "check_answer_length",
    "checked_number",
    "final_answer_region",
    "final_answer_text",
    "has_final_answer",
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


class AnswerParseError(ValueError):
    """A model answer that holds no value of the kind asked for."""


def check_answer_length(response: str) -> str:
    """``response`` itself, or ``AnswerParseError`` when it is longer than ``MAX_ANSWER_CHARS``."""
    if len(response) > MAX_ANSWER_CHARS:
        raise AnswerParseError(
            f"the answer is too long: {len(response):,} characters, more than the "
            f"{MAX_ANSWER_CHARS:,} read (it begins {response[:40]!r})"
        )
    return response


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
_UNIT_ALIASES = {
    "km": "km",
    "kms": "km",
    "kilometer": "km",
    "kilometers": "km",
    "kilometre": "km",
    "kilometres": "km",
    "m": "m",
    "meter": "m",
    "meters": "m",
    "metre": "m",
    "metres": "m",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "ft": "ft",
    "feet": "ft",
    "foot": "ft",
    "°": "deg",
    "deg": "deg",
    "degree": "deg",
    "degrees": "deg",
}


def final_answer_text(response: str) -> str:
    """The text after the last ``FINAL ANSWER:`` marker (reasoning inside ``<think>...</think>``
    ignored), else the last non-empty line."""
    response = _THINK.sub("", check_answer_length(response))
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
    response = _THINK.sub("", check_answer_length(response))
    starts = [m.start(1) for m in _FINAL.finditer(response)]
    return response[starts[-1] :] if starts else response


def has_final_answer(response: str) -> bool:
    """Whether the response (outside ``<think>`` blocks) has a ``FINAL ANSWER:`` marker."""
    return _FINAL.search(_THINK.sub("", check_answer_length(response))) is not None


@dataclass(frozen=True)
class NumberAnswer:
    """A number read from an answer, with its unit when one was written."""

    value: float
    unit: str | None


def parse_number(text: str) -> NumberAnswer:
    """The first number in ``text`` with its unit ("1,234.5 km" -> 1234.5, "km";
    "4.821e1 m" -> 48.21, "m").  A number that is not finite or larger than
    ``MAX_MAGNITUDE`` in size raises ``AnswerParseError``, as does no number."""
    m = _NUMBER.search(check_answer_length(text).replace("\u2212", "-"))
    if m is None:
        raise AnswerParseError(f"no number in {text[:80]!r}")
    sign, digits, exp_e, exp_pow, exp_sup, unit = m.groups()
    exponent = exp_e or exp_pow or (exp_sup.translate(_SUPERSCRIPTS) if exp_sup else "0")
    plain = re.sub(r"[, \u00a0\u2009\u202f]", "", digits)
    value = checked_number(float(f"{plain}e{exponent}"), m.group(0))
    if sign == "-":
        value = -value
    norm = _UNIT_ALIASES.get(unit.lower().rstrip(".")) if unit else None
    return NumberAnswer(value, norm)


# the sign or word before a result: "= 7566 km", "≈ 7566", "gives 7566 km", "→ 7566"
_RESULT = re.compile(r"=|≈|→|\bgives\b|\bequals\b", re.IGNORECASE)


def parse_result_number(response: str) -> NumberAnswer:
    """The number a response gives as its result.  After the last ``FINAL ANSWER:``: the
    first number after the last "=", "≈", "→", "gives" or "equals" (a working such as
    ``2·6371·0.594 = 7566 km``; asides in parentheses are not read for this), else the
    first number.  With no marker: the last number written with a unit on the last line,
    else that line's last number (``R=6371 km gives 7566 km`` -> 7566 km).  Raises
    ``AnswerParseError`` when there is no number."""
    body = _THINK.sub("", check_answer_length(response))
    text = final_answer_text(body)
    if _FINAL.search(body) is not None:
        head = text[:2000].split("(", 1)[0]
        results = list(_RESULT.finditer(head))
        if results:
            with contextlib.suppress(AnswerParseError):
                return parse_number(head[results[-1].end() :])
        return parse_number(text)
    # the result is at the end of the line: read its last 2,000 characters
    found = list(_NUMBER.finditer(text[-2000:].replace("\u2212", "-")))
    if not found:
        raise AnswerParseError(f"no number in {text[:80]!r}")
    with_unit = [
        m for m in found if m.group(6) and _UNIT_ALIASES.get(m.group(6).lower().rstrip("."))
    ]
    return parse_number((with_unit or found)[-1].group(0))


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
