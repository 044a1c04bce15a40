"""Answers read back and matched exactly, by ground-truth kind.

Each truth writes itself as an answer (``GroundTruth.answer_text()``, in
``cartoqa.records``; a task's spec may write its own, ``TaskSpec.answer_format``;
the ``oracle`` baseline answers with them); ``parse_answer`` reads a model's
free text back into a value of the same kind; and ``answer_matches`` says
whether a parsed answer equals the truth.  The three agree by construction
and by test, so an oracle run scores 100% end to end.
Task families add their own metrics (SR^2, RMSE, F1, tolerance accuracy) on
top of the parsed values.

Formats, by ground-truth kind (a task's own scorer may read its prompt's own
layout instead: RLE's first line is the number; names are also read one a line):

===============  =====================================================
number           ``FINAL ANSWER: 1234.5 km``
boolean          ``FINAL ANSWER: yes``
count            ``3`` (a count; exact from ``value`` to ``value + optional``)
choice           ``FINAL ANSWER: B``
text             ``FINAL ANSWER: Paris``
coordinate       ``FINAL ANSWER: 48.856600, 2.352200``
values           ``FINAL ANSWER: {"easting": 448251.9, ...}``
names            a JSON list, ``["Main Street", ""]``
feature_table    a JSON object, ``{"bank": {"count": 2, "names": [...]}}``
road_pair        ``{"road_1": "...", "road_2": "..."}``
route            ``["blue", "turn left", "Main Street", ..., "red"]``
indices          ``FINAL ANSWER: [0, 3, 7]``
grouping         ``FINAL ANSWER: Europe: Paris, ...; Asia: ...`` or a JSON object
===============  =====================================================

Every answer is read without its end-of-turn tokens ("<|eot_id|>", "<|im_end|>",
"</s>", ...: ``evaluators.numeric.answer_body``, the one place they are removed).
Reading is bounded and linear in the answer's length, whatever the answer
holds; past a limit the answer is unreadable (wrong, with the reason), never
an exception or a hang: answers over ``MAX_ANSWER_CHARS`` (1,000,000)
characters; JSON nested deeper than ``MAX_JSON_DEPTH`` (32), an answer with
more than ``MAX_JSON_MARKS`` (100,000) brackets, braces and double quotes, a
JSON value of more than ``MAX_JSON_ITEMS`` (10,000) items; one-name-a-line
answers of more than ``MAX_LINES`` (10,000) lines; numbers not finite or
above ``MAX_MAGNITUDE`` (1e100) in size, in JSON ("1e400", "NaN") or text;
coordinates over ``cartoqa.geodesy``'s 1,000 characters; SRN routes of more
than ``evaluators.navigation.MAX_ROUTE_STEPS`` (10,000) steps.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cartoqa.geodesy import parse_coordinate
from cartoqa.records import (
    ChoiceTruth,
    CoordinateTruth,
    FeatureCount,
    FeatureTableTruth,
    GroupingTruth,
    NumberTruth,
    RoadPairTruth,
    Sample,
    TextTruth,
    ValuesTruth,
)

from .hedges import (
    WINDOW,
    alternative_at,
    blanked,
    is_negated,
    negated_spans,
    rejected_after,
    yes_no_hedge,
)
from .numeric import (
    UNITS,
    AnswerParseError,
    answer_body,
    check_answer_length,
    checked_number,
    final_answer_region,
    final_answer_text,
    in_unit,
    parse_number,
)

__all__ = [
    "CODECS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_ITEMS",
    "MAX_JSON_MARKS",
    "MAX_LINES",
    "Codec",
    "answer_matches",
    "last_json_value",
    "letters_hedge",
    "normalise_name",
    "parse_answer",
    "parse_choice",
    "parse_sample_answer",
    "parse_yes_no",
    "read_grouping",
    "says_no_names",
    "score_response",
    "without_negated_letters",
]


# ------------------------------------------------------------------ parsing

_YES = {"yes", "true", "present"}
_NO = {"no", "false", "absent"}
# the word alone, or followed by punctuation, a bracket or a dash: "No.", "yes, two",
# "Yes (detour 1.3%)", "No – it is off the route"; not "no idea"
_YES_NO = re.compile(
    r"^\s*(yes|no|true|false|present|absent)\s*(?:$|[.,;:!()\[\]<>\"'*\-\u2013\u2014])"
)
_LETTER = re.compile(r"^\(?\s*(?:option\s+)?([A-Za-z])\s*(?:[).:\]]|$|\s)", re.IGNORECASE)
# marks a model wraps its answer in: [D], <D>, *D*, _D_, "D", `D`, \boxed{D} (an underscore
# only at a word's edge: markdown emphasis, not the "_" inside a word)
_WRAPPER = re.compile(r"\\boxed\s*\{|\\text\s*\{|[\[\]<>{}*\"'`$]|(?<!\w)_+|_+(?!\w)")
# words before the answer: "The answer is D", "Answer: D", "I think D", "My choice: (B)"
_LEAD = re.compile(
    r"^\s*(?:(?:so|thus|therefore|hence)\s*,?\s*)?(?:i\s+(?:think|believe|would\s+say|choose|pick)"
    r"|(?:the\s+|my\s+)?(?:final\s+|correct\s+|best\s+)?(?:answer|choice|option)"
    r"(?:\s+is|\s*:)?|it\s+is|it's)\s*[:\-]?\s*",
    re.IGNORECASE,
)
_LONE_LETTER = re.compile(r"(?<![A-Za-z'])([A-Z])(?![A-Za-z'])")


def _unwrapped(text: str) -> str:
    """The answer text with wrapping marks ([D], <yes>, *D*, "Yes", \\boxed{D}) made spaces."""
    return _WRAPPER.sub(" ", text).strip()


def parse_choice(text: str, options: Any = None) -> str:
    """The option letter a final-answer text gives: "B", "(B)", "[D]", "<D>", "*D*", '"D"',
    "\\boxed{D}", "The answer is D", "Answer: D", "Option B) south".  Given the sample's
    ``options``, a letter that is not one ("I" in "I think D") is passed over for the first
    standalone capital that is, and an answer that writes one option's text instead of its
    letter ("West", "[0, 3, 7]") is read as that option.  A letter the text negates ("not E",
    "E is wrong", "A and E are incorrect") is passed over ("E is wrong; it is A" gives A);
    two options given as alternatives ("A or B", "A, B", "A/B", "maybe A, maybe B") make the
    answer hedged.  Raises ``AnswerParseError`` when there is none, or it is hedged."""
    letters = {str(k).upper() for k in options} if options else None
    body, negated = without_negated_letters(_unwrapped(text), letters)
    if hedge := letters_hedge(body, letters):
        raise AnswerParseError(f"a hedged answer: {hedge!r} gives two options; one is asked")
    body = _LEAD.sub("", body, count=1)
    m = _LETTER.match(body)
    if m and (letters is None or m.group(1).upper() in letters):
        return m.group(1).upper()
    if letters is not None:
        for lone in _LONE_LETTER.finditer(body[:1000]):
            if lone.group(1) in letters:
                return lone.group(1)
        # the option written out instead of its letter: "West", "[0, 3, 7]", "North-East"
        written = _option_key(body[:1000])
        hits = [str(k).upper() for k, v in options.items() if _option_key(str(v)) == written]
        if written and len(hits) == 1:
            return hits[0]
    if negated:
        raise AnswerParseError(f"a negated answer: {negated} is ruled out and no option given")
    raise AnswerParseError(f"no option letter in {text[:80]!r}")


# more option letters joined to one: "A and E (are wrong)", "A, B or E"
_LETTER_LIST = re.compile(r"(?:\s*(?:,|and\b|or\b|&|/)\s*\(?[A-Z]\)?(?![A-Za-z'’]))*")
# the second of two alternatives: a letter standing alone, then the end, a mark, or or/and
_SECOND = re.compile(r"([A-Z])[)\]>*\"'`]*(?=\s*(?:$|[.,;:!?)\]]|(?:or|and)\b))")


def without_negated_letters(text: str, letters: set[str] | None) -> tuple[str, str | None]:
    """``text`` with each capital letter (of ``letters``, when given) that it negates made a
    space ("not E", "E is wrong", "A and E are incorrect"), and the first letter negated
    (None when none is).  Linear in the text's length."""

    def negated(text: str, m: re.Match[str]) -> bool:
        if letters is not None and m.group(1) not in letters:
            return False
        listed = _LETTER_LIST.match(text, m.end(), min(len(text), m.end() + WINDOW))
        end = listed.end() if listed else m.end()
        return is_negated(text, m.start(), m.end()) or rejected_after(text, end)

    spans = negated_spans(text, _LONE_LETTER, negated)
    if not spans:
        return text, None
    return blanked(text, spans), text[spans[0][0] : spans[0][1]]


