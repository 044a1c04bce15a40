"""Input checks shared by the geodesy functions.

Each check turns its input into a float64 array and raises
``CoordinateError`` (a ``ValueError``) naming the argument and the first bad
value.  ``scalar_out`` turns 0-d results back into Python floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cartoqa.errors import CoordinateError

FloatArray = NDArray[np.float64]

#: Longitudes are accepted in [-LON_LIMIT_DEG, LON_LIMIT_DEG] (0..360 inputs included).
LON_LIMIT_DEG = 360.0


def _numeric(name: str, value: ArrayLike) -> FloatArray:
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise CoordinateError(
            f"{name}={value!r} is not a number or an array of numbers; pass degrees as floats"
        ) from exc


def as_float(name: str, value: ArrayLike) -> FloatArray:
    """Return ``value`` as a float64 array; raise if it is not numeric or holds NaN/inf."""
    arr = _numeric(name, value)
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)].flat[0] if arr.ndim else arr
        raise CoordinateError(
            f"{name} contains {float(bad)!r}; every value must be a finite number"
        )
    return arr


def _within(name: str, value: ArrayLike, limit: float, what: str) -> FloatArray:
    """float64 array with every |value| <= limit; one pass in the common, valid case."""
    arr = _numeric(name, value)
    if arr.size == 0 or (-limit <= arr.min() and arr.max() <= limit):  # False for NaN, inf
        return arr
    as_float(name, arr)  # raises for NaN/inf with its own message
    bad = np.abs(arr) > limit
    first = float(arr[bad].flat[0]) if arr.ndim else float(arr)
    raise CoordinateError(f"{name}={first!r} is outside [-{limit:g}, {limit:g}] degrees; {what}")


def as_lat(name: str, value: ArrayLike) -> FloatArray:
    """Latitude in degrees, within [-90, 90]."""
    return _within(
        name, value, 90.0, "latitudes come first (lat, lon): check for swapped arguments"
    )


def as_lon(name: str, value: ArrayLike) -> FloatArray:
    """Longitude in degrees, within [-360, 360]."""
    return _within(name, value, LON_LIMIT_DEG, "pass longitudes in degrees")


def broadcast(**arrays: FloatArray) -> tuple[FloatArray, ...]:
    """Broadcast named arrays together, or raise naming each argument's shape."""
    try:
        out = np.broadcast_arrays(*arrays.values())
    except ValueError as exc:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise CoordinateError(
            f"shapes do not match: {shapes}; pass scalars or arrays of one shape"
        ) from exc
    return tuple(out)


def as_path(
    lats: ArrayLike, lons: ArrayLike, *, min_points: int = 1
) -> tuple[FloatArray, FloatArray]:
    """A sequence of vertices: two 1-d arrays of equal length, at least ``min_points`` long."""
    la = as_lat("lats", lats)
    lo = as_lon("lons", lons)
    if la.ndim != 1 or lo.ndim != 1:
        raise CoordinateError(
            f"lats and lons must be 1-d sequences, got shapes {la.shape} and {lo.shape}"
        )
    if la.shape != lo.shape:
        raise CoordinateError(
            f"lats has {la.size} values and lons has {lo.size}; pass one longitude per latitude"
        )
    if la.size < min_points:
        raise CoordinateError(f"need at least {min_points} points, got {la.size}")
    return la, lo


def scalar_out(arr: Any) -> Any:
    """Return a Python float for 0-d arrays, the array otherwise."""
    arr = np.asarray(arr)
    if arr.ndim == 0:
        return float(arr)
    return arr


def wrap_lon(lon_deg: FloatArray) -> FloatArray:
    """Wrap longitudes to [-180, 180)."""
    return (np.asarray(lon_deg) + 180.0) % 360.0 - 180.0


def fold_lon(lon_deg: FloatArray) -> FloatArray:
    """Keep longitudes in [-180, 180] as they are; wrap the others (200 -> -160)."""
    lon = np.asarray(lon_deg)
    return np.where(np.abs(lon) <= 180.0, lon, wrap_lon(lon))
