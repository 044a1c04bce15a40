"""What the published arithmetic gives for one stored record (``Item``) and for a whole
response folder (``Evaluation``), and the seeded draws that stand in for its random fall-backs."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "Evaluation",
    "Item",
    "crash_note",
    "crash_text",
    "num",
    "rng_for",
]


@dataclass(frozen=True)
class Item:
    """One stored response record, scored as the published evaluator scores it."""

    key: str
    """The response file's name (MFS: the question id in the one file)."""
    values: dict[str, float | None]
    """What the table reads (each module's ``item()`` lists its keys)."""
    groups: dict[str, str] = field(default_factory=dict)
    """The record's breakdowns: "zoom": "17", "colour": "blue", "difficulty": "Simple", ..."""
    crashed: str | None = None
    """What the published code raises on this item, e.g. "IndexError: [blue, red] has no item
    2"; the item is still scored, as the module's ``item()`` says."""
    drawn: bool = False
    """The published code draws this answer at random; drawn here from a seeded
    ``random.Random`` (``rng_for``)."""
    why: str | None = None
    """One line: why it is not right, or what was read."""


@dataclass(frozen=True)
class Evaluation:
    """The published evaluator's result over a folder of stored records."""

    release_task: str
    """"MFS", "STMF presence", "STMF counting", "STMF name listing", "MTMF", "RLE", "MML" or
    "SRN"."""
    items: list[Item]
    table: dict[str, dict[str, float]]
    """group -> metric -> value, "all" first; every group row has "n"; "all" has "crashed" and
    "drawn at random" (counts)."""
    notes: list[str] = field(default_factory=list)
    """Where the published run as a whole would crash or print something odd, in plain words."""


def rng_for(seed: int, key: str) -> random.Random:
    """The random source of the draws for one record: ``random.Random(f"{seed}:{key}")``, so a
    draw depends on the seed and the record's key, not on the order files are read in."""
    return random.Random(f"{seed}:{key}")


def num(value: float | None) -> float:
    """An item's value as a float for the sums of a table (None, a value not scored: 0.0)."""
    return 0.0 if value is None else float(value)


def crash_text(exc: BaseException) -> str:
    """ "TypeName: message", as Python prints an exception the published code does not catch."""
    return f"{type(exc).__name__}: {exc}"


def crash_note(items: Sequence[Item], unit: str, scored: str) -> list[str]:
    """The note an evaluation gives when items are marked crashed (none when none is):
    how many ``unit`` ("record(s)", "map(s)", ...), the first one and why, and how they are
    ``scored`` here."""
    crashed = [i for i in items if i.crashed]
    if not crashed:
        return []
    return [
        f"the published run raises on {len(crashed)} {unit} marked crashed (first: "
        f"{crashed[0].key}: {crashed[0].crashed}); scored here {scored}"
    ]