def letters_hedge(text: str, letters: set[str] | None) -> str | None:
    """Two different option letters given as alternatives ("A or B", "A, B", "A/B", "A and
    B", "maybe A, maybe B"), as written, or None.  The first 1,000 characters are read."""
    head = text[:1000]
    for m in _LONE_LETTER.finditer(head):
        if letters is not None and m.group(1) not in letters:
            continue
        alt = alternative_at(head, m.start(), m.end(), and_ok=True)
        if alt is None:
            continue
        n = _SECOND.match(head, alt)
        if n and n.group(1) != m.group(1) and (letters is None or n.group(1) in letters):
            return head[m.start() : n.end()]
    return None


def _option_key(text: str) -> str:
    """An option's text for comparing: case, spaces, brackets and punctuation aside."""
    return re.sub(r"[^\w,]+", "", _unwrapped(text).casefold()).strip(",")


def parse_yes_no(text: str) -> bool:
    """Yes or no from a final-answer text: "yes", "No.", "[Yes]", "<yes>", '"Yes"', "*Yes*",
    "_No_",
    "Yes (detour 1.3%)", "No – ..."; "no idea" and "not sure" are neither, and "yes or no",
    "Yes/No", "maybe yes, maybe no" are hedged (``AnswerParseError``)."""
    if hedge := yes_no_hedge(text):
        raise AnswerParseError(f"a hedged answer: {hedge!r} gives both; one is asked")
    m = _YES_NO.match(_unwrapped(text).lower())
    if m and m.group(1) in _YES:
        return True
    if m and m.group(1) in _NO:
        return False
    raise AnswerParseError(f"neither yes nor no: {text[:80]!r}")


