"""Scorers of CartoMapQA's MFS task (map-feature semantics: one isolated map-feature image,
which of five named features is it?): the option a model gives, however it writes it.
The published CartoMapQA arithmetic (the "original" mode) is ``evaluators.published.mfs``,
used through ``cartoqa/tasks/release/features.py``.

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

Score (``mfs_score``): right when the option read is the truth's; values
``correct`` (1.0 or 0.0) and ``unanswered`` (1.0 when nothing could be read, or no
response); ``parsed`` the letter; ``why`` "wrong", "unreadable: ..." or "no response".

Reduce (``mfs_metrics``): ``n``, ``accuracy`` (the share right; an unreadable answer is
wrong) and ``unanswered`` (a count, as the map-feature tasks count theirs).  Breakdowns by
category (symbol, line, area) come from grouping the rows, not from here.
"""

from __future__ import annotations

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
from .verdicts import verdict as _score
from .verdicts import why_unreadable as _why_not

__all__ = [
    "format_mfs",
    "mfs_metrics",
    "mfs_score",
    "parse_mfs",
]

Rows = Sequence[tuple[Sample, SampleScore]]

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


# ------------------------------------------------------------------ reduce and format


def mfs_metrics(rows: Rows) -> dict[str, float]:
    """n, accuracy (the share right) and the number unanswered."""
    return {
        "n": len(rows),
        "accuracy": _mean([float(bool(r[1].correct)) for r in rows]),
        "unanswered": sum(1 for r in rows if r[1].values.get("unanswered")),
    }


def format_mfs(sample: Sample) -> str:
    """MFS as its prompt asks: the option's letter alone."""
    truth = sample.ground_truth
    assert isinstance(truth, ChoiceTruth)
    return truth.answer
