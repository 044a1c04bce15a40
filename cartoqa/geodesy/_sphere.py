"""Great-circle geometry on a sphere of radius EARTH_RADIUS_KM.

Degrees in, latitude first; scalars give floats, arrays give arrays.
Arguments to arcsin/arccos are clamped to [-1, 1] against rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cartoqa.errors import CoordinateError

from ._validate import (
    LON_LIMIT_DEG,
    FloatArray,
    as_float,
    as_lat,
    as_lon,
    broadcast,
    scalar_out,
    wrap_lon,
)

#: Mean Earth radius used by every distance in cartoqa (GPSBench's convention).
EARTH_RADIUS_KM = 6371.0

_COMPASS_8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_COMPASS_4 = ("N", "E", "S", "W")


def _points(
    lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    p = broadcast(
        lat1=as_lat("lat1", lat1),
        lon1=as_lon("lon1", lon1),
        lat2=as_lat("lat2", lat2),
        lon2=as_lon("lon2", lon2),
    )
    return tuple(np.radians(a) for a in p)  # type: ignore[return-value]


_BLOCK = 8192  # elements per block: the working buffers stay in the CPU cache


def _tan2(x: Any, half: float, out: Any) -> Any:
    """tan²(x · half) into ``out``."""
    np.multiply(x, half, out=out)
    np.tan(out, out=out)
    return np.multiply(out, out, out=out)


def _arc_block(
    a1: Any, b1: Any, a2: Any, b2: Any, half: float, scale: float, bufs: Any, out: Any
) -> None:
    """scale · central angle for one block of 1-d arrays, written into ``out``."""
    n = out.shape[0]
    x, y, c, d = (b[:n] for b in bufs)
    np.subtract(a2, a1, out=d)
    _tan2(d, half, x)  # tan²(Δφ/2)
    np.subtract(b2, b1, out=d)
    _tan2(d, half, y)  # tan²(Δλ/2)
    np.add(x, 1.0, out=d)
    np.divide(x, d, out=x)  # sin²(Δφ/2)
    np.add(y, 1.0, out=d)
    np.divide(y, d, out=y)  # sin²(Δλ/2)
    for lat in (a1, a2):
        _tan2(lat, half, c)
        np.add(c, 1.0, out=d)
        np.subtract(1.0, c, out=c)
        np.divide(c, d, out=c)  # cos φ
        np.multiply(y, c, out=y)
    np.add(x, y, out=x)
    np.clip(x, 0.0, 1.0, out=x)
    np.sqrt(x, out=x)
    np.arcsin(x, out=x)
    np.multiply(x, 2.0 * scale, out=out)


def _arc_scalar(a1: float, b1: float, a2: float, b2: float, half: float, scale: float) -> float:
    """``_arc`` for four floats, with the same half-angle identities in ``math``."""
    tp, tl = math.tan((a2 - a1) * half), math.tan((b2 - b1) * half)
    u1, u2 = math.tan(a1 * half) ** 2, math.tan(a2 * half) ** 2
    a = tp * tp / (1 + tp * tp) + (1 - u1) / (1 + u1) * (1 - u2) / (1 + u2) * (
        tl * tl / (1 + tl * tl)
    )
    return 2.0 * scale * math.asin(math.sqrt(min(max(a, 0.0), 1.0)))


def _arc(a1: Any, b1: Any, a2: Any, b2: Any, half: float, scale: float = 1.0) -> Any:
    """scale × the haversine central angle between points 1 and 2.

    Angles in any unit; ``half`` turns them into half-angles in radians.
    a = sin²(Δφ/2) + cos φ1 cos φ2 sin²(Δλ/2), with the sines and cosines
    from half-angle tangents (sin² x = t²/(1+t²), cos 2x = (1-t²)/(1+t²),
    t = tan x): exact identities, free of cancellation for small angles, and
    several times faster on large arrays, because numpy vectorises float64
    ``tan`` on common CPUs but not ``sin`` or ``cos``.  Large arrays are
    worked on in cache-sized blocks.
    """
    shape = np.broadcast_shapes(np.shape(a1), np.shape(b1), np.shape(a2), np.shape(b2))
    if shape == ():
        return _arc_scalar(float(a1), float(b1), float(a2), float(b2), half, scale)
    if len(shape) == 1 and shape[0] <= _BLOCK:
        # one block: the ufuncs broadcast scalars and length-1 arrays themselves
        out = np.empty(shape[0])
        _arc_block(a1, b1, a2, b2, half, scale, [np.empty(shape[0]) for _ in range(4)], out)
        return out
    flat = [np.broadcast_to(v, shape).ravel() for v in (a1, b1, a2, b2)]
    n = flat[0].shape[0]
    out = np.empty(n)
    bufs = [np.empty(min(n, _BLOCK)) for _ in range(4)]
    for i in range(0, n, _BLOCK):
        j = min(i + _BLOCK, n)
        a1b, b1b, a2b, b2b = (v[i:j] for v in flat)
        _arc_block(a1b, b1b, a2b, b2b, half, scale, bufs, out[i:j])
    return out.reshape(shape)


def _central_angle(phi1: Any, lam1: Any, phi2: Any, lam2: Any) -> Any:
    """Haversine central angle in radians (inputs in radians)."""
    return _arc(phi1, lam1, phi2, lam2, 0.5)


def _bearing_rad(phi1: Any, lam1: Any, phi2: Any, lam2: Any) -> Any:
    dlam = lam2 - lam1
    y = np.sin(dlam) * np.cos(phi2)
    x = np.cos(phi1) * np.sin(phi2) - np.sin(phi1) * np.cos(phi2) * np.cos(dlam)
    return np.arctan2(y, x)


def _normalise_deg(deg: Any) -> Any:
    out = np.mod(deg, 360.0)
    return np.where(out >= 360.0, 0.0, out)


def _plain_points(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> bool:
    """True for four Python (or numpy) floats that are valid degrees: the scalar fast path,
    which computes exactly what the array path computes for 0-d inputs.  NaN fails the
    range test, so bad input still reaches the checks that name it."""
    return (
        type(lat1) in _FLOATS
        and type(lon1) in _FLOATS
        and type(lat2) in _FLOATS
        and type(lon2) in _FLOATS
        and -90.0 <= lat1 <= 90.0
        and -90.0 <= lat2 <= 90.0
        and -LON_LIMIT_DEG <= lon1 <= LON_LIMIT_DEG
        and -LON_LIMIT_DEG <= lon2 <= LON_LIMIT_DEG
    )


_FLOATS = (float, np.float64)
_HALF_DEG = np.pi / 360.0  # degrees to half-angles in radians


def distance_km(lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike) -> Any:
    """Great-circle (haversine) distance in km on the sphere R = EARTH_RADIUS_KM."""
    if _plain_points(lat1, lon1, lat2, lon2):
        a1, b1, a2, b2 = (float(v) for v in (lat1, lon1, lat2, lon2))  # type: ignore[arg-type]
        return _arc_scalar(a1, b1, a2, b2, _HALF_DEG, EARTH_RADIUS_KM)
    la1, lo1, la2, lo2 = broadcast(
        lat1=as_lat("lat1", lat1),
        lon1=as_lon("lon1", lon1),
        lat2=as_lat("lat2", lat2),
        lon2=as_lon("lon2", lon2),
    )
    # degrees go straight to half-angles in radians
    return scalar_out(_arc(la1, lo1, la2, lo2, np.pi / 360.0, EARTH_RADIUS_KM))


def initial_bearing_deg(lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike) -> Any:
    """Forward azimuth from point 1 to point 2, clockwise from north, in [0, 360).

    Identical points give 0.  From a pole every direction is south (or north),
    and the result follows the usual atan2 convention there.
    """
    phi1, lam1, phi2, lam2 = _points(lat1, lon1, lat2, lon2)
    return scalar_out(_normalise_deg(np.degrees(_bearing_rad(phi1, lam1, phi2, lam2))))


def compass_direction(bearing_deg: ArrayLike, points: int = 8) -> Any:
    """Name the compass sector of a bearing: "N", "NE", ... (8 points) or "N", "E", "S", "W" (4).

    Eight sectors of 45 degrees centred on the directions: N is [337.5, 22.5),
    NE [22.5, 67.5), and so on.  Four sectors of 90 degrees: N is [315, 45).
    A scalar gives a str, an array gives an array of str.
    """
    b = _normalise_deg(as_float("bearing_deg", bearing_deg))
    names: tuple[str, ...]
    if points == 8:
        names, width = _COMPASS_8, 45.0
    elif points == 4:
        names, width = _COMPASS_4, 90.0
    else:
        raise CoordinateError(f"points={points!r} is not supported; use 4 or 8")
    idx = (np.floor((b + width / 2.0) / width).astype(int)) % len(names)
    labels = np.asarray(names)[idx]
    if labels.ndim == 0:
        return str(labels)
    return labels


def interpolate(
    lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike, fraction: ArrayLike
) -> tuple[Any, Any]:
    """The point ``fraction`` of the way along the great circle from point 1 to 2 (slerp).

    ``fraction`` 0 gives point 1, 1 gives point 2; values outside [0, 1]
    extrapolate along the same great circle.  Returns (lat, lon) with lon in
    [-180, 180).  Antipodal points have no unique great circle: ValueError.
    """
    phi1, lam1, phi2, lam2 = _points(lat1, lon1, lat2, lon2)
    f = as_float("fraction", fraction)
    phi1, lam1, phi2, lam2, f = broadcast(lat1=phi1, lon1=lam1, lat2=phi2, lon2=lam2, fraction=f)
    v1 = np.stack([np.cos(phi1) * np.cos(lam1), np.cos(phi1) * np.sin(lam1), np.sin(phi1)])
    v2 = np.stack([np.cos(phi2) * np.cos(lam2), np.cos(phi2) * np.sin(lam2), np.sin(phi2)])
    dot = np.clip(np.sum(v1 * v2, axis=0), -1.0, 1.0)
    omega = np.arccos(dot)
    sin_omega = np.sin(omega)
    if np.any((dot < 0) & (sin_omega < 1e-12)):
        raise CoordinateError(
            "interpolate: the two points are antipodal, so no unique great circle joins them; "
            "move one point slightly"
        )
    small = sin_omega < 1e-12
    safe = np.where(small, 1.0, sin_omega)
    w1 = np.where(small, 1.0 - f, np.sin((1.0 - f) * omega) / safe)
    w2 = np.where(small, f, np.sin(f * omega) / safe)
    v = w1 * v1 + w2 * v2
    lat = np.degrees(np.arctan2(v[2], np.hypot(v[0], v[1])))
    lon = np.degrees(np.arctan2(v[1], v[0]))
    return scalar_out(lat), scalar_out(wrap_lon(lon))


def destination(
    lat: ArrayLike, lon: ArrayLike, bearing_deg: ArrayLike, distance_km: ArrayLike
) -> tuple[Any, Any]:
    """The point reached from (lat, lon) after ``distance_km`` along the initial bearing.

    Returns (lat, lon) with lon in [-180, 180).  Negative distances go backwards.
    """
    if (
        _plain_points(lat, lon, 0.0, 0.0)
        and type(bearing_deg) in _FLOATS
        and type(distance_km) in _FLOATS
        and math.isfinite(bearing_deg)  # type: ignore[arg-type]
        and math.isfinite(distance_km)  # type: ignore[arg-type]
    ):  # one point: the same arithmetic on numpy scalars, without the array checks
        lat2, lon2 = _destination_rad(
            np.radians(lat), np.radians(lon), np.radians(bearing_deg), distance_km
        )
        return float(lat2), float(lon2)
    phi, lam, theta, d = broadcast(
        lat=np.radians(as_lat("lat", lat)),
        lon=np.radians(as_lon("lon", lon)),
        bearing_deg=np.radians(as_float("bearing_deg", bearing_deg)),
        distance_km=as_float("distance_km", distance_km),
    )
    lat2, lon2 = _destination_rad(phi, lam, theta, d)
    return scalar_out(lat2), scalar_out(lon2)


def _destination_rad(phi: Any, lam: Any, theta: Any, d: Any) -> tuple[Any, Any]:
    """``destination`` from radians and km, in degrees (lon wrapped)."""
    delta = d / EARTH_RADIUS_KM
    sin_phi2 = np.clip(
        np.sin(phi) * np.cos(delta) + np.cos(phi) * np.sin(delta) * np.cos(theta), -1.0, 1.0
    )
    phi2 = np.arcsin(sin_phi2)
    lam2 = lam + np.arctan2(
        np.sin(theta) * np.sin(delta) * np.cos(phi), np.cos(delta) - np.sin(phi) * sin_phi2
    )
    return np.degrees(phi2), wrap_lon(np.degrees(lam2))


def cross_track_km(
    lat: ArrayLike,
    lon: ArrayLike,
    lat1: ArrayLike,
    lon1: ArrayLike,
    lat2: ArrayLike,
    lon2: ArrayLike,
) -> Any:
    """Signed distance in km from (lat, lon) to the great circle through point 1 then point 2.

    Positive when the point lies to the right of the direction of travel from
    point 1 to point 2, negative to the left.
    """
    phi, lam, phi1, lam1 = _points(lat, lon, lat1, lon1)
    phi2, lam2 = (np.radians(as_lat("lat2", lat2)), np.radians(as_lon("lon2", lon2)))
    phi, lam, phi1, lam1, phi2, lam2 = broadcast(
        lat=phi, lon=lam, lat1=phi1, lon1=lam1, lat2=phi2, lon2=lam2
    )
    return scalar_out(EARTH_RADIUS_KM * _cross_track_rad(phi, lam, phi1, lam1, phi2, lam2))


def _cross_track_rad(phi: Any, lam: Any, phi1: Any, lam1: Any, phi2: Any, lam2: Any) -> Any:
    d13 = _central_angle(phi1, lam1, phi, lam)
    t13 = _bearing_rad(phi1, lam1, phi, lam)
    t12 = _bearing_rad(phi1, lam1, phi2, lam2)
    return np.arcsin(np.clip(np.sin(d13) * np.sin(t13 - t12), -1.0, 1.0))


def _segment_distance_rad(phi: Any, lam: Any, phi1: Any, lam1: Any, phi2: Any, lam2: Any) -> Any:
    """Angular distance from points to the great-circle *segment* 1-2 (clamped to its ends);
    the ends may be one segment (floats) or one per point (arrays)."""
    d13 = _central_angle(phi1, lam1, phi, lam)
    d23 = _central_angle(phi2, lam2, phi, lam)
    d12 = _central_angle(phi1, lam1, phi2, lam2)
    if np.ndim(d12) == 0 and d12 < 1e-15:
        return d13
    t13 = _bearing_rad(phi1, lam1, phi, lam)
    t12 = _bearing_rad(phi1, lam1, phi2, lam2)
    xt = np.arcsin(np.clip(np.sin(d13) * np.sin(t13 - t12), -1.0, 1.0))
    cos_xt = np.maximum(np.cos(xt), 1e-300)
    along = np.arccos(np.clip(np.cos(d13) / cos_xt, -1.0, 1.0))
    # the foot of the perpendicular is behind point 1 when the bearing differs by > 90 degrees
    behind = np.cos(t13 - t12) < 0
    along = np.where(behind, -along, along)
    inside = (along >= 0) & (along <= d12)
    # a segment of no length is its end point
    return np.where(d12 < 1e-15, d13, np.where(inside, np.abs(xt), np.minimum(d13, d23)))
