"""Polygons, bounding boxes and paths on the sphere."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cartoqa.errors import CoordinateError

from ._sphere import EARTH_RADIUS_KM, _central_angle, _segment_distance_rad
from ._validate import as_float, as_path


def _open_ring(lats: ArrayLike, lons: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    la, lo = as_path(lats, lons, min_points=3)
    if la.size > 3 and la[0] == la[-1] and lo[0] == lo[-1]:
        la, lo = la[:-1], lo[:-1]  # a closed ring: drop the repeated first vertex
    if la.size < 3:
        raise CoordinateError(f"a polygon needs at least 3 distinct vertices, got {la.size}")
    return la, lo


def polygon_area_km2(lats: ArrayLike, lons: ArrayLike) -> float:
    """Area in km² of the simple spherical polygon with these vertices, in order.

    The sides are great-circle arcs; a closing vertex equal to the first is
    ignored.  The area is the sum of the *signed* spherical excesses of the
    triangles (first vertex, side start, side end) over every side, times R²:
    triangles where the fan leaves the polygon count negative, so the sum is
    exact for non-convex polygons too (an unsigned fan over-counts them).
    Either orientation gives the same answer: the signed sum, taken modulo
    4π, is the region on one side of the ring, and the function returns the
    smaller of the two regions the ring bounds (at most half the sphere).
    For a self-intersecting ring the value is the winding-weighted sum and
    has no single meaning.
    """
    la, lo = _open_ring(lats, lons)
    phi, lam = np.radians(la), np.radians(lo)
    v = np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)], axis=1)
    p = v[0]
    a, b = v, np.roll(v, -1, axis=0)
    # P·(A×B) = P·((A-P)×(B-P)): the differences keep precision for small polygons
    num = np.cross(a - p, b - p) @ p
    den = 1.0 + a @ p + b @ p + np.einsum("ij,ij->i", a, b)
    total = float(np.sum(2.0 * np.arctan2(num, den)))  # signed, ≡ the left region mod 4π
    total -= 4.0 * np.pi * round(total / (4.0 * np.pi))  # into [-2π, 2π]
    return float(EARTH_RADIUS_KM**2 * abs(total))


def polygon_is_simple(lats: ArrayLike, lons: ArrayLike) -> bool:
    """Whether the spherical polygon with these vertices, in order, joined by great-circle
    arcs, has no two edges that cross or touch other than neighbours at their shared vertex
    (a polygon whose area is well defined)."""
    la, lo = as_path(lats, lons, min_points=3)
    v = [
        (math.cos(p) * math.cos(q), math.cos(p) * math.sin(q), math.sin(p))
        for p, q in zip(np.radians(la).tolist(), np.radians(lo).tolist(), strict=True)
    ]
    n = len(v)
    edges = [(v[k], v[(k + 1) % n]) for k in range(n)]
    for a in range(n):
        for b in range(a + 2, n):
            if a == 0 and b == n - 1:
                continue  # neighbours across the closing vertex
            if _arcs_meet(*edges[a], *edges[b]):
                return False
    return True


_Vec = tuple[float, float, float]


def _cross(a: _Vec, b: _Vec) -> _Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a: _Vec, b: _Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _arcs_meet(a: _Vec, b: _Vec, c: _Vec, d: _Vec) -> bool:
    """Whether the minor great-circle arcs a-b and c-d share a point."""
    n1, n2 = _cross(a, b), _cross(c, d)
    t = _cross(n1, n2)
    size = math.sqrt(_dot(t, t))
    if size < 1e-12:  # on one great circle: they meet where they overlap
        return any(_on_arc(p, a, b, n1) for p in (c, d)) or any(
            _on_arc(p, c, d, n2) for p in (a, b)
        )
    t = (t[0] / size, t[1] / size, t[2] / size)
    return any(_on_arc(p, a, b, n1) and _on_arc(p, c, d, n2) for p in (t, (-t[0], -t[1], -t[2])))


def _on_arc(p: _Vec, a: _Vec, b: _Vec, n: _Vec) -> bool:
    """Whether p, on the great circle of a and b (normal n), lies on the minor arc a-b."""
    return _dot(_cross(a, p), n) >= -1e-12 and _dot(_cross(p, b), n) >= -1e-12


def polygon_perimeter_km(lats: ArrayLike, lons: ArrayLike) -> float:
    """Perimeter in km: the sum of the haversine sides, the closing side included."""
    la, lo = _open_ring(lats, lons)
    phi, lam = np.radians(la), np.radians(lo)
    sides = _central_angle(phi, lam, np.roll(phi, -1), np.roll(lam, -1))
    return float(EARTH_RADIUS_KM * np.sum(sides))


class BoundingBox(NamedTuple):
    """The box around a set of points, as GPSBench's bounding-box task asks for it."""

    min_lat: float
    """Southernmost latitude (degrees)."""
    max_lat: float
    """Northernmost latitude (degrees)."""
    min_lon: float
    """Westernmost longitude (degrees, plain minimum: no antimeridian wrap)."""
    max_lon: float
    """Easternmost longitude (degrees, plain maximum)."""
    center_lat: float
    """Latitude of the centre of the bounds: (min_lat + max_lat) / 2."""
    center_lon: float
    """Longitude of the centre of the bounds: (min_lon + max_lon) / 2."""
    centroid_lat: float
    """Mean latitude of the points."""
    centroid_lon: float
    """Mean longitude of the points."""
    diagonal_km: float
    """Haversine distance from (min_lat, min_lon) to (max_lat, max_lon)."""