#: JSON nested deeper than this is unreadable (the answers asked for nest at most 3 deep)
MAX_JSON_DEPTH = 32
#: an answer with more JSON brackets, braces and double quotes than this is unreadable as JSON
MAX_JSON_MARKS = 100_000
#: a JSON value with more commas than this (about as many items) is unreadable
MAX_JSON_ITEMS = 10_000

_MARK = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)  # after an opening quote
_CLOSER = {"[": "]", "{": "}"}


def _json_number(text: str) -> float:
    return checked_number(float(text), text)


def _json_int(text: str) -> int | float:
    if len(text) > 101:  # more digits than MAX_MAGNITUDE has, and int() of them is slow
        raise AnswerParseError(f"the number {text[:20]!r}... ({len(text)} digits) is too large")
    value = int(text)
    checked_number(float(value), text)
    return value


def _json_constant(name: str) -> float:
    raise AnswerParseError(f"{name} is not a usable number")


_DECODER = json.JSONDecoder(
    parse_float=_json_number, parse_int=_json_int, parse_constant=_json_constant
)


class _Brackets:
    """Where the bracket opened at each position closes, read the way JSON reads it (brackets
    inside strings skipped), and how deep the value there nests; found in one pass from each
    opener not yet reached, so the whole text costs time linear in its length."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.end: dict[int, int] = {}
        """opener position -> position after its closer, or -1 where it never closes"""
        self.depth: dict[int, int] = {}
        """opener position -> how deep the value there nests (1: holds no brackets)"""

    def scan(self, i: int) -> None:
        text, end, depth = self.text, self.end, self.depth
        stack, pos = [i], i + 1
        depth[i] = 1
        while stack:
            m = _MARK.search(text, pos)
            if m is None:
                break
            c, p = m.group(), m.start()
            if c == '"':
                s = _STRING_REST.match(text, p + 1)
                if s is None:  # a string that never ends
                    break
                pos = s.end()
                continue
            if c in _CLOSER:
                if p in end:  # read from here before: the same closer, or none
                    if end[p] < 0:
                        break
                    pos = end[p]
                    self._nested(stack[-1], depth[p])
                    continue
                stack.append(p)
                depth[p] = 1
                pos = p + 1
                continue
            top = stack.pop()
            if _CLOSER[text[top]] != c:  # "[ }": neither this value nor those around it closes
                stack.append(top)
                break
            end[top] = p + 1
            if stack:
                self._nested(stack[-1], depth[top])
            pos = p + 1
        for p in stack:
            end[p] = -1

    def _nested(self, outer: int, inner_depth: int) -> None:
        if inner_depth + 1 > self.depth[outer]:
            self.depth[outer] = inner_depth + 1


def last_json_value(text: str, opener: str) -> Any:
    """The last top-level JSON value starting with ``opener`` ("[" or "{") in ``text``
    (values nested inside another are skipped over, so a table's inner objects never win).

    Linear in the text's length.  Raises ``AnswerParseError`` when there is none, when the
    text is too long or holds more than ``MAX_JSON_MARKS`` brackets and quotes, or when the
    last value nests deeper than ``MAX_JSON_DEPTH``, has more than ``MAX_JSON_ITEMS`` items
    or holds a number that is not finite or absurdly large ("1e400", "NaN").
    """
    closer = _CLOSER[opener]
    check_answer_length(text)
    marks = sum(text.count(c) for c in '"[]{}')
    if marks > MAX_JSON_MARKS:
        raise AnswerParseError(
            f"too many brackets and quotes to read as JSON: {marks:,}, the limit is "
            f"{MAX_JSON_MARKS:,} (the answer begins {text[:40]!r})"
        )
    brackets = _Brackets(text)
    found: list[Any] = []  # the last value read, or the error that made it unusable
    i = text.find(opener)
    while i >= 0:
        if i not in brackets.end:
            brackets.scan(i)
        end = brackets.end[i]
        if end > 0:
            if brackets.depth[i] > MAX_JSON_DEPTH:
                found = [AnswerParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")]
                i = text.find(opener, end)
                continue
            if text.count(",", i, end) > MAX_JSON_ITEMS:
                found = [AnswerParseError(f"a JSON value of more than {MAX_JSON_ITEMS:,} items")]
                i = text.find(opener, end)
                continue
            try:
                value = _DECODER.decode(text[i:end])
            except AnswerParseError as exc:  # valid JSON, but a number no metric can use
                found = [exc]
                i = text.find(opener, end)
                continue
            except ValueError:  # not JSON (a JSONDecodeError): try the next opener inside
                pass
            else:
                found = [value]
                i = text.find(opener, end)
                continue
        i = text.find(opener, i + 1)
    if found:
        if isinstance(found[0], AnswerParseError):
            raise found[0]
        return found[0]
    # a bare bracket list as CartoMapQA's prompt writes it: [blue, turn left, Main St, red]
    if opener == "[":
        m = re.findall(r"\[([^\[\]]*)\]", text)
        if m:
            if m[-1].count(",") > MAX_JSON_ITEMS:
                raise AnswerParseError(f"a list of more than {MAX_JSON_ITEMS:,} items")
            return [p.strip().strip("'\"") for p in m[-1].split(",")]
    raise AnswerParseError(f"no JSON {opener}...{closer} in {text[:80]!r}")


def _strip_bullet(line: str) -> str:
    line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
    return "" if line in ('""', "''") else line


#: a one-name-a-line answer of more lines than this is unreadable
MAX_LINES = 10_000


_SEEN = (
    r"(?:shown|visible|named|labell?ed|present|displayed|found|identified|listed|readable"
    r"|legible|seen|given|marked)"
)
# a statement that nothing is named, shown or found, in the forms models write it: "None",
# "None found", "Nothing is labelled", "No names are visible", "No named banks were found",
# "There are no ...", "The map shows no ...", "I am unable to identify any names", "I can't
# see any names", "I don't see any names"; not a name that begins so ("None Such Café")
_NO_NAMES = re.compile(
    r"^(?:none|nothing|n/?a|no names?|\[\]"
    rf"|(?:none|nothing)(?:\s+(?:is|are|was|were|could\s+be|can\s+be))?\s+{_SEEN}\b.*"
    rf"|no\s+(?:\w+\s+){{0,4}}(?:are|is|were|was|could\s+be|can\s+be)\s+{_SEEN}\b.*"
    r"|there\s+(?:are|is|were|was)\s+no\b.*"
    r"|no\s+(?:named\s+)?\w+(?:\s+\w+)?\s+(?:on|in)\s+(?:the|this)\s+map.*"
    r"|the\s+map\s+(?:shows|has|contains|displays|lists|does\s*n[o'’]t\s+\w+)\s+(?:no|any)\b.*"
    r"|(?:sorry,?\s+)?(?:i(?:\s+am|['’]m|\s+was)\s+(?:unable|not\s+able)|unable"
    r"|i\s+(?:cannot|can\s+not|can['’]t|could\s*not|couldn['’]t|do\s+not|don['’]t|did\s+not"
    r"|didn['’]t))\b.*\b(?:any|names?|named|labels?|labell?ed)\b.*"
    r")[.!]?$",
    re.IGNORECASE,
)


def says_no_names(line: str) -> bool:
    """Whether a line of a names answer (markdown and bullets removed) states that nothing is
    named, shown or found: "None", "None found", "No names are visible", "There are no
    ...", "The map shows no ...", "I am unable to identify any names", "I don't see any
    names"; a name that begins so ("None Such Café") does not, nor a heading ending in ":"
    (names follow it).  The one rule every names reader keeps."""
    line = line.strip()
    return not line.endswith(":") and _NO_NAMES.match(line) is not None


def _lines(text: str) -> list[str]:
    lines = text.strip().splitlines()
    if len(lines) > MAX_LINES:
        raise AnswerParseError(f"{len(lines):,} lines, more than the {MAX_LINES:,} read")
    lines = [ln for ln in lines if ln.strip()]
    if len(lines) == 1 and says_no_names(lines[0].replace("**", "")):
        return []
    return [_strip_bullet(ln) for ln in lines]


def parse_answer(kind: str, response: str, *, options: Any = None) -> Any:
    """Read a value of ground-truth ``kind`` out of a model's response (``options``: a choice
    sample's option letters, so that "I think D" reads as D), by the kind's codec, from
    ``evaluators.numeric.answer_body`` (end-of-turn tokens removed).

    Raises ``AnswerParseError`` when the response holds no such value, or is longer than
    ``MAX_ANSWER_CHARS``.
    """
    response = answer_body(response or "")
    if not response.strip():
        raise AnswerParseError("the answer is empty")
    codec = CODECS.get(kind)
    if codec is None:
        raise AnswerParseError(f"no parser for ground-truth kind {kind!r}")
    return codec.read(response, options)


def _read_coordinate(response: str, options: Any) -> tuple[float, float]:
    try:
        return parse_coordinate(final_answer_text(response))
    except ValueError as exc:
        raise AnswerParseError(str(exc)) from None


def _read_object(response: str, options: Any) -> dict:
    value = last_json_value(response, "{")
    if not isinstance(value, dict):
        raise AnswerParseError(f"expected a JSON object, got {value!r:.80}")
    return value


def read_grouping(response: str, options: Any = None) -> dict[str, list[str]]:
    """A grouping: a JSON object after the last FINAL ANSWER (or anywhere), else the plain
    text GPSBench answers in ("Asia: Gurlan, Saga; Oceania: Tauranga", or one group a
    line)."""
    for where in (final_answer_text(response), final_answer_region(response)):
        try:
            value = last_json_value(where, "{")
        except AnswerParseError:
            continue
        if isinstance(value, dict):
            return {str(k): v if isinstance(v, list) else [v] for k, v in value.items()}
    text = final_answer_region(response)[:5000]
    out: dict[str, list[str]] = {}
    for part in re.split(r"[;\n]", text):
        key, sep, names = part.partition(":")
        key = re.sub(r"(?i)^\s*final\s+answer\s*", "", key).strip(" *-")
        if not sep or not key or ":" in names:
            continue
        out[key] = [n for n in (x.strip() for x in names.split(",")) if n]
    if not out:
        raise AnswerParseError(f"no grouping in {text[:80]!r}")
    return out


def _read_list(response: str, options: Any) -> list:
    value = last_json_value(response, "[")
    if not isinstance(value, list):
        raise AnswerParseError(f"expected a JSON list, got {value!r:.80}")
    return value


def _read_names(response: str, options: Any) -> list:
    """A JSON list, or one name a line ("FINAL ANSWER:" first or not)."""
    if "[" not in response:
        return _lines(response.split(":", 1)[1] if _is_final(response) else response)
    return _read_list(response, options)


def _is_final(response: str) -> bool:
    return bool(re.match(r"\s*final\s+answer\s*:", response, re.IGNORECASE))


def parse_sample_answer(sample: Sample, response: str) -> Any:
    """``parse_answer`` for the sample's ground-truth kind (a choice's options from its
    truth).  A task whose prompt asks for another layout reads it in its own scorer (RLE:
    the number on the first line, ``evaluators.navigation.parse_first_line_number``)."""
    truth = sample.ground_truth
    options = truth.options if isinstance(truth, ChoiceTruth) else None
    return parse_answer(truth.kind, response, options=options)


# ------------------------------------------------------------------ matching


_SPACES = re.compile(r"\s+")


def normalise_name(name: str) -> str:
    """Case, accents' composed form, spacing and surrounding punctuation made uniform."""
    if len(name) <= CACHED_NAME_CHARS:  # a dataset's names recur in every run scored
        return _normalise_cached(name)
    return _normalise(name)


