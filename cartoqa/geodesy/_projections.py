"""UTM and Web Mercator through pyproj (no hand-written Transverse Mercator).

UTM zones follow the GPSBench rule zone = floor((lon + 180) / 6) + 1, with
no Norway or Svalbard exceptions, on the WGS84 ellipsoid (EPSG:326xx north,
EPSG:327xx south).  Web Mercator is EPSG:3857.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from pyproj import Transformer

from cartoqa.errors import CoordinateError

from ._validate import as_float, as_lat, as_lon, broadcast, fold_lon, scalar_out, wrap_lon

#: Web Mercator is defined up to this latitude (the square world map's edge).
MAX_MERCATOR_LAT_DEG = 85.05112877980659

Hemisphere = Literal["N", "S"]


class UTMCoordinate(NamedTuple):
    """A UTM position: easting and northing in metres, zone 1-60, hemisphere N or S."""

    easting_m: Any
    northing_m: Any
    zone: Any
    hemisphere: Any


@lru_cache(maxsize=256)
def _utm_transformer(zone: int, south: bool, inverse: bool) -> Transformer:
    epsg = (32700 if south else 32600) + zone
    if inverse:
        return Transformer.from_crs(epsg, 4326, always_xy=True)
    return Transformer.from_crs(4326, epsg, always_xy=True)


@lru_cache(maxsize=2)
def _mercator_transformer(inverse: bool) -> Transformer:
    if inverse:
        return Transformer.from_crs(3857, 4326, always_xy=True)
    return Transformer.from_crs(4326, 3857, always_xy=True)


def utm_zone(lon: ArrayLike) -> Any:
    """UTM zone number 1-60 of a longitude: floor((lon + 180) / 6) + 1."""
    lo = wrap_lon(as_lon("lon", lon))
    z = (np.floor((lo + 180.0) / 6.0).astype(int) % 60) + 1
    return int(z) if np.ndim(z) == 0 else z


def _check_zone(zone: Any) -> np.ndarray:
    z = np.asarray(zone)
    if not np.issubdtype(z.dtype, np.integer):
        zf = as_float("zone", z)
        if np.any(zf != np.round(zf)):
            raise CoordinateError(f"zone={zone!r} must be an integer from 1 to 60")
        z = zf.astype(int)
    if np.any((z < 1) | (z > 60)):
        raise CoordinateError(f"zone={zone!r} is outside 1-60; UTM zones are numbered 1 to 60")
    return z


def _check_hemisphere(hemisphere: Any) -> np.ndarray:
    h = np.char.upper(np.asarray(hemisphere, dtype=str))
    if not np.all((h == "N") | (h == "S")):
        raise CoordinateError(f"hemisphere={hemisphere!r} must be 'N' or 'S'")
    return h


def to_utm(lat: ArrayLike, lon: ArrayLike, zone: int | None = None) -> UTMCoordinate:
    """WGS84 latitude/longitude to UTM easting/northing in metres.

    ``zone`` forces one zone for every point (useful near zone edges);
    otherwise each point gets its own zone.  The hemisphere is "S" for
    latitudes below 0 (false northing 10,000,000 m).
    """
    la, lo = broadcast(lat=as_lat("lat", lat), lon=as_lon("lon", lon))
    lo = wrap_lon(lo)
    zones = np.broadcast_to(_check_zone(zone), la.shape) if zone is not None else utm_zone(lo)
    zones = np.asarray(zones)
    south = la < 0
    easting = np.empty(la.shape)
    northing = np.empty(la.shape)
    keys = zones * 2 + south
    uniq = np.unique(keys)
    if uniq.size == 1:
        t = _utm_transformer(int(uniq[0]) // 2, bool(uniq[0] % 2), False)
        easting[...], northing[...] = t.transform(lo, la)
    else:
        for key in uniq:
            mask = keys == key
            t = _utm_transformer(int(key) // 2, bool(key % 2), False)
            easting[mask], northing[mask] = t.transform(lo[mask], la[mask])
    hemi = np.where(south, "S", "N")
    if la.ndim == 0:
        return UTMCoordinate(float(easting), float(northing), int(zones), str(hemi))
    return UTMCoordinate(easting, northing, zones, hemi)


def from_utm(
    easting_m: ArrayLike, northing_m: ArrayLike, zone: ArrayLike, hemisphere: Any
) -> tuple[Any, Any]:
    """UTM easting/northing (metres), zone (1-60) and hemisphere ("N"/"S") to (lat, lon)."""
    e, n = broadcast(
        easting_m=as_float("easting_m", easting_m), northing_m=as_float("northing_m", northing_m)
    )
    z = np.broadcast_to(_check_zone(zone), e.shape)
    h = np.broadcast_to(_check_hemisphere(hemisphere), e.shape)
    lat = np.empty(e.shape)
    lon = np.empty(e.shape)
    keys = z * 2 + (h == "S")
    for key in np.unique(keys):
        mask = keys == key
        t = _utm_transformer(int(key) // 2, bool(key % 2), True)
        lon[mask], lat[mask] = t.transform(e[mask], n[mask])
    return scalar_out(lat), scalar_out(lon)


def to_web_mercator(lat: ArrayLike, lon: ArrayLike) -> tuple[Any, Any]:
    """WGS84 latitude/longitude to Web Mercator (EPSG:3857) x, y in metres."""
    la, lo = broadcast(lat=as_lat("lat", lat), lon=as_lon("lon", lon))
    bad = np.abs(la) > MAX_MERCATOR_LAT_DEG
    if np.any(bad):
        first = float(la[bad].flat[0]) if la.ndim else float(la)
        raise CoordinateError(
            f"lat={first!r} is beyond Web Mercator's limit of ±{MAX_MERCATOR_LAT_DEG:.4f} degrees; "
            "use UTM or another projection near the poles"
        )
    x, y = _mercator_transformer(False).transform(fold_lon(lo), la)
    return scalar_out(x), scalar_out(y)


def from_web_mercator(x: ArrayLike, y: ArrayLike) -> tuple[Any, Any]:
    """Web Mercator (EPSG:3857) x, y in metres to (lat, lon)."""
    xx, yy = broadcast(x=as_float("x", x), y=as_float("y", y))
    lon, lat = _mercator_transformer(True).transform(xx, yy)
    return scalar_out(lat), scalar_out(lon)
