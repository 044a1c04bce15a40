"""Reading numbers out of model answers, and the numeric metrics.

The parsers read what models write: a ``FINAL ANSWER:`` line, thousands
separators ("1,234.5"), the Unicode minus, units after the number, Markdown
bold.  "10,20" is two numbers, not ten thousand and twenty.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AnswerParseError",
    "NumberAnswer",
    "final_answer_text",
    "one_minus_mape",
    "parse_number",
    "tolerance_accuracy",
    "within_tolerance",
]


class AnswerParseError(ValueError):
    """A model answer that holds no value of the kind asked for."""


# "FINAL ANSWER: x", "**FINAL ANSWER:** x", "__Final answer__: x"
_FINAL = re.compile(r"final\s+answer[\s*_]*[:：][\s*_]*(.+)", re.IGNORECASE)
_THINK = re.compile(r"<think>.*?(</think>|$)", re.IGNORECASE | re.DOTALL)
_NUMBER = re.compile(
    r"(?<![\w.])([+\-\u2212]?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*([A-Za-z°µ]+\.?))?"
)
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
    response = _THINK.sub("", response)
    matches = _FINAL.findall(response)
    if matches:
        text = matches[-1]
    else:
        lines = [ln for ln in response.strip().splitlines() if ln.strip()]
        if not lines:
            raise AnswerParseError("the answer is empty")
        text = lines[-1]
    return text.replace("**", "").replace("__", "").strip().strip("`").strip()


@dataclass(frozen=True)
class NumberAnswer:
    """A number read from an answer, with its unit when one was written."""

    value: float
    unit: str | None


def parse_number(text: str) -> NumberAnswer:
    """The first number in ``text`` with its unit ("1,234.5 km" -> 1234.5, "km")."""
    m = _NUMBER.search(text.replace("\u2212", "-"))
    if m is None:
        raise AnswerParseError(f"no number in {text[:80]!r}")
    sign, digits, unit = m.groups()
    value = float(digits.replace(",", ""))
    if sign == "-":
        value = -value
    norm = _UNIT_ALIASES.get(unit.lower().rstrip(".")) if unit else None
    return NumberAnswer(value, norm)


def within_tolerance(
    predicted: float, truth: float, *, abs_tol: float = 0.0, rel_tol: float = 0.0
) -> bool:
    """True when |predicted - truth| <= max(abs_tol, rel_tol × |truth|)."""
    if not math.isfinite(predicted):
        return False
    return abs(predicted - truth) <= max(abs_tol, rel_tol * abs(truth))


def tolerance_accuracy(correct: Sequence[bool]) -> float:
    """Share of answers within tolerance (unanswered ones count as wrong)."""
    return sum(correct) / len(correct) if correct else float("nan")


def one_minus_mape(predicted: Sequence[float | None], truth: Sequence[float]) -> float:
    """1 - mean absolute percentage error, floored at 0 per sample; None counts as 0."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} truths")
    if not truth:
        return float("nan")
    scores = []
    for p, t in zip(predicted, truth, strict=True):
        if p is None or t == 0 or not math.isfinite(p):
            scores.append(0.0)
        else:
            scores.append(max(0.0, 1.0 - abs(p - t) / abs(t)))
    return sum(scores) / len(scores)
