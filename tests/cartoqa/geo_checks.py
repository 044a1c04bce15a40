"""Formulas the GPS tests check the generator with, written here and not taken from it."""

import math
import re
import unicodedata

_ABBREVIATIONS = {"st": "saint", "ste": "sainte", "mt": "mount", "ft": "fort", "pt": "port"}


#: letters with strokes and ligatures, which Unicode does not decompose (issue 28, item 10)
_PLAIN = {"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŧ": "t", "ı": "i", "æ": "ae", "œ": "oe"}
_PLAIN.update({"ß": "ss", "þ": "th", "ð": "d"})


def fold(name: str) -> str:
    """A name with accents, strokes, case, punctuation, spaces and "St." for "Saint" set
    aside (the rule the README states for telling namesakes apart: "Rio Verde" is
    "Rioverde", "Piła" is "Pila")."""
    text = unicodedata.normalize("NFKD", name.casefold())
    text = "".join(_PLAIN.get(ch, ch) for ch in text if not unicodedata.combining(ch))
    return "".join(_ABBREVIATIONS.get(w, w) for w in re.sub(r"[\W_]+", " ", text).split())


def km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Haversine distance in km on the 6371 km sphere between (lat, lon) points."""
    la1, lo1, la2, lo2 = map(math.radians, (*a, *b))
    h = (
        math.sin((la2 - la1) / 2) ** 2
        + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    )
    return 2 * 6371 * math.asin(math.sqrt(h))
