"""MFS questions: five options for each legend image, chosen by the paper's distractor rule
(issue 16, item 5).

    questions = make_questions(legend, vectors, n=100, seed=7)

The rule, within the image's category (symbol, line, area), by Euclidean
distance between CLIP embeddings, nearest first (ties by key):

1. two distractors of the answer's OSM key class (``amenity``, ``highway``, ...);
2. one of another key class;
3. one at random among the rest of the category.

A candidate is never a look-alike of the answer or of an option already
chosen (``symbols.lookalike``: one class, or a near pair, a fill of a near
tint or a line that differs only by width: ``waterway=stream`` and
``drain``, ``landuse=residential`` and ``religious``, with their classes),
nor a feature whose name means the same
(``confusable``: "Charity Store" and "Thrift Store", "Bar" and "Pub",
"River" and "Stream", read off the tagging schema's own aliases and search
terms), nor one whose name holds the other's ("Gate" and "Kissing Gate",
"Picnic Site" and "Picnic Table"): every option can be told from every
other, by its look and by its name.
When the key class has fewer than two such candidates, the nearest of other
classes fill its places (their role is then "other_class"), and
``Question.short`` says how many.  A category with fewer than five
distinguishable features makes no question.

Only features the tagging schema names take part (a bare "key=value" among
names would stand out), and one per look-alike class: the member that names
it, its most typical (``LegendSet.typical``, ``symbols.typical``: a grass
fill is "Grass", not "Driving Range"), as a subject and as a distractor (a
person could not tell its members apart, so they would be one question
twice).  Subjects: those and every image alone in its look.  ``n`` subjects are
drawn (all of them when ``n`` is None or larger), and the answer's letter
is balanced over A-E within each category: the positions are dealt from
shuffled decks of the five letters, so within a category no letter is used
more than once more than another.
The same legend, vectors and seed give the same questions.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from .catalogue import CatalogueEntry
from .store import LegendSet

__all__ = [
    "LETTERS",
    "Question",
    "category_counts",
    "confusable",
    "distractors",
    "lookalikes",
    "make_questions",
    "name_core",
    "named",
    "option_names",
    "subjects",
]

LETTERS = "ABCDE"
ROLES = ("same_class", "same_class", "other_class", "random")


@dataclass(frozen=True)
class Question:
    """One MFS question: the image's feature and its five options in letter order."""

    subject: str
    """"category:key" of the feature shown (the answer)."""
    options: tuple[str, ...]
    """"category:key" of the options, A to E."""
    roles: tuple[str, ...]
    """Why each option is there: "answer", "same_class", "other_class", "random"."""
    short: int = 0
    """Same-class places filled from other classes (the class had too few candidates)."""

    @property
    def answer(self) -> str:
        """The answer's letter."""
        return LETTERS[self.options.index(self.subject)]


def named(legend: LegendSet) -> list[str]:
    """The images that may be options: those the tagging schema names (a bare "key=value"
    would stand out among names), sorted."""
    return sorted(k for k in legend.images if legend.entries[k].name_source != "tag")


def subjects(legend: LegendSet) -> list[str]:
    """The features a question may show or offer: of the named images, the one that names
    each look-alike class (``LegendSet.typical``; the first named member where a legend
    has none) and every one alone in its look, sorted."""
    usable = named(legend)
    in_class = {k for c in legend.classes for k in c}
    typical = list(legend.typical) + [None] * (len(legend.classes) - len(legend.typical))
    firsts = set()
    for c, name in zip(legend.classes, typical, strict=True):
        mine = sorted(k for k in c if k in usable)
        if mine:
            firsts.add(name if name in mine else mine[0])
    return [k for k in usable if k not in in_class or k in firsts]


def lookalikes(legend: LegendSet) -> dict[str, frozenset[str]]:
    """Feature -> the features never an option beside it: its look-alike class, the near
    pairs of any member (``LegendSet.near``) and their classes."""
    cls = {k: c for c in legend.classes for k in c}
    out: dict[str, set[str]] = {}
    for pair in legend.near:
        a, b = sorted(pair)
        for x, y in ((a, b), (b, a)):
            for member in cls.get(x, frozenset({x})):
                out.setdefault(member, set()).update(cls.get(y, frozenset({y})))
    for c in legend.classes:
        for k in c:
            out.setdefault(k, set()).update(c)
    return {k: frozenset(v - {k}) for k, v in out.items()}


