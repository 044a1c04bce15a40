"""The paired variants' names, tags and the metadata that ties a variant's sample to its base.

A variant's sample is a copy of a base sample asked under one controlled change.  It
shares the base's task and adds to its id "@" and the variant's tag, and to its metadata
``variant`` (the variant's name), ``base`` (the base sample's id) and, where the change
makes the answer unreadable, ``answerable: false``:

    srn-0004             the base question
    srn-0004@text        the same question, the map written out as text
    srn-0004@lang-de     the same place drawn with German labels

Scores never mix: ``cartoqa.scoring`` tables a variant's samples under
"<task>@<variant>" (``score_key``), and the unanswerable ones apart from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cartoqa.errors import CartoqaError
from cartoqa.records import Sample

__all__ = [
    "ANSWERABLE_KEY",
    "BASE_KEY",
    "UNANSWERABLE",
    "VARIANT_KEY",
    "VARIANT_NAMES",
    "base_id",
    "is_unanswerable",
    "parse_variants",
    "score_key",
    "split_key",
    "variant_of",
    "variant_tag",
]

VARIANT_KEY = "variant"
"""The metadata key naming a sample's variant ("text", "lang:de"); absent on a base sample."""
BASE_KEY = "base"
"""The metadata key holding the id of the base sample a variant's sample copies."""
ANSWERABLE_KEY = "answerable"
"""The metadata key set to False where a variant made the answer unreadable (``nolabels``
on a question that needs names)."""
UNANSWERABLE = "unanswerable"
"""What follows "/" in the score key of a variant's unanswerable samples."""

#: the variants a build can make, in the order a report lists them; "lang:XX" stands for
#: any two- or three-letter language code
VARIANT_NAMES = ("text", "image+text", "coords", "nolabels", "greyscale", "lang:XX", "zoom")

_LANG = re.compile(r"lang:([a-z]{2,3}(?:-[a-z0-9]{2,8})?)")


def variant_tag(name: str) -> str:
    """The tag a variant adds to ids ("image+text" -> "image-text", "lang:de" -> "lang-de")."""
    return name.replace("+", "-").replace(":", "-").lower()


def parse_variants(text: str | Iterable[str]) -> list[str]:
    """``--variants text,coords,lang:de``: the variants' names, checked, without repeats, in
    the order given; a bad one is refused with the list of the good ones."""
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    out: list[str] = []
    for item in items:
        if not item:
            continue
        name = item.lower()
        if name not in VARIANT_NAMES and not _LANG.fullmatch(name):
            hint = (
                " (a language is a code such as lang:de or lang:fr)"
                if name.startswith("lang")
                else ""
            )
            raise CartoqaError(
                f"--variants {item!r}: not a variant{hint}; use some of "
                f"{', '.join(VARIANT_NAMES)}, comma-separated"
            )
        if name not in out:
            out.append(name)
    return out


def variant_of(sample: Sample) -> str | None:
    """The sample's variant's name, or None for a base sample."""
    value = (sample.metadata.model_extra or {}).get(VARIANT_KEY)
    return str(value) if value else None


def base_id(sample: Sample) -> str:
    """The id of the base sample (the sample's own for a base sample)."""
    value = (sample.metadata.model_extra or {}).get(BASE_KEY)
    return str(value) if value else sample.id


def is_unanswerable(sample: Sample) -> bool:
    """True where a variant flagged the sample's answer as unreadable."""
    return (sample.metadata.model_extra or {}).get(ANSWERABLE_KEY) is False


def score_key(sample: Sample) -> str:
    """Where the sample's score is tabled: its task ("srn"), "<task>@<variant>" for a
    variant's sample, "<task>@<variant>/unanswerable" for one flagged unanswerable."""
    variant = variant_of(sample)
    if variant is None:
        return sample.task
    key = f"{sample.task}@{variant}"
    return f"{key}/{UNANSWERABLE}" if is_unanswerable(sample) else key


def split_key(key: str) -> tuple[str, str | None, bool]:
    """A score key's (task, variant or None, unanswerable)."""
    task, _, rest = key.partition("@")
    if not rest:
        return task, None, False
    variant, _, flag = rest.partition("/")
    return task, variant, flag == UNANSWERABLE
