"""Scorers of CartoMapQA's MFS task (map-feature semantics: one isolated map-feature image,
which of five named features is it?), in two modes.

The default ("cartoqa") mode reads the option a model gives, however it writes it; the
"original" mode (``mfs_score_original``) reproduces the published scorer's arithmetic
(``cartomapqa-release.md``), quirks included.

Parser (``parse_mfs``; raises ``AnswerParseError`` when no option can be read; answers
over ``MAX_ANSWER_CHARS``, or of more than ``MAX_LINES`` lines, are unreadable;
``<think>`` blocks are ignored).  The first of these that gives an option wins:

- a ``FINAL ANSWER:`` marker: the text after the last one, read by ``parse_choice`` (an
  option's text with an article or lead words before it, "a bank", read first);
- the last explicit statement anywhere: "answer is C", "Answer: C", "**Answer:** (C)",
  "the correct option is C" (the letter a capital, and one of the options);
- a line that is an option alone: "C", "(C)", "**C**", "C.", "c", or the letter with its
  own option's text, "C) Bank", "C: Bank"; lines that give different options make the
  answer unreadable (an answer that lists the options chooses none);
- the last line, then the first, written as an option's text ("Bank", "bank.", "It is a
  bank", "The answer is a bank": case, spaces and punctuation aside; lead words and an
  article allowed before it);
- the last line, then the first, read by ``parse_choice`` ("The answer is C.", "I think
  C", prose ending in the letter).

A letter the answer negates ("not E", "E is wrong", "A and E are incorrect") is passed
over before any of these ("E is wrong; it is A" reads A; "not E" alone is unreadable), and
two options given as alternatives ("A or B", "A, B", "maybe A, maybe B", "the answer is A
or B") make the answer unreadable (``evaluators.hedges``).
A capital letter that is no option ("F", "I" in "I think") is passed over; a line that
opens with the article "A" before a word that is not option A's text ("A dollar sign")
may still be read as A by ``parse_choice``, the last resort.

Default score (``mfs_score``): right when the option read is the truth's; values
``correct`` (1.0 or 0.0) and ``unanswered`` (1.0 when nothing could be read, or no
response); ``parsed`` the letter; ``why`` "wrong", "unreadable: ..." or "no response".

Reduce (``mfs_metrics``, the same for both modes): ``n``, ``accuracy`` (the share right;
an unreadable answer is wrong), ``unanswered`` (a count, as the map-feature tasks count
theirs) and, when the scores carry it, ``drawn_at_random`` (a count).  Breakdowns by
category (symbol, line, area) come from grouping the rows, not from here.

The original mode, by the published arithmetic; where the release text leaves a detail
open the reading taken is stated:

- When the response contains "correct answer is" (case-sensitive, as written: "The
  correct answer is ..." matches, "Correct answer is ..." does not), the answer is the
  first ASCII letter after its first occurrence ("The correct answer is **(C)**" reads C;
  "... is Bank" reads B); when no letter follows, the answer is empty.
- Otherwise the answer is the response's first character, taken as it is: not stripped
  (a response that opens with a space or a newline reads as that character), not
  upper-cased (a lowercase "c" is not "C"), and not checked against the options ("I
  think C" reads "I"; "**C**" reads "*"): such an answer is simply wrong, not drawn.
- Right when the answer equals the truth's letter exactly.
- An empty answer (an empty response, no response at all, or the phrase with no letter
  after it) is replaced by a letter drawn uniformly from the sample's option letters,
  seeded ``random.Random(f"{ORIGINAL_SEED}:{sample.id}")`` (``ORIGINAL_SEED`` of
  ``evaluators.poi``); ``drawn_at_random`` (1.0 or 0.0) says whether it was.
  ``unanswered`` is always 0.0 there: the published scorer answers every question.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from cartoqa.records import ChoiceTruth, Sample, SampleScore

from .answers import MAX_LINES, letters_hedge, parse_choice, without_negated_letters
from .hedges import WINDOW
from .metrics import mean as _mean
from .numeric import (
    AnswerParseError,
    check_answer_length,
    final_answer_region,
    final_answer_text,
    has_final_answer,
)
from .poi import ORIGINAL_SEED
from .verdicts import verdict as _score
from .verdicts import why_unreadable as _why_not

__all__ = [
    "RELEASE_PHRASE",
    "format_mfs",
    "mfs_metrics",
    "mfs_score",
    "mfs_score_original",
    "parse_mfs",
]

Rows = Sequence[tuple[Sample, SampleScore]]

#: the published parser reads the answer after this phrase, when the response has it
RELEASE_PHRASE = "correct answer is"
#: a line longer than this is no option alone nor an option's text
_SHORT_LINE = 300
#: the most characters (of its key) read before an option's text as lead words
_SHORT_LEAD = 60


def _options(sample: Sample) -> dict[str, str]:
    truth = sample.ground_truth
    assert isinstance(truth, ChoiceTruth)
    return truth.options


# ------------------------------------------------------------------ reading

# "answer is C", "Answer: C", "**Answer:** (C)", "the correct option is C"; the letter a
# capital standing alone (one character class between the words and it: no backtracking)
_SAYS = re.compile(
    r"(?i:\b(?:answer|(?:correct|right|best)\s+(?:option|choice))"
    r"(?:\s+(?:is|would\s+be)\b|\s*[:：\-]))"
    r"[\s(\[\"'`*_]*([A-Z])(?![A-Za-z'])"
)
# a letter at a line's start, wrapped or not, and what follows it
_ALONE = re.compile(r"[\s*_`\"'(\[<]*([A-Za-z])(?![A-Za-z'])[\s*_`\"')\]>.:\-]*(.*)")
# what may stand before an option's text, on the text's key (spaces and punctuation gone)
_NAMED_LEAD = re.compile(
    r"(?:so|thus|therefore|hence)?(?:ithink|ibelieve|iwouldsay)?"
    r"(?:the|my)?(?:final|correct|best)?(?:answer|choice|option)?(?:is|wouldbe)?"
    r"(?:it|this|that|the)?(?:symbol|feature|mapfeature|icon|image|line|area|fill)?"
    r"(?:is|s|shows|represents|depicts)?(?:an?|the)?"
)
_NOT_KEY = re.compile(r"[\W_]+")


def _key(text: str) -> str:
    """Text for comparing with an option's: case, spaces and punctuation aside."""
    return _NOT_KEY.sub("", text.casefold())