#: names up to this long are remembered (a model's long answers are not)
CACHED_NAME_CHARS = 120


def _normalise(name: str) -> str:
    text = unicodedata.normalize("NFC", name).casefold().strip().strip(".\"'`")
    return _SPACES.sub(" ", text)


_normalise_cached = lru_cache(maxsize=50_000)(_normalise)


def _close(a: Any, b: float, tol: float) -> bool:
    try:
        a = float(a)
    except (TypeError, ValueError, OverflowError):
        return False
    return math.isfinite(a) and abs(a - b) <= max(tol, 1e-9 * abs(b))


def answer_matches(truth: Any, parsed: Any) -> bool:
    """Exact agreement of a parsed answer with the truth, by the truth kind's codec (numbers
    to 1e-9 relative, or the truth's own tolerances; names after ``normalise_name``; road
    pairs in either order)."""
    codec = CODECS.get(getattr(truth, "kind", ""))
    if codec is None:
        raise TypeError(f"no matcher for ground truth {type(truth).__name__}")
    return codec.match(truth, parsed)


def _match_number(truth: NumberTruth, parsed: Any) -> bool:
    """In the truth's unit: a unit written is converted (``in_unit``); one of another
    dimension, or a word that is no unit, is wrong.  A truth unit the table lacks falls back
    to the truth's ``equivalents``."""
    value, want = parsed.value, truth.value
    if truth.unit in UNITS or (truth.unit and parsed.unknown):
        try:
            value = in_unit(parsed, truth.unit)
        except AnswerParseError:
            return False
    elif parsed.unit and truth.unit and parsed.unit != truth.unit:
        if parsed.unit not in truth.equivalents:
            return False
        want = truth.equivalents[parsed.unit]
        if truth.tolerance is not None:  # the tolerance is in the truth's unit
            value = value * truth.value / want if want else value
            want = truth.value
    if truth.tolerance is not None:
        return truth.tolerance.allows(float(value), want)
    return _close(value, want, 0.0)


