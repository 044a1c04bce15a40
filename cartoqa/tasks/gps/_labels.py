"""How a city is named in a name-only prompt, so that the name picks out one city.

A prompt that names cities without coordinates is only fair when each name
fits one city of the table the questions are drawn from (GeoNames
cities15000).  Two forms:

- ``with_country``: "Name, Country".  Where another city of that country has
  the same name (accents and case aside), the province or state is added:
  "Aberdeen, Washington, United States".  Where that is shared too, or
  GeoNames gives no province name, there is no fair label (None).
- ``bare``: "Name" alone (boundary analysis and spatial patterns, where the
  country would give the answer away).  The name must be the only one of its
  spelling in the table, or its city must have at least ``DOMINANT`` times
  the people of every other city of that name (Paris, France over Paris,
  Texas); else None.

A task that gets None draws again and counts the draw as ``ambiguous_name``.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict

from ._cities import Cities

__all__ = ["DOMINANT", "CityLabels", "fold"]

#: how many times the people of every namesake a city needs to be named alone
DOMINANT = 10


def fold(name: str) -> str:
    """A name without accents or case: "Jyväskylä" -> "jyvaskyla"."""
    text = unicodedata.normalize("NFKD", name)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold().strip()


class CityLabels:
    """Labels for the cities of one table, with the namesakes looked up once."""

    def __init__(self, cities: Cities) -> None:
        self.c = cities
        self._by_name: dict[str, list[int]] = defaultdict(list)
        self._by_country: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, name in enumerate(cities.name):
            key = fold(name)
            self._by_name[key].append(i)
            self._by_country[key, cities.country[i]].append(i)

    def with_country(self, i: int) -> str | None:
        """ "Name, Country", "Name, Province, Country" where the country has namesakes, or
        None where even that fits more than one city."""
        c = self.c
        same = self._by_country[fold(c.name[i]), c.country[i]]
        if len(same) == 1:
            return f"{c.name[i]}, {c.country_name[i]}"
        province = c.admin1_name[i]
        if not province or any(
            j != i and c.admin1_name[j] == province and c.admin1[j] == c.admin1[i] for j in same
        ):
            return None
        return f"{c.name[i]}, {province}, {c.country_name[i]}"

    def bare(self, i: int) -> str | None:
        """The name alone where it picks out one city (see the module text), else None."""
        c = self.c
        same = self._by_name[fold(c.name[i])]
        if len(same) == 1:
            return c.name[i]
        others = max(int(c.population[j]) for j in same if j != i)
        return c.name[i] if int(c.population[i]) >= DOMINANT * max(others, 1) else None