#: words a name may end in that say only what sort of place it is ("Thrift Store")
GENERIC_WORDS = frozenset(
    {"store", "shop", "area", "grounds", "site", "lot", "place", "centre", "center", "facility"}
)


@cache
def name_core(name: str) -> str:
    """A name without case and its trailing generic words: "Thrift Store" -> "thrift"."""
    words = re.findall(r"[\w'&-]+", name.casefold())
    while len(words) > 1 and words[-1] in GENERIC_WORDS:
        words.pop()
    return " ".join(words)


def confusable(a: CatalogueEntry, b: CatalogueEntry) -> bool:
    """Whether two features' names could both fit one image: one's core is among the
    other's aliases and search terms (by core too: "Thrift Store", "thrift"), or its words
    are all in the other's ("Gate", "Kissing Gate": a kissing gate is a gate)."""
    ca, cb = name_core(a.name), name_core(b.name)
    wa, wb = set(ca.split()), set(cb.split())
    return (
        wa <= wb
        or wb <= wa
        or ca in {name_core(t) for t in b.terms}
        or cb in {name_core(t) for t in a.terms}
    )


def distractors(
    legend: LegendSet, vectors: Mapping[str, np.ndarray], subject: str, rng: random.Random
) -> tuple[list[tuple[str, str]], int]:
    """The four (key, role) distractors of ``subject`` by the rule (module docstring), and
    how many same-class places other classes filled; ``ValueError`` when the category has
    too few distinguishable features."""
    category = subject.split(":", 1)[0]
    alike = lookalikes(legend)
    chosen = [subject]

    def fits(key: str) -> bool:
        for c in chosen:
            if key == c or key in alike.get(c, ()):
                return False
            if confusable(legend.entries[key], legend.entries[c]):
                return False
        return True

    me = vectors[subject]
    pool = sorted(
        (float(np.linalg.norm(vectors[k] - me)), k)
        for k in subjects(legend)
        if k.startswith(f"{category}:") and k != subject
    )
    key_class = legend.entries[subject].key_class

    def nearest(same: bool | None) -> str | None:
        for _, k in pool:
            if same is not None and (legend.entries[k].key_class == key_class) != same:
                continue
            if fits(k):
                return k
        return None

    out: list[tuple[str, str]] = []
    short = 0
    for role in ROLES:
        if role == "random":
            left = [k for _, k in sorted(pool, key=lambda p: p[1]) if fits(k)]
            pick = rng.choice(left) if left else None
        else:
            pick = nearest(role == "same_class")
            if pick is None and role == "same_class":
                pick, short, role = nearest(False), short + 1, "other_class"
        if pick is None:
            raise ValueError(
                f"{subject}: the {category} category has too few features that can be told "
                "apart for five options"
            )
        chosen.append(pick)
        out.append((pick, role))
    return out, short


def make_questions(
    legend: LegendSet,
    vectors: Mapping[str, np.ndarray],
    *,
    n: int | None = None,
    seed: int = 0,
) -> list[Question]:
    """Questions for ``n`` subjects drawn with ``seed`` (all when ``n`` is None), in the
    order drawn (module docstring)."""
    rng = random.Random(f"mfs:{seed}")
    pool = subjects(legend)
    rng.shuffle(pool)
    drawn = pool if n is None else pool[:n]
    decks: dict[str, list[int]] = {}
    out = []
    for subject in drawn:
        category = subject.split(":", 1)[0]
        try:
            picks, short = distractors(legend, vectors, subject, rng)
        except ValueError:
            continue
        deck = decks.setdefault(category, [])
        if not deck:
            deck += rng.sample(range(len(LETTERS)), len(LETTERS))
        at = deck.pop()
        order: list[tuple[str, str]] = list(picks)
        rng.shuffle(order)
        order.insert(at, (subject, "answer"))
        out.append(
            Question(
                subject=subject,
                options=tuple(k for k, _ in order),
                roles=tuple(r for _, r in order),
                short=short,
            )
        )
    return out


def option_names(legend: LegendSet, question: Question) -> dict[str, str]:
    """Letter -> the option's name, as the question shows them."""
    return {LETTERS[i]: legend.entries[k].name for i, k in enumerate(question.options)}


def category_counts(questions: Sequence[Question]) -> dict[str, int]:
    """Questions per category."""
    out: dict[str, int] = {}
    for q in questions:
        c = q.subject.split(":", 1)[0]
        out[c] = out.get(c, 0) + 1
    return out
