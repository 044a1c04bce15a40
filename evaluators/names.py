"""How a place name is folded before two names are compared: the one rule the GPS
generators (``cartoqa.tasks.gps._labels``) and the GPS scorers
(``evaluators.place_levels``) share."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["fold"]

_ABBREVIATIONS = {"st": "saint", "ste": "sainte", "mt": "mount", "ft": "fort", "pt": "port"}
_WORDS = re.compile(r"[^\W_]+")
#: Latin letters that Unicode does not decompose into a base letter and a mark (strokes,
#: ligatures, the dotless i): "Piła" is "Pila", "Køge" "Koge", "Đakovo" "Dakovo"
_STROKES = str.maketrans(
    {
        "ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŧ": "t", "ı": "i", "æ": "ae", "œ": "oe",
        "ß": "ss", "þ": "th", "ð": "d", "ŀ": "l", "ƀ": "b", "ɨ": "i", "ƶ": "z", "ǥ": "g",
        "ȼ": "c", "ɇ": "e", "ɉ": "j", "ɍ": "r", "ɏ": "y", "ʉ": "u", "ĸ": "q",
    }
)  # fmt: skip


@lru_cache(maxsize=200_000)
def fold(name: str) -> str:
    """A name without accents, strokes, case, punctuation, spaces or abbreviations:
    "Jyväskylä" -> "jyvaskyla", "Piła" -> "pila", "St. Petersburg" -> "saintpetersburg",
    "Saint-Étienne" -> "saintetienne", "Val-d'Or" and "Val Dor" -> "valdor", "Rio Verde" and
    "Rioverde" -> "rioverde" (issue 28: names written apart or together are one name to a
    reader)."""
    text = unicodedata.normalize("NFKD", name.casefold())
    if not text.isascii():
        text = "".join(ch for ch in text if not unicodedata.combining(ch)).translate(_STROKES)
    return "".join(_ABBREVIATIONS.get(w, w) for w in _WORDS.findall(text))