def _said(region: str, options: dict[str, str]) -> str | None:
    """The letter of the last explicit statement ("the answer is C") that names an option;
    ``AnswerParseError`` when that statement gives two ("the answer is C or D")."""
    found = None
    for m in _SAYS.finditer(region):
        if m.group(1) in options:
            found = m
    if found is None:
        return None
    at = found.start(1)
    if hedge := letters_hedge(region[at : at + 2 * WINDOW], set(options)):
        raise AnswerParseError(f"a hedged answer: {hedge!r} gives two options; one is asked")
    return found.group(1)


def _alone(line: str, options: dict[str, str]) -> str | None:
    """The option a line gives alone ("C", "(C)", "**c**", "C) Bank"), or None."""
    if len(line) > _SHORT_LINE:
        return None
    m = _ALONE.match(line)
    if m is None:
        return None
    letter, rest = m.group(1).upper(), m.group(2)
    if letter not in options:
        return None
    if not _key(rest) or _key(rest) == _key(options[letter]):
        return letter
    return None


def _named(line: str, options: dict[str, str]) -> str | None:
    """The option whose text a line writes ("Bank", "bank.", "It is a bank"), when exactly
    one option's is."""
    if len(line) > _SHORT_LINE:
        return None
    written = _key(line)
    hits = []
    for letter, text in options.items():
        want = _key(text)
        lead = written[: len(written) - len(want)]
        fits = want and written.endswith(want) and len(lead) <= _SHORT_LEAD
        if fits and _NAMED_LEAD.fullmatch(lead):
            hits.append(letter)
    return hits[0] if len(hits) == 1 else None


def parse_mfs(sample: Sample, response: str) -> str:
    """The option letter an MFS answer gives (see the module's notes for the order the
    ways of writing it are tried in).  Raises ``AnswerParseError`` when there is none, or
    when the answer gives several options alone."""
    options = _options(sample)
    check_answer_length(response)
    if not response.strip():
        raise AnswerParseError("the answer is empty")
    if has_final_answer(response):
        text = final_answer_text(response)
        return _named(text, options) or parse_choice(text, options)
    region, negated = without_negated_letters(final_answer_region(response), set(options))
    try:
        return _read_region(region, options)
    except AnswerParseError as exc:
        if negated and not str(exc).startswith("a hedged"):
            raise AnswerParseError(
                f"a negated answer: {negated} is ruled out and no option given"
            ) from None
        raise


