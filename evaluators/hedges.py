"""Negated and hedged answers: the words around a value that take it back or put another
beside it.

A value an answer negates ("not 2", "not E", "E is wrong", "E is incorrect", "isn't E") is
no answer: a parser passes over it and reads the next value, so "E is wrong; it is A" gives
A and "not 2 but 3" gives 3, and an answer whose every value is negated is unreadable.

An answer that gives two different values as alternatives is hedged, and wrong (unreadable,
with the reason): "A or B", "A/B", "A, B" and "A and B" (option letters), "2 or 3",
"133° or 313°", "2-3", "2 to 3", "between 2 and 3", "maybe 4, maybe 5", "yes or no".  Two
ways of writing one value are no hedge ("9568 km or 5945 miles", "B or b").

These helpers look only at a bounded window around a value (``WINDOW`` characters), so a
parser that calls them once per value read stays linear in the answer's length; an answer
that rules out more than ``MAX_NEGATED`` values, or holds more than ``MAX_NEGATIONS`` words
that negate, is unreadable.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .errors import AnswerParseError

__all__ = [
    "MAX_NEGATED",
    "MAX_NEGATIONS",
    "WINDOW",
    "alternative_at",
    "blanked",
    "is_negated",
    "negated_spans",
    "rejected_after",
    "yes_no_hedge",
]

#: how many characters before and after a value are read for the words that negate it or
#: put another beside it
WINDOW = 40

# "not 2", "not E", "not option E", "isn't E", "is not equal to 2", "never 2"
_NOT_BEFORE = re.compile(
    r"(?:\bnot|n['’ ]t|\bnever)(?:\s+(?:equal\s+to|exactly|quite|option|choice|answer|the|a|an))*"
    r"[\s:\-~≈]*[\"'`*_(\[<]*$",
    re.IGNORECASE,
)
# "E is wrong", "(E) is incorrect", "2 is not right", "E is not the answer", "E: wrong"
_REJECTED_AFTER = re.compile(
    r"[\"'`*_)\]>.]*\s*(?:(?:is|are|was|were|would\s+be|seems|looks|isn|aren|wasn|:|-)\s*)?"
    r"(?:definitely\s+|clearly\s+|both\s+|all\s+)?"
    r"(?:wrong|incorrect|false|ruled\s+out|excluded"
    r"|(?:not|['’ ]?t)\s+(?:right|correct|it\b"
    r"|the\s+(?:right\s+|correct\s+|best\s+)?(?:answer|option|one)))",
    re.IGNORECASE,
)
# what joins two alternatives: "or", "/", "and/or", ", or", ", maybe", "(or", a dash or "to"
# for a range; "and" only where ``and_ok`` (option letters, "between 2 and 3")
_JOIN = (
    r"[\"'`*_)\]>.]*\s*(?:\(\s*)?(?:"
    r"(?:,\s*)?(?:or|and/or|/|\|)"
    r"|,\s*(?:or\s+)?(?:maybe|perhaps|possibly|probably)"
    r"|(?:to\b|–|—|-)"
    r"{and_})"
    r"\s*(?:(?:maybe|perhaps|possibly|probably|even|about|approximately|around|roughly)\s+)?"
    r"[\"'`*_(\[<]*\s*"
)
_ALT = re.compile(_JOIN.format(and_=""), re.IGNORECASE)
_ALT_AND = re.compile(_JOIN.format(and_=r"|(?:,\s*)?and|&|,"), re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s*$", re.IGNORECASE)


#: an answer that rules out more values than this is unreadable (a parser reads no further)
MAX_NEGATED = 100
#: an answer with more words that can negate a value ("not", "wrong") than this is unreadable
MAX_NEGATIONS = 1_000

# the words that can negate a value near them (case aside; the look-ahead makes the scan of a
# long text fast)
_NEGATING = re.compile(
    r"(?=[nNwWiIfFrReE])(?:[nN][oO][tT]\b|[nN]['’ ][tT]\b|[nN][eE][vV][eE][rR]|[wW][rR][oO][nN][gG]"
    r"|[iI][nN][cC][oO][rR][rR][eE][cC][tT]|[fF][aA][lL][sS][eE]|[rR][uU][lL][eE][dD]"
    r"|[eE][xX][cC][lL][uU][dD][eE][dD])"
)


def negated_spans(
    text: str, token: re.Pattern[str], negated: Callable[[str, re.Match[str]], bool]
) -> list[tuple[int, int]]:
    """The spans of the values (matches of ``token``) that ``negated`` says the text rules
    out, in order; only values within ``WINDOW`` characters of a negating word are tried, so
    the cost is linear in the text's length.  ``AnswerParseError`` past ``MAX_NEGATED``
    values ruled out or ``MAX_NEGATIONS`` negating words."""
    spans: dict[int, int] = {}
    for i, w in enumerate(_NEGATING.finditer(text)):
        if i >= MAX_NEGATIONS:
            raise AnswerParseError(
                f"more than {MAX_NEGATIONS:,} words that negate (the answer begins "
                f"{text[:40]!r}): not an answer"
            )
        lo, hi = max(0, w.start() - 2 * WINDOW), min(len(text), w.end() + WINDOW)
        for m in token.finditer(text, lo, hi):
            if m.start() not in spans and m.end() > m.start() and negated(text, m):
                spans[m.start()] = m.end()
                if len(spans) > MAX_NEGATED:
                    raise AnswerParseError(
                        f"more than {MAX_NEGATED} values ruled out (the answer begins "
                        f"{text[:40]!r}): not an answer"
                    )
    return sorted(spans.items())


def blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span made spaces (positions kept)."""
    out, last = [], 0
    for start, end in spans:
        if start < last:
            continue
        out += [text[last:start], " " * (end - start)]
        last = end
    out.append(text[last:])
    return "".join(out)