def _match_coordinate(truth: CoordinateTruth, parsed: Any) -> bool:
    if truth.tolerance is not None:
        return truth.within(float(parsed[0]), float(parsed[1]), truth.tolerance)
    return _close(parsed[0], truth.lat, 1e-6) and _close(parsed[1], truth.lon, 1e-6)


def _match_text(truth: TextTruth, parsed: Any) -> bool:
    return normalise_name(parsed) in {normalise_name(t) for t in [truth.answer, *truth.accepted]}


def _match_values(truth: ValuesTruth, parsed: Any) -> bool:
    return set(parsed) == set(truth.values) and all(
        _close(parsed[k], v, truth.tolerances.get(k, 0.0)) for k, v in truth.values.items()
    )


def _match_feature_table(truth: FeatureTableTruth, parsed: Any) -> bool:
    """Every type's count within [count, count + optional_count] and its names the required
    ones plus any of the optional ones; a type the answer leaves out counts as 0, none; a
    type the truth does not have must be 0, none."""
    empty = FeatureCount(count=0)
    for k in set(truth.features) | set(parsed):
        got = parsed.get(k, {"count": 0, "names": []})
        want = truth.features.get(k, empty)
        if not (
            isinstance(got, dict)
            and isinstance(got.get("count"), int | float)
            and want.count <= got["count"] <= want.count + want.optional_count
        ):
            return False
        names = _names(got.get("names", []))
        required = _names(want.names)
        if required - names or names - required - _names(want.optional_names):
            return False
    return True


