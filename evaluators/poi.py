"""Scorers of CartoMapQA's map-feature tasks: STMF (presence, counting, name listing, one
type at a time) and MTMF (all 22 types at once): what models write, read and scored by
the truths' own rules.  The published CartoMapQA arithmetic (the "original" mode) is
``evaluators.published`` (``stmf``, ``mtmf``), used through
``cartoqa/tasks/release/features.py``.

Parsers (each raises ``AnswerParseError`` when nothing readable is found; a ``FINAL
ANSWER:`` marker anywhere wins over the lines before it; ``<think>`` blocks and
end-of-turn tokens (``evaluators.numeric.END_OF_TURN_TOKENS``) are ignored;
answers over ``MAX_ANSWER_CHARS`` are unreadable):

- ``parse_presence``: the first line that reads as yes or no ("**Yes**", "*Yes*", "_No_",
  "Yes.", "- yes", "Answer: No", "No, there is none"; emphasis marks at a word's edges
  are markdown, removed), prose lines before it passed over; failing that, a
  first line that begins with the bare word ("No hospital is shown").  A line that gives
  both ("Yes or no", "maybe yes, maybe no") is unreadable.
- ``parse_count``: the first line that begins with a count ("4", "**4**", "1,234",
  "Three.", "twenty-one", "Twenty one", "None", "No banks"; number words from zero to
  ninety-nine, a compound joined by a hyphen, a dash or a space), or says one ("There
  are 3 banks", "I count 3", "The total is 3"); failing those, the one number of the
  first line.  A count that is negative, not an integer or above ``MAX_COUNT`` makes the
  answer unreadable.  A multiplier word is applied ("2 million": unreadable, above
  ``MAX_COUNT``); a negated count ("not 2", "2 is wrong") is passed over; two counts given
  as alternatives ("2 or 3", "2-3", "maybe 4, maybe 5") make the answer unreadable.
- ``parse_names``: a JSON list (also in a code fence), or one name a line with bullets,
  markdown and quotes removed; ``""``, ``''`` and "unnamed" are the empty name; a first
  line that states nothing is named, shown or found ("None", "None found", "No names",
  "There are no ...", "I am unable to identify any names", "I can't see any names":
  ``evaluators.answers.says_no_names``) is no name at all, while a name that begins so
  ("None Such Café") stays a name; a heading line ending in ":" is dropped.
- ``parse_feature_map``: the last JSON object; its keys matched to the type keys of
  ``FEATURE_TYPES`` (and any other key of the sample's truth) with case, spaces,
  underscores, hyphens and a plural "s" aside, a type's label ("ATM or cash point") and
  the paper's names ("fitness center", "car parking lot") accepted too; unknown keys
  ignored (an object none of whose keys is a type, holding one that is, is unwrapped);
  the first key of a type wins over later ones.  A type's value: ``{"count", "names"}``
  (count an integer, an integral float or a numeric string; null is 0; missing, the
  number of names), a bare count, or a bare list of names.  Missing types: count 0, no
  names.

Scores (``presence_score``, ``count_score``, ``names_score``, ``mtmf_score``):

- presence: right when the answer equals the truth; values ``predicted`` (1, 0, None),
  ``truth``.
- count: right when the count lies in [value, value + optional]; values ``predicted``,
  ``truth`` (the required value) and ``error``, the distance to that range.
- names: compared after ``name_key`` (NFC, casefold, spaces collapsed, curly quotes and
  dashes made straight, surrounding quotes and punctuation stripped); empty names dropped
  on both sides (unnamed features are the count task's business).  Multiset matching:
  ``matched`` = predicted items matched one to one to required names; a predicted item
  left over that matches an optional name is neither right nor wrong (it leaves the
  precision denominator).  precision = matched / (predicted - optional hits), recall =
  matched / required, F1 their harmonic mean.  Edge cases: nothing required and nothing
  (counted) predicted is (1, 1, 1); nothing required but something predicted is
  (0, 1, 0); something required and nothing predicted is (0, 0, 0), as the published
  rule has it (an empty list earns no precision when there were names to give).  ``fuzzy_*`` beside
  them: the same with two names matching when ``difflib`` similarity of their keys is at
  least ``FUZZY_THRESHOLD`` (exact matches first, then the most similar pairs), never mixed
  into the exact values.  Right when the exact F1 is 1.
- MTMF (per map): ``rmse`` over the types of each count's distance to [count, count +
  optional_count]; ``r2`` = 1 - SSE / SST, SST about the mean of the true counts, and when
  SST is 0 (all true counts equal) 1.0 if SSE is 0 else 0.0 (scikit-learn's
  ``r2_score``); names matched per type as above and pooled over the types (micro
  precision, recall, F1).  Right when rmse is 0 and F1 is 1.

An unreadable answer (or none): wrong, ``why`` "unreadable: ..." (or "no response"),
``predicted`` None; a count then counts as 0 in the errors (``error`` is the distance of 0
to the range), names score 0 on precision, recall and F1 (also when the truth has none),
and an MTMF map counts 0 of each type with no names.  The reduce functions report the
number of such answers as ``unanswered`` (a count, as RLE counts its).

Reduce functions (rows of (sample, score) -> metrics):
``presence_metrics`` (accuracy; precision, recall and F1 macro over yes/no, the classes
present among the truths and readable answers as scikit-learn's ``average='macro'``
takes them, an unreadable answer a miss of its true class), ``count_metrics`` (RMSE, MAE
and r^2 pooled over the questions from ``error`` and ``truth``; r^2 nan for fewer than
two questions), ``names_metrics`` and ``mtmf_metrics`` (means over questions or maps).
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from cartoqa.records import (
    BooleanTruth,
    CountTruth,
    FeatureCount,
    FeatureTableTruth,
    NamesTruth,
    Sample,
    SampleScore,
)
from cartoqa.records.feature_types import FEATURE_TYPES

from .answers import MAX_LINES, last_json_value, normalise_name, says_no_names
from .hedges import alternative_at, blanked, is_negated, negated_spans, yes_no_hedge
from .metrics import mean as _mean
from .numeric import AnswerParseError, check_answer_length, final_answer_region, multiplier_at
from .verdicts import verdict as _score
from .verdicts import why_unreadable as _why_not

__all__ = [
    "FUZZY_THRESHOLD",
    "MAX_COUNT",
    "count_metrics",
    "count_score",
    "mtmf_metrics",
    "mtmf_score",
    "name_key",
    "names_metrics",
    "names_score",
    "parse_count",
    "parse_feature_map",
    "parse_names",
    "parse_presence",
    "presence_metrics",
    "presence_score",
]

Rows = Sequence[tuple[Sample, SampleScore]]
FeatureMap = dict[str, dict[str, Any]]

#: the largest count read; a larger one makes the answer unreadable
MAX_COUNT = 10_000
#: two names match in the fuzzy mode when ``difflib`` similarity of their keys is at least this
FUZZY_THRESHOLD = 0.85
#: the longest ``parsed`` text kept in a score (a hostile answer's names are cut there)
MAX_PARSED_CHARS = 10_000


def _shown(pred: FeatureMap) -> dict[str, Any]:
    """An MTMF answer as read, less the types it gives none of."""
    return {t: v for t, v in pred.items() if v["count"] or v["names"]}


def _parsed_text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_PARSED_CHARS else text[:MAX_PARSED_CHARS] + "..."


# ------------------------------------------------------------------ reading lines

# markdown: emphasis marks at a word's edges ("*Yes*", "**No**", "_Yes_", "***3***"), any
# "**" or "__", backticks and a heading's hashes; a bullet "* " and a name's inner "_" stay
_MARKDOWN = re.compile(r"(?<!\w)[*_]+(?=\w)|(?<=\w)[*_]+(?!\w)|\*\*|__|`|^#+\s*")
_BULLET = re.compile(r"^\s*(?:[-*•‣–—]|\d+[.)]|\(\d+\))\s+")
# a label before the answer: "Answer: No", "Final count: 3", "Number of banks: 4"
_LABEL = re.compile(r"^[^:\n]{1,40}?[:：]\s*")
_LEAD_WORDS = re.compile(
    r"^(?:(?:so|thus|therefore|hence)\s*,?\s*)?(?:the\s+|my\s+)?(?:final\s+)?"
    r"(?:answer|count|result)\s+is\s*[:\-]?\s*",
    re.IGNORECASE,
)
_YES_NO = re.compile(
    r"^\s*[\"'“‘(\[<]?\s*(yes|no|true|false)\s*(?:$|[.,;:!?()\[\]<>\"'“”‘’*\-\u2013\u2014])",
    re.IGNORECASE,
)
_YES_NO_LOOSE = re.compile(r"^\s*(yes|no)\s+(?!idea\b|clue\b|way\b|answer\b|sure\b)\w", re.I)


def _answer_lines(response: str) -> list[str]:
    """The region holding the answer (after the last FINAL ANSWER marker, ``<think>``
    blocks dropped) as its non-blank lines; bounded."""
    region = final_answer_region(check_answer_length(response))
    if not region.strip():
        raise AnswerParseError("the answer is empty")
    lines = region.splitlines()
    if len(lines) > MAX_LINES:
        raise AnswerParseError(f"{len(lines):,} lines, more than the {MAX_LINES:,} read")
    return [ln for ln in lines if ln.strip()]


def _clean(line: str) -> str:
    """A line without markdown marks and a bullet."""
    line = _MARKDOWN.sub("", line.strip())
    return _BULLET.sub("", line).strip()


def _candidates(line: str) -> list[str]:
    """A cleaned line, then the same without a leading label ("Answer:") or lead words."""
    line = _clean(line)
    out = [line]
    for pattern in (_LABEL, _LEAD_WORDS):
        rest = pattern.sub("", line, count=1).strip()
        if rest and rest != line:
            out.append(rest)
    return out


# ------------------------------------------------------------------ presence


def _yes_no(text: str) -> bool | None:
    m = _YES_NO.match(text)
    if m is None:
        return None
    return m.group(1).lower() in ("yes", "true")


def _not_hedged(line: str, got: bool) -> bool:
    if hedge := yes_no_hedge(_clean(line)):
        raise AnswerParseError(f"a hedged answer: {hedge!r} gives both; one is asked")
    return got


def parse_presence(sample: Sample, response: str) -> bool:
    """Yes (True) or no (False): the first line that reads as one, or a first line that
    begins with the bare word.  Raises ``AnswerParseError`` when there is none, or when
    that line gives both ("Yes or no", "Yes/No", "maybe yes, maybe no")."""
    lines = _answer_lines(response or "")
    for line in lines:
        for text in _candidates(line):
            got = _yes_no(text)
            if got is not None:
                return _not_hedged(line, got)
    m = _YES_NO_LOOSE.match(_clean(lines[0]))
    if m:
        return _not_hedged(lines[0], m.group(1).lower() == "yes")
    raise AnswerParseError(f"neither yes nor no: {lines[0][:80]!r}")


def presence_score(sample: Sample, response: str | None) -> SampleScore:
    """STMF presence: right when the answer is the truth."""
    truth = sample.ground_truth
    assert isinstance(truth, BooleanTruth)
    want = 1.0 if truth.value else 0.0
    try:
        got = parse_presence(sample, response or "")
    except AnswerParseError as exc:
        return _score(
            correct=False, values={"predicted": None, "truth": want}, why=_why_not(response, exc)
        )
    ok = got is truth.value
    return _score(
        correct=ok,
        values={"predicted": 1.0 if got else 0.0, "truth": want},
        parsed="yes" if got else "no",
        why=None if ok else "wrong",
    )


# ------------------------------------------------------------------ counting

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
#: the number words of one word, zero to twenty
_SMALL_WORDS = {w: i for i, w in enumerate(_NUMBER_WORDS.split(" "))}
_TENS = {
    w: 10 * i
    for i, w in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 2
    )
}
_ONES = {w: i for w, i in _SMALL_WORDS.items() if 1 <= i <= 9}
_WORDS = _SMALL_WORDS | _TENS | {"none": 0, "a single": 1}
# the default's number words: zero to ninety-nine, a compound written with a hyphen, a dash
# or a space ("twenty-one", "Twenty one", "twenty–one"), "none" and "a single"
_JOINER = r"[\s\-\u2010\u2011\u2013]+"
_WORD = (
    f"(?:(?:{'|'.join(_TENS)})(?:{_JOINER}(?:{'|'.join(_ONES)})\\b)?|a\\s+single|none|"
    + "|".join(sorted(_SMALL_WORDS, key=len, reverse=True))
    + ")"
)
_WHOLE_WORD = re.compile(_WORD, re.IGNORECASE)


def _word_value(word: str) -> int:
    """The count a number word gives ("twenty-one": 21, "none": 0, "a single": 1)."""
    parts = re.split(_JOINER, word.strip().lower())
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _ONES:
        return _TENS[parts[0]] + _ONES[parts[1]]
    return _WORDS[" ".join(parts)]


# "No banks": none; not "No idea"
_NO = r"(no)\s+(?!idea\b|clue\b|way\b|answer\b|sure\b|information\b|data\b)\w"
_DIGITS = r"[+\-\u2212]?(?:\d{1,3}(?:[,\u00a0\u2009\u202f]\d{3})+|\d+)(?:\.\d+)?(?![\d])"
_COUNT_START = re.compile(rf"^\s*[\"'(\[<]?\s*(?:({_DIGITS})|({_WORD})\b|{_NO})", re.IGNORECASE)
_COUNT_SAID = re.compile(
    r"\b(?:there\s+(?:are|is|were|was|appears?\s+to\s+be|seem\s+to\s+be)"
    r"|i\s+(?:can\s+)?(?:count(?:ed)?|see|saw|found|find|identif(?:y|ied)|spot(?:ted)?)"
    r"|(?:total|count|number)(?:\s+\w+){0,5}?\s*(?:is|:|=)"
    r"|(?:shows?|contains?|has|displays?))"
    r"\s+(?:a\s+total\s+of\s+|about\s+|approximately\s+|around\s+|roughly\s+|exactly\s+"
    rf"|only\s+|just\s+)?(?:({_DIGITS})|({_WORD})\b|{_NO})",
    re.IGNORECASE,
)
_ANY_DIGITS = re.compile(r"(?<![\w.,])" + _DIGITS)
# "There is a bank": one
_THERE_IS_A = re.compile(
    r"\bthere\s+is\s+(?:only\s+|just\s+)?an?\s+(?!few\b|couple\b|lot\b|number\b|total\b)\w",
    re.IGNORECASE,
)


def _count_value(digits: str | None, word: str | None, no: str | None, text: str) -> int:
    if digits is None:
        if no:
            return 0
        assert word is not None
        return _word_value(word)
    plain = re.sub(r"[,\u00a0\u2009\u202f]", "", digits).replace("\u2212", "-")
    if len(plain) > 12:
        raise AnswerParseError(f"the count {digits[:20]!r}... is too large")
    value = float(plain)
    if value < 0:
        raise AnswerParseError(f"a negative count: {digits!r}")
    if not value.is_integer():
        raise AnswerParseError(f"a count that is not an integer: {digits!r}")
    if value > MAX_COUNT:
        raise AnswerParseError(f"the count {digits!r} is larger than {MAX_COUNT:,}")
    return int(value)


def _with_exponent(text: str, start: int, digits: str) -> str:
    """The count's digits with the exponent written after them ("3e1", "4.0E+0"), as one
    number for ``_count_value`` to check: 3e1 is thirty, not three."""
    m = re.compile(r"[0-9][0-9,]*(?:\.[0-9]+)?[eE][+-]?[0-9]{1,4}\b").match(text, start)
    return m.group(0) if m else digits


def _decimal_follows(text: str, end: int) -> bool:
    return bool(re.match(r"[.,]\d", text[end : end + 2]))


_COUNT_TOKEN = re.compile(rf"(?<![\w.,])({_DIGITS})|\b({_WORD})\b", re.IGNORECASE)


def _without_negated_counts(line: str) -> tuple[str, str | None]:
    """``line`` with each count it negates made spaces ("not 2", "2 is wrong"), and the
    first one negated (None when none is)."""
    spans = negated_spans(line, _COUNT_TOKEN, lambda t, m: is_negated(t, m.start(), m.end()))
    if not spans:
        return line, None
    return blanked(line, spans), line[spans[0][0] : spans[0][1]]


def _token_count(text: str, pos: int) -> int | None:
    """The count written at ``pos`` (digits or a number word), None when there is none or
    it cannot be a count."""
    m = _COUNT_TOKEN.match(text, pos)
    if m is None:
        return None
    try:
        return _count_value(m.group(1), m.group(2), None, text)
    except AnswerParseError:
        return None


def _checked_count(text: str, start: int, end: int, value: int) -> int:
    """``value``, read at ``text[start:end]``, with a multiplier word after it applied ("2
    million"); ``AnswerParseError`` when another count is given beside it ("2 or 3",
    "maybe 4, maybe 5", "2-3", "between 2 and 3") or the product is no count."""
    factor, after = multiplier_at(text, end)
    if factor != 1.0:
        value = _count_value(f"{value * factor:.0f}", None, None, text)
        end = after
    alt = alternative_at(text, start, end)
    if alt is not None:
        other = _token_count(text, alt)
        if other is not None and other != value:
            raise AnswerParseError(
                f"a hedged answer: {text[start : alt + 20][:60]!r} gives two counts; one is asked"
            )
    return value


def parse_count(sample: Sample, response: str) -> int:
    """The count an answer gives (see the module's notes).  Raises ``AnswerParseError``
    when there is none, or when the count read is negative, not an integer or larger than
    ``MAX_COUNT``, or hedged ("2 or 3"); a negated count ("not 2", "2 is wrong") is passed
    over, and an answer whose only count is negated is unreadable."""
    lines = _answer_lines(response or "")
    negated = None
    for raw in lines:
        line, gone = _without_negated_counts(raw)
        negated = negated or gone
        for text in _candidates(line):
            m = _COUNT_START.match(text)
            if m is None:
                m = _COUNT_SAID.search(text)
            if m is None:
                if _THERE_IS_A.search(text):
                    return 1
                continue
            digits = m.group(1)
            if digits is not None and _decimal_follows(text, m.end(1)):
                raise AnswerParseError(f"a count that is not an integer: {text[:40]!r}")
            if digits is not None:
                digits = _with_exponent(text, m.start(1), digits)
            value = _count_value(digits, m.group(2), m.group(3), text)
            group = 1 if m.group(1) is not None else 2 if m.group(2) is not None else 3
            start = m.start(group)
            return _checked_count(text, start, start + len(digits or m.group(group)), value)
    first, gone = _without_negated_counts(_clean(lines[0]))
    numbers = list(_ANY_DIGITS.finditer(first[:1000]))
    if len(numbers) == 1:
        n = numbers[0]
        value = _count_value(n.group(0), None, None, first)
        return _checked_count(first, n.start(), n.end(), value)
    if negated or gone:
        raise AnswerParseError(
            f"a negated answer: {negated or gone!r} is ruled out and no count given"
        )
    raise AnswerParseError(f"no count in {lines[0][:80]!r}")


def count_score(sample: Sample, response: str | None) -> SampleScore:
    """STMF counting: right within [value, value + optional]; ``error`` is the distance to
    that range (of 0 for an unreadable answer)."""
    truth = sample.ground_truth
    assert isinstance(truth, CountTruth)
    try:
        got = parse_count(sample, response or "")
    except AnswerParseError as exc:
        return _score(
            correct=False,
            values={"predicted": None, "truth": float(truth.value), "error": truth.error(0)},
            why=_why_not(response, exc),
        )
    error = truth.error(got)
    return _score(
        correct=error == 0,
        values={"predicted": float(got), "truth": float(truth.value), "error": error},
        parsed=str(got),
        why=None if error == 0 else "wrong",
    )


# ------------------------------------------------------------------ names

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
_QUOTED = re.compile(r"^([\"'“‘«„])(.*)([\"'”’»“])\s*,?$", re.DOTALL)
_EMPTY_NAMES = {'""', "''", "“”", "‘’", "unnamed", "(unnamed)", "<unnamed>", "[unnamed]"}
_EMPTY_NAMES |= {"(no name)", "<no name>", "[no name]", "(empty)", "<empty>"}


def _name_item(line: str) -> str | None:
    """One line of a one-name-a-line answer as a name ("" unnamed), or None to skip it."""
    text = _clean(line)
    if text.endswith(":"):  # a heading: "Banks shown on the map:"
        return None
    if text.casefold() in _EMPTY_NAMES:
        return ""
    m = _QUOTED.match(text)
    if m:
        text = m.group(2).strip()
    elif text.endswith(","):
        text = text[:-1].rstrip()
    return "" if text.casefold() in _EMPTY_NAMES else text


def _json_name(item: Any) -> str:
    if item is None:
        return ""
    if isinstance(item, str):
        return "" if item.strip().casefold() in _EMPTY_NAMES else item
    if isinstance(item, bool):
        raise AnswerParseError(f"a name that is {item!r}")
    if isinstance(item, int | float):
        return json.dumps(item)
    if isinstance(item, dict) and isinstance(item.get("name"), (str, type(None))):
        return str(item.get("name") or "")
    raise AnswerParseError(f"a name that is not text: {json.dumps(item)[:60]}")


def parse_names(sample: Sample, response: str) -> list[str]:
    """The names an answer lists ("" for an unnamed feature), in order, as written (not
    normalised).  Raises ``AnswerParseError`` when the answer is empty or unbounded."""
    region = final_answer_region(check_answer_length(response or ""))
    fences = _FENCE.findall(region)
    if fences:
        region = fences[-1]
    lines = region.strip().splitlines()
    if len(lines) > MAX_LINES:
        raise AnswerParseError(f"{len(lines):,} lines, more than the {MAX_LINES:,} read")
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        if fences:
            return []
        raise AnswerParseError("the answer is empty")
    whole = region.strip()
    if any(ln.lstrip().startswith("[") for ln in lines) and (
        '"' in region or (whole.startswith("[") and whole.endswith("]"))
    ):
        try:
            value = last_json_value(region, "[")
        except AnswerParseError:
            if whole.startswith("["):  # a JSON answer, nested too deep or too long
                raise
            value = None
        if isinstance(value, list):
            return [_json_name(v) for v in value]
    if says_no_names(_clean(lines[0])):
        return []
    names = [n for n in (_name_item(ln) for ln in lines) if n is not None]
    if len(names) == 1 and says_no_names(names[0]):
        return []
    return names


_STRAIGHT = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
_AROUND = " \t\"'`.,;:!?*_"
_SPACES = re.compile(r"\s+")


def name_key(name: str) -> str:
    """A name as names are compared: ``normalise_name`` (NFC, casefold, spaces), curly
    quotes and dashes made straight, surrounding quotes and punctuation stripped."""
    text = normalise_name(unicodedata.normalize("NFC", name).translate(_STRAIGHT))
    return _SPACES.sub(" ", text.strip(_AROUND))


def _keys(names: Iterable[str]) -> Counter[str]:
    """Names as a multiset of keys, empty ones dropped."""
    return Counter(k for k in (name_key(n) for n in names) if k)


def _similar(a: str, b: str) -> float:
    la, lb = len(a), len(b)
    if 2 * min(la, lb) / (la + lb) < FUZZY_THRESHOLD:  # an upper bound of the ratio
        return 0.0
    m = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if m.real_quick_ratio() < FUZZY_THRESHOLD or m.quick_ratio() < FUZZY_THRESHOLD:
        return 0.0
    return m.ratio()


def _take(pred: Counter[str], want: Counter[str], fuzzy: bool) -> int:
    """Match ``pred`` items one to one to ``want`` items (exactly, then in the fuzzy mode the
    most similar pairs first); both counters lose what is matched.  The number matched."""
    matched = 0
    for key in list(pred):
        n = min(pred[key], want.get(key, 0))
        if n:
            matched += n
            pred[key] -= n
            want[key] -= n
    pred_left, want_left = +pred, +want
    pred.clear()
    pred.update(pred_left)
    want.clear()
    want.update(want_left)
    if not fuzzy or not pred or not want:
        return matched
    pairs = sorted(
        ((r, p, w) for p in pred for w in want if (r := _similar(p, w)) >= FUZZY_THRESHOLD),
        key=lambda x: (-x[0], x[1], x[2]),
    )
    for _, p, w in pairs:
        n = min(pred[p], want[w])
        if n:
            matched += n
            pred[p] -= n
            want[w] -= n
    return matched


def _match_counts(
    pred: Counter[str], required: Counter[str], optional: Counter[str], fuzzy: bool
) -> tuple[int, int, int]:
    """(matched, predicted items counted in precision, required items)."""
    pred, required, optional = Counter(pred), Counter(required), Counter(optional)
    n_pred, n_required = sum(pred.values()), sum(required.values())
    matched = _take(pred, required, fuzzy)
    optional_hits = _take(pred, optional, fuzzy)
    return matched, n_pred - optional_hits, n_required


def _f1(precision: float, recall: float) -> float:
    """2PR / (P + R), 0 when P + R is 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _prf(matched: int, counted: int, required: int) -> tuple[float, float, float]:
    """Precision, recall and F1 with this module's edge cases."""
    if required == 0 and counted == 0:
        return 1.0, 1.0, 1.0
    precision = matched / counted if counted else 0.0  # nothing listed, something to list
    recall = matched / required if required else 1.0
    return precision, recall, _f1(precision, recall)


def names_score(sample: Sample, response: str | None) -> SampleScore:
    """STMF name listing: exact precision, recall and F1 (multiset; optional names neither
    required nor penalised) and the fuzzy ones beside them; right when the exact F1 is 1."""
    truth = sample.ground_truth
    assert isinstance(truth, NamesTruth)
    required, optional = _keys(truth.names), _keys(truth.optional)
    n_true = float(sum(required.values()))
    try:
        got = parse_names(sample, response or "")
    except AnswerParseError as exc:
        zero = dict.fromkeys(
            ("precision", "recall", "f1", "fuzzy_precision", "fuzzy_recall", "fuzzy_f1"), 0.0
        )
        return _score(
            correct=False,
            values={"predicted": None, "truth": n_true, **zero},
            why=_why_not(response, exc),
        )
    pred = _keys(got)
    p, r, f = _prf(*_match_counts(pred, required, optional, fuzzy=False))
    fp, fr, ff = _prf(*_match_counts(pred, required, optional, fuzzy=True))
    ok = f == 1.0
    return _score(
        correct=ok,
        values={
            "predicted": float(sum(pred.values())),
            "truth": n_true,
            "precision": p,
            "recall": r,
            "f1": f,
            "fuzzy_precision": fp,
            "fuzzy_recall": fr,
            "fuzzy_f1": ff,
        },
        parsed=_parsed_text(got),
        why=None if ok else "wrong",
    )


# ------------------------------------------------------------------ MTMF

_PAPER_NAMES = {
    "drug store/pharmacy": "pharmacy",
    "drug store": "pharmacy",
    "drugstore": "pharmacy",
    "fast food store": "fast_food",
    "fast food": "fast_food",
    "cafe": "coffee_shop",
    "atm": "atm",
    "cash point": "atm",
    "park area": "park",
    "fitness center": "fitness_centre",
    "gym": "fitness_centre",
    "clothing store": "clothes_shop",
    "clothes store": "clothes_shop",
    "beauty salon": "beauty_shop",
    "stream": "stream",
    "bus station": "bus_stop",
    "gas station": "gas_station",
    "petrol station": "gas_station",
    "fuel station": "gas_station",
    "car parking lot": "car_parking",
    "parking lot": "car_parking",
    "parking": "car_parking",
    "toilet": "public_toilet",
    "public restroom": "public_toilet",
}


def _type_word(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", unicodedata.normalize("NFC", key).casefold())


def _type_index(extra: Iterable[str]) -> dict[str, str]:
    index: dict[str, str] = {}
    for name, ft in FEATURE_TYPES.items():
        index.setdefault(_type_word(name), name)
        index.setdefault(_type_word(ft.label), name)
    for name, key in _PAPER_NAMES.items():
        index.setdefault(_type_word(name), key)
    for key in extra:
        index.setdefault(_type_word(key), key)
    return index


_INDEX = _type_index(())


def _type_of(key: Any, index: dict[str, str]) -> str | None:
    word = _type_word(str(key))
    for w in (
        word,
        word[:-1] if word.endswith("s") else "",
        word[:-2] if word.endswith("es") else "",
    ):
        if w and w in index:
            return index[w]
    return None


def _as_count(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise AnswerParseError(f"the count of {where} is {value!r}")
    if isinstance(value, int):
        number = float(value)
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str):
        text = value.strip().lower()
        if _WHOLE_WORD.fullmatch(text):
            return _word_value(text)
        try:
            number = float(text.replace(",", ""))
        except ValueError:
            raise AnswerParseError(f"the count of {where} is {value[:40]!r}") from None
    else:
        raise AnswerParseError(f"the count of {where} is not a number")
    if not math.isfinite(number) or number < 0 or not number.is_integer() or number > MAX_COUNT:
        raise AnswerParseError(f"the count of {where} is {value!r:.40}: not a count")
    return int(number)


def _as_names(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [] if not value.strip() or says_no_names(value) else [value]
    if isinstance(value, list):
        return [_json_name(v) for v in value]
    raise AnswerParseError(f"the names of {where} are not a list")


def _entry(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, dict):
        lowered = {str(k).strip().lower(): v for k, v in value.items()}
        names = _as_names(lowered.get("names", lowered.get("name")), where)
        count = _as_count(lowered["count"], where) if "count" in lowered else len(names)
        return {"count": count, "names": names}
    if isinstance(value, list):
        names = _as_names(value, where)
        return {"count": len(names), "names": names}
    return {"count": _as_count(value, where), "names": []}


def _table_types(sample: Sample) -> list[str]:
    truth = sample.ground_truth
    extra = list(truth.features) if isinstance(truth, FeatureTableTruth) else []
    return list(FEATURE_TYPES) + [k for k in extra if k not in FEATURE_TYPES]


def parse_feature_map(sample: Sample, response: str) -> FeatureMap:
    """Type key -> ``{"count": int, "names": [str]}`` for every type of ``FEATURE_TYPES``
    (and any other type of the sample's truth), read from the answer's last JSON object
    (see the module's notes).  Raises ``AnswerParseError`` when there is no JSON object,
    when none of its keys is a type (an empty object is no feature at all), or when a
    type's count or names are unusable."""
    region = final_answer_region(check_answer_length(response or ""))
    if not region.strip():
        raise AnswerParseError("the answer is empty")
    table = last_json_value(region, "{")
    if not isinstance(table, dict):
        raise AnswerParseError("expected a JSON object")
    types = _table_types(sample)
    index = _INDEX if len(types) == len(FEATURE_TYPES) else _type_index(types)
    matched = {k: t for k in table if (t := _type_of(k, index)) is not None}
    if table and not matched:
        inner = [v for v in table.values() if isinstance(v, dict)]
        if len(inner) == 1 and any(_type_of(k, index) for k in inner[0]):
            table = inner[0]
            matched = {k: t for k in table if (t := _type_of(k, index)) is not None}
    if table and not matched:
        raise AnswerParseError(f"no map-feature type among the keys {list(table)[:5]!r}")
    out: FeatureMap = {t: {"count": 0, "names": []} for t in types}
    seen: set[str] = set()
    for key, t in matched.items():
        if t in seen:
            continue
        seen.add(t)
        out[t] = _entry(table[key], t)
    return out


def _truth_table(sample: Sample) -> tuple[list[str], dict[str, FeatureCount]]:
    truth = sample.ground_truth
    assert isinstance(truth, FeatureTableTruth)
    types = _table_types(sample)
    return types, {t: truth.features.get(t, FeatureCount(count=0)) for t in types}


def _r2(sse: float, truths: Sequence[float]) -> float:
    """1 - SSE / SST, SST about the truths' mean; 1.0 or 0.0 when SST is 0 (as
    ``sklearn.metrics.r2_score`` gives); nan for fewer than two truths."""
    if len(truths) < 2:
        return math.nan
    centre = sum(truths) / len(truths)
    sst = sum((t - centre) * (t - centre) for t in truths)
    if sst == 0:
        return 1.0 if sse == 0 else 0.0
    return 1 - sse / sst


def _range_error(got: int, count: int, optional: int) -> float:
    if got < count:
        return float(count - got)
    return float(max(0, got - (count + optional)))


def _mtmf_values(
    types: list[str], truth: dict[str, FeatureCount], pred: FeatureMap
) -> dict[str, float | None]:
    trues = [float(truth[t].count) for t in types]
    errors = [
        _range_error(pred[t]["count"], truth[t].count, truth[t].optional_count) for t in types
    ]
    sse = sum(e * e for e in errors)
    values: dict[str, float | None] = {
        "rmse": math.sqrt(sse / len(types)),
        "r2": _r2(sse, trues),
    }
    matched = counted = required = 0
    for t in types:
        m, c, q = _match_counts(
            _keys(pred[t]["names"]),
            _keys(truth[t].names),
            _keys(truth[t].optional_names),
            fuzzy=False,
        )
        matched, counted, required = matched + m, counted + c, required + q
    p, r, _ = _prf(matched, counted, required)
    values |= {"precision": p, "recall": r, "f1": _f1(p, r)}
    values["predicted"] = float(sum(pred[t]["count"] for t in types))
    values["truth"] = float(sum(trues))
    return values


def mtmf_score(sample: Sample, response: str | None) -> SampleScore:
    """MTMF, one map: RMSE and r^2 of the counts (a count in [count, count + optional_count]
    is exact), micro precision, recall and F1 of the names pooled over the types; right
    when RMSE is 0 and F1 is 1."""
    types, truth = _truth_table(sample)
    try:
        pred = parse_feature_map(sample, response or "")
    except AnswerParseError as exc:
        empty: FeatureMap = {t: {"count": 0, "names": []} for t in types}
        values = _mtmf_values(types, truth, empty)
        values |= {"predicted": None, "precision": 0.0, "recall": 0.0, "f1": 0.0}
        return _score(correct=False, values=values, why=_why_not(response, exc))
    values = _mtmf_values(types, truth, pred)
    ok = values["rmse"] == 0 and values["f1"] == 1.0
    return _score(
        correct=ok, values=values, parsed=_parsed_text(_shown(pred)), why=None if ok else "wrong"
    )


# ------------------------------------------------------------------ reduce


def _unanswered(rows: Rows) -> int:
    """Answers that could not be read (counted apart from wrong ones, as RLE counts its)."""
    return sum(r[1].values.get("predicted") is None for r in rows)


def _mean_of(rows: Rows, key: str) -> float:
    return _mean([float(r[1].values.get(key) or 0.0) for r in rows])


def presence_metrics(rows: Rows) -> dict[str, float]:
    """n, accuracy, macro precision, recall and F1 over yes and no (the classes present
    among the truths and readable answers, as ``sklearn``'s ``average='macro'``; an
    unreadable answer is a miss of its true class and nobody's false positive), and the
    number unanswered."""
    pairs = [(r[1].values.get("predicted"), r[1].values.get("truth")) for r in rows]
    classes = sorted(
        {t for _, t in pairs if t is not None} | {p for p, _ in pairs if p is not None}
    )
    per_class = []
    for c in classes:
        tp = sum(1 for p, t in pairs if p == c and t == c)
        fp = sum(1 for p, t in pairs if p == c and t != c)
        fn = sum(1 for p, t in pairs if p != c and t == c)
        per_class.append(
            (
                tp / (tp + fp) if tp + fp else 0.0,
                tp / (tp + fn) if tp + fn else 0.0,
                2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
            )
        )
    out = {
        "n": len(rows),
        "accuracy": _mean([float(bool(r[1].correct)) for r in rows]),
        "precision": _mean([c[0] for c in per_class]),
        "recall": _mean([c[1] for c in per_class]),
        "f1": _mean([c[2] for c in per_class]),
        "unanswered": _unanswered(rows),
    }
    return out


def count_metrics(rows: Rows) -> dict[str, float]:
    """n, RMSE, MAE and r^2 pooled over the questions (the error: each score's ``error``,
    an unreadable answer's that of 0; r^2 = 1 - SSE / SST about the mean true value, 1.0 or
    0.0 when SST is 0, nan for fewer than two), and the number unanswered."""
    errors = [float(r[1].values.get("error") or 0.0) for r in rows]
    truths = [float(r[1].values.get("truth") or 0.0) for r in rows]
    sse = sum(e * e for e in errors)
    out = {
        "n": len(rows),
        "rmse": math.sqrt(sse / len(rows)) if rows else math.nan,
        "mae": _mean([abs(e) for e in errors]),
        "r2": _r2(sse, truths),
        "unanswered": _unanswered(rows),
    }
    return out


def names_metrics(rows: Rows) -> dict[str, float]:
    """n, the means over questions of precision, recall, F1 and their fuzzy forms (when the
    scores carry them), and the number unanswered."""
    out: dict[str, float] = {"n": len(rows)}
    for key in ("precision", "recall", "f1", "fuzzy_precision", "fuzzy_recall", "fuzzy_f1"):
        if not rows or any(key in r[1].values for r in rows):
            out[key] = _mean_of(rows, key)
    out["unanswered"] = _unanswered(rows)
    return out


def mtmf_metrics(rows: Rows) -> dict[str, float]:
    """n, the means over maps of RMSE, r^2, precision, recall and F1, and the number
    unanswered."""
    out: dict[str, float] = {"n": len(rows)}
    for key in ("rmse", "r2", "precision", "recall", "f1"):
        out[key] = _mean([float(v) for r in rows if (v := r[1].values.get(key)) is not None])
    out["unanswered"] = _unanswered(rows)
    return out