def is_negated(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` is negated: "not" (or "isn't", "never")
    just before it, or "is wrong", "is incorrect", "is not the answer" just after it."""
    before = text[max(0, start - WINDOW) : start].lower()
    if ("not" in before or "t" in before[-8:] or "never" in before) and _NOT_BEFORE.search(before):
        return True
    return rejected_after(text, end)


def rejected_after(text: str, end: int) -> bool:
    """Whether the words just after ``end`` reject the value before them ("is wrong")."""
    return _REJECTED_AFTER.match(text[end : end + WINDOW]) is not None


def alternative_at(text: str, start: int, end: int, *, and_ok: bool = False) -> int | None:
    """Where an alternative to the value at ``text[start:end]`` begins ("2 or 3": the
    position of 3), or None when no joining word follows it.  ``and_ok``: "and", "&" and a
    bare comma join alternatives too (option letters: "A and B", "A, B"); "between 2 and 3"
    always does.  The caller reads the value there and decides whether it differs."""
    pattern = _ALT_AND if and_ok or _BETWEEN.search(text[max(0, start - WINDOW) : start]) else _ALT
    m = pattern.match(text, end, min(len(text), end + WINDOW))
    return None if m is None else m.end()


_YES_NO_PAIR = re.compile(
    r"\b(yes|no|true|false)\b[\"'`*_)\].]*\s*(?:/|\||or\b|,\s*(?:or\s+)?(?:maybe|perhaps|possibly)\b)"
    r"\s*(?:(?:maybe|perhaps|possibly|probably)\s+)?[\"'`*_(\[]*(yes|no|true|false)\b",
    re.IGNORECASE,
)
_POSITIVE = {"yes", "true"}


def yes_no_hedge(text: str) -> str | None:
    """The words of a yes-or-no answer that give both ("yes or no", "Yes/No", "maybe yes,
    maybe no"), or None; the first 1,000 characters are read."""
    for m in _YES_NO_PAIR.finditer(text[:1000]):
        if (m.group(1).lower() in _POSITIVE) != (m.group(2).lower() in _POSITIVE):
            return m.group(0)
    return None