def _match_road_pair(truth: RoadPairTruth, parsed: Any) -> bool:
    got = {
        normalise_name(str(parsed.get("road_1", ""))),
        normalise_name(str(parsed.get("road_2", ""))),
    }
    return got == {normalise_name(truth.road_1), normalise_name(truth.road_2)}


def _match_grouping(truth: GroupingTruth, parsed: Any) -> bool:
    return {normalise_name(k): _names(v) for k, v in parsed.items()} == {
        normalise_name(k): _names(v) for k, v in truth.groups.items()
    }


def _names(names: Any) -> Counter[str]:
    if not isinstance(names, list):
        return Counter({"<not a list>": 1})
    return Counter(normalise_name(str(n)) for n in names)


def score_response(sample: Sample, response: str | None) -> tuple[bool, str | None]:
    """(correct, why not) for one response: parse it by the sample's ground-truth kind and
    match it exactly (how a task without a scorer of its own is scored).  An unanswered or
    unreadable response is wrong, with the reason."""
    if response is None:
        return False, "no response"
    try:
        parsed = parse_sample_answer(sample, response)
    except AnswerParseError as exc:
        return False, f"unreadable: {exc}"
    try:
        ok = answer_matches(sample.ground_truth, parsed)
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        return False, f"wrong shape: {exc}"
    return ok, None if ok else "wrong"