def bounding_box(lats: ArrayLike, lons: ArrayLike) -> BoundingBox:
    """Min/max latitude and longitude, centre of bounds, centroid (mean) and diagonal in km."""
    la, lo = as_path(lats, lons, min_points=1)
    mn_la, mx_la, mn_lo, mx_lo = la.min(), la.max(), lo.min(), lo.max()
    diag = EARTH_RADIUS_KM * _central_angle(
        np.radians(mn_la), np.radians(mn_lo), np.radians(mx_la), np.radians(mx_lo)
    )
    return BoundingBox(
        min_lat=float(mn_la),
        max_lat=float(mx_la),
        min_lon=float(mn_lo),
        max_lon=float(mx_lo),
        center_lat=float((mn_la + mx_la) / 2.0),
        center_lon=float((mn_lo + mx_lo) / 2.0),
        centroid_lat=float(la.mean()),
        centroid_lon=float(lo.mean()),
        diagonal_km=float(diag),
    )


def path_length_m(lats: ArrayLike, lons: ArrayLike) -> float:
    """Length in metres of the polyline through these vertices (sum of haversine legs)."""
    la, lo = as_path(lats, lons, min_points=1)
    phi, lam = np.radians(la), np.radians(lo)
    legs = _central_angle(phi[:-1], lam[:-1], phi[1:], lam[1:])
    return float(EARTH_RADIUS_KM * 1000.0 * np.sum(legs))


def simplify_rdp(lats: ArrayLike, lons: ArrayLike, epsilon_km: float) -> NDArray[np.intp]:
    """Ramer-Douglas-Peucker simplification; returns the indices of the kept vertices.

    A vertex is kept when it lies farther than ``epsilon_km`` from the
    great-circle segment joining the kept vertices around it.  The first and
    last vertices are always kept; indices come out sorted.
    """
    eps = float(as_float("epsilon_km", epsilon_km))
    if eps < 0:
        raise CoordinateError(f"epsilon_km={eps!r} is negative; pass a tolerance >= 0 km")
    return np.flatnonzero(_rdp_thresholds_rad(lats, lons) > eps / EARTH_RADIUS_KM)


def rdp_thresholds_km(lats: ArrayLike, lons: ArrayLike) -> NDArray[np.float64]:
    """For each vertex, the largest tolerance in km at which ``simplify_rdp`` still keeps it
    (infinite for the first and last): how close a simplification is to keeping or dropping
    each point."""
    return _rdp_thresholds_rad(lats, lons) * EARTH_RADIUS_KM


def _rdp_thresholds_rad(lats: ArrayLike, lons: ArrayLike) -> NDArray[np.float64]:
    """For each vertex, the largest tolerance (radians) at which RDP keeps it (infinite for
    the ends).  RDP splits a span at its farthest vertex whatever the tolerance; a vertex
    survives while it and every vertex it was split below are farther than the tolerance,
    so its threshold is the smallest distance on that chain."""
    la, lo = as_path(lats, lons, min_points=1)
    n = la.size
    out = np.zeros(n)
    out[0] = out[-1] = np.inf
    if n <= 2:
        return out
    phi, lam = np.radians(la), np.radians(lo)
    span = _span_distances(phi, lam) if n <= _TABLE_POINTS else None
    stack = [(0, n - 1, np.inf)]
    while stack:
        i, j, above = stack.pop()
        if j - i < 2:
            continue
        if span is None:
            d = _segment_distance_rad(
                phi[i + 1 : j], lam[i + 1 : j], phi[i], lam[i], phi[j], lam[j]
            )
        else:
            d = span[i, j, i + 1 : j]
        k = int(np.argmax(d))
        m = i + 1 + k
        out[m] = min(above, float(d[k]))
        stack.append((i, m, out[m]))
        stack.append((m, j, out[m]))
    return out


#: paths up to this many points get every span's distances from one vectorised call
_TABLE_POINTS = 32


def _span_distances(phi: NDArray[np.float64], lam: NDArray[np.float64]) -> NDArray[np.float64]:
    """table[i, j, k]: the distance of vertex k from the segment i-j, for every i < k < j
    (zero elsewhere): the distances RDP may ask for, in one vectorised call instead of one
    small one per span, which short paths (the GPS task's) spend most of their time on."""
    n = phi.size
    i, k, j = (a.ravel() for a in np.indices((n, n, n)))
    keep = (i < k) & (k < j)
    i, k, j = i[keep], k[keep], j[keep]
    table = np.zeros((n, n, n))
    table[i, j, k] = _segment_distance_rad(phi[k], lam[k], phi[i], lam[i], phi[j], lam[j])
    return table