def _read_region(region: str, options: dict[str, str]) -> str:
    """The option a response with no FINAL ANSWER marker gives (its negated letters already
    made spaces)."""
    lines = region.splitlines()
    if len(lines) > MAX_LINES:
        raise AnswerParseError(f"{len(lines):,} lines, more than the {MAX_LINES:,} read")
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise AnswerParseError("the answer is empty")
    said = _said(region, options)
    if said is not None:
        return said
    alone = {got for ln in lines if (got := _alone(ln, options)) is not None}
    if len(alone) == 1:
        return alone.pop()
    if alone:
        raise AnswerParseError(f"several options given alone: {sorted(alone)}")
    ends = [lines[-1]] if len(lines) == 1 else [lines[-1], lines[0]]
    for line in ends:
        named = _named(line, options)
        if named is not None:
            return named
    error: AnswerParseError | None = None
    for line in ends:
        try:
            return parse_choice(line, options)
        except AnswerParseError as exc:
            error = error or exc
    assert error is not None
    raise error


# ------------------------------------------------------------------ scores


def mfs_score(sample: Sample, response: str | None) -> SampleScore:
    """MFS: right when the option read is the truth's."""
    truth = sample.ground_truth
    assert isinstance(truth, ChoiceTruth)
    try:
        got = parse_mfs(sample, response or "")
    except AnswerParseError as exc:
        return _score(
            correct=False,
            values={"correct": 0.0, "unanswered": 1.0},
            why=_why_not(response, exc),
        )
    ok = got == truth.answer
    return _score(
        correct=ok,
        values={"correct": 1.0 if ok else 0.0, "unanswered": 0.0},
        parsed=got,
        why=None if ok else "wrong",
    )


def _rng(sample: Sample) -> random.Random:
    return random.Random(f"{ORIGINAL_SEED}:{sample.id}")


_ASCII_LETTER = re.compile(r"[A-Za-z]")


def _release_answer(response: str) -> str:
    """The published parser's answer: the first letter after "correct answer is", else the
    first character; "" when there is none."""
    at = response.find(RELEASE_PHRASE)
    if at >= 0:
        m = _ASCII_LETTER.search(response, at + len(RELEASE_PHRASE))
        return m.group() if m else ""
    return response[:1]


def mfs_score_original(sample: Sample, response: str | None) -> SampleScore:
    """MFS by the published arithmetic: the first character of the response, or the first
    letter after "correct answer is", compared exactly with the truth's letter; an empty
    answer replaced by a seeded random letter (see the module's notes)."""
    truth = sample.ground_truth
    assert isinstance(truth, ChoiceTruth)
    answer = _release_answer(response or "")
    drawn = 0.0
    if not answer:
        answer, drawn = _rng(sample).choice(sorted(truth.options)), 1.0
    ok = answer == truth.answer
    return _score(
        correct=ok,
        values={"correct": 1.0 if ok else 0.0, "unanswered": 0.0, "drawn_at_random": drawn},
        parsed=answer,
        why=None if ok else ("wrong (drawn at random)" if drawn else "wrong"),
    )


# ------------------------------------------------------------------ reduce and format


def mfs_metrics(rows: Rows) -> dict[str, float]:
    """n, accuracy (the share right) and the number unanswered (and ``drawn_at_random``, a
    count, when the scores carry it)."""
    out: dict[str, float] = {
        "n": len(rows),
        "accuracy": _mean([float(bool(r[1].correct)) for r in rows]),
        "unanswered": sum(1 for r in rows if r[1].values.get("unanswered")),
    }
    if any("drawn_at_random" in r[1].values for r in rows):
        out["drawn_at_random"] = sum(1 for r in rows if r[1].values.get("drawn_at_random"))
    return out


def format_mfs(sample: Sample) -> str:
    """MFS as its prompt asks: the option's letter alone."""
    truth = sample.ground_truth
    assert isinstance(truth, ChoiceTruth)
    return truth.answer