@dataclass(frozen=True)
class Codec:
    """How answers of one ground-truth kind are read and matched (each truth writes itself:
    ``GroundTruth.answer_text()``)."""

    read: Callable[[str, Any], Any]
    """(response, the options of a choice) -> the value; raises ``AnswerParseError``."""
    match: Callable[[Any, Any], bool]
    """(truth, value read) -> exact agreement."""


#: ground-truth kind -> its codec: the one place a kind's reading and matching are chosen
CODECS: dict[str, Codec] = {
    "number": Codec(lambda r, o: parse_number(final_answer_text(r)), _match_number),
    "boolean": Codec(lambda r, o: parse_yes_no(final_answer_text(r)), lambda t, p: p is t.value),
    "count": Codec(
        lambda r, o: parse_number(final_answer_text(r)).value,
        lambda t, p: float(p).is_integer() and t.error(float(p)) == 0,
    ),
    "choice": Codec(lambda r, o: parse_choice(final_answer_text(r), o), lambda t, p: p == t.answer),
    "text": Codec(lambda r, o: final_answer_text(r), _match_text),
    "coordinate": Codec(_read_coordinate, _match_coordinate),
    "values": Codec(_read_object, _match_values),
    "names": Codec(_read_names, lambda t, p: _names(p) == _names(t.names)),
    "feature_table": Codec(_read_object, _match_feature_table),
    "road_pair": Codec(_read_object, _match_road_pair),
    "route": Codec(
        _read_list,
        lambda t, p: [normalise_name(str(x)) for x in p] == [normalise_name(x) for x in t.steps],
    ),
    "indices": Codec(_read_list, lambda t, p: sorted(p) == sorted(t.indices)),
    "grouping": Codec(read_grouping, _match_grouping),
}
