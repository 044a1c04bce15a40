"""Where an extract's data actually is: a coarse occupancy grid, and the share of a view it covers.

An extract without a header box is known only by its nodes, and their
bounding box can be mostly empty (two towns and the road between them, or a
city cut out along a polygon).  The grid says where the data is drawn:

- cells of ``CELL_M`` metres on the ground (at the data's median latitude) in
  Web Mercator, the projection of the map images, so that shares of a box
  are shares of an image's pixels;
- a cell is *occupied* when it holds a node, or a way passes through it (each
  way's segments are sampled every half cell, so a straight street with a
  node at each end covers every cell between them);
- the occupied cells are then closed (dilated and eroded by a disk of
  ``CLOSING_CELLS`` cells): a gap narrower than about twice that radius
  (300 m) between occupied cells -- a street block without buildings, a
  river under its bridges, a square -- counts as covered; the outer edge of
  the data does not grow, and an empty area wider than that stays empty.

Water drawn from the coastline counts only where nodes or ways are: the sea
off a coastal extract without a header box is not covered.

The grid also keeps the convex hull of the data's nodes (``CoverageGrid.hull``):
the data's outer edge, where an extract cut along a polygon ends even though
its header box goes on (issue 26: a Heidelberg view 48 % past the cut was
counted as covered by its box).  ``hull_share`` is the share of a box inside
that hull (and inside a given box, such as the header's).

``CoverageGrid.share(bounds)`` is the covered share of a (south, west, north,
east) box, weighted by area (a cell the box cuts counts for the part inside),
from a summed-area table: a few microseconds a query.  ``box_share`` is the
same for a plain box (an extract's header box).
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CELL_M",
    "CLOSING_CELLS",
    "MAX_CELLS",
    "CoverageGrid",
    "box_share",
    "coverage_of",
    "hull_share",
]

#: a cell's side on the ground, in metres, at the data's median latitude
CELL_M = 50.0
#: the radius, in cells, of the disk that closes gaps between occupied cells
CLOSING_CELLS = 3
#: the most cells a grid holds; a wider extent gets larger cells
MAX_CELLS = 4_000_000

_R = 6378137.0  # the sphere of EPSG:3857
_MAX_LAT = 85.0511287798066


def _mercator(lat: Any, lon: Any) -> tuple[Any, Any]:
    """EPSG:3857 metres (the spherical formula; latitudes clipped to the projection's limit)."""
    la = np.radians(np.clip(lat, -_MAX_LAT, _MAX_LAT))
    return _R * np.radians(lon), _R * np.log(np.tan(math.pi / 4 + la / 2))


def _mercator_box(bounds: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    s, w, n, e = bounds
    if not (s < n and w < e):
        raise ValueError(
            f"box {bounds} is empty or inverted; give (south, west, north, east) with "
            "south < north and west < east"
        )
    s_, n_ = max(-_MAX_LAT, s), min(_MAX_LAT, n)
    y0 = _R * math.log(math.tan(math.pi / 4 + math.radians(s_) / 2))
    y1 = _R * math.log(math.tan(math.pi / 4 + math.radians(n_) / 2))
    return _R * math.radians(w), y0, _R * math.radians(e), y1


def box_share(
    bounds: tuple[float, float, float, float], box: tuple[float, float, float, float]
) -> float:
    """The share of ``bounds`` (south, west, north, east) inside ``box``, by area on the map."""
    x0, y0, x1, y1 = _mercator_box(bounds)
    bx0, by0, bx1, by1 = _mercator_box(box)
    w = max(0.0, min(x1, bx1) - max(x0, bx0))
    h = max(0.0, min(y1, by1) - max(y0, by0))
    return w * h / ((x1 - x0) * (y1 - y0))


class CoverageGrid:
    """Covered cells of an extract in Web Mercator, with a summed-area table for box queries."""

    def __init__(
        self,
        covered: np.ndarray,
        *,
        x0: float,
        y0: float,
        cell: float,
        hull: np.ndarray | None = None,
    ) -> None:
        self.covered = np.asarray(covered, dtype=bool)
        """Row j, column i: the cell whose south-west corner is (x0 + i·cell, y0 + j·cell)."""
        self.x0 = float(x0)
        self.y0 = float(y0)
        self.cell = float(cell)
        """A cell's side in Web Mercator metres (``CELL_M`` / cos(latitude))."""
        self.hull = None if hull is None else np.asarray(hull, dtype=float).reshape(-1, 2)
        """The convex hull of the data's nodes, (x, y) Web Mercator metres in order; None when
        unknown (a grid made before hulls were kept, or by hand)."""
        ny, nx = self.covered.shape
        sums = np.zeros((ny + 1, nx + 1), dtype=np.int64)
        sums[1:, 1:] = self.covered.cumsum(0).cumsum(1)
        self._sums = sums
        self._nx, self._ny = nx, ny

    @property
    def covered_cells(self) -> int:
        return int(self._sums[-1, -1])

    def _cumulative(self, gx: float, gy: float) -> float:
        """Covered area (in cells) south-west of grid point (gx, gy): the summed-area table,
        interpolated bilinearly, which is exact for cells that are wholly in or out."""
        gx = min(max(gx, 0.0), self._nx)
        gy = min(max(gy, 0.0), self._ny)
        i = min(int(gx), self._nx - 1)
        j = min(int(gy), self._ny - 1)
        a, b = gx - i, gy - j
        s = self._sums
        s00, s10 = float(s[j, i]), float(s[j, i + 1])
        s01, s11 = float(s[j + 1, i]), float(s[j + 1, i + 1])
        return s00 * (1 - a) * (1 - b) + s10 * a * (1 - b) + s01 * (1 - a) * b + s11 * a * b

    def share(self, bounds: tuple[float, float, float, float]) -> float:
        """The covered share (0 to 1) of a (south, west, north, east) box, by area on the map."""
        x0, y0, x1, y1 = _mercator_box(bounds)
        c = self.cell
        gx0, gx1 = (x0 - self.x0) / c, (x1 - self.x0) / c
        gy0, gy1 = (y0 - self.y0) / c, (y1 - self.y0) / c
        f = self._cumulative
        inside = f(gx1, gy1) - f(gx0, gy1) - f(gx1, gy0) + f(gx0, gy0)
        return min(1.0, max(0.0, inside / ((gx1 - gx0) * (gy1 - gy0))))

    def hull_share(
        self,
        bounds: tuple[float, float, float, float],
        box: tuple[float, float, float, float] | None = None,
    ) -> float:
        """The share (0 to 1) of a (south, west, north, east) box inside the data's convex hull
        (and inside ``box`` when given), by area on the map (``hull_share``)."""
        return hull_share(bounds, self.hull, box)

    def save(self, path: Path) -> None:
        """Write the grid (bits packed) atomically, as a checked cache file (its SHA-256
        beside it: ``cartoqa.stores.cache_files``)."""
        from cartoqa.stores.cache_files import write_cache_file

        write_cache_file(path, self.to_bytes())

    def _arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {
            "covered": np.packbits(self.covered, axis=None),
            "shape": np.array(self.covered.shape),
            "frame": np.array([self.x0, self.y0, self.cell]),
        }
        if self.hull is not None:
            arrays["hull"] = self.hull
        return arrays

    def to_bytes(self) -> bytes:
        """The grid as ``save`` writes it (an npz), for a checked cache file."""
        buf = io.BytesIO()
        np.savez_compressed(buf, **self._arrays())  # type: ignore[arg-type]
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> CoverageGrid:
        """The grid from ``to_bytes``' bytes; ``ValueError``, ``KeyError``, ``EOFError`` or
        ``zipfile.BadZipFile`` when they are not one."""
        return cls.load(io.BytesIO(data))

    @classmethod
    def load(cls, path: Path | io.BytesIO) -> CoverageGrid:
        with np.load(path, allow_pickle=False) as z:
            ny, nx = (int(v) for v in z["shape"])
            bits = np.unpackbits(z["covered"], count=ny * nx).astype(bool).reshape(ny, nx)
            x0, y0, cell = (float(v) for v in z["frame"])
            hull = np.array(z["hull"]) if "hull" in z.files else None
        return cls(bits, x0=x0, y0=y0, cell=cell, hull=hull)


def hull_share(
    bounds: tuple[float, float, float, float],
    hull: np.ndarray | None,
    box: tuple[float, float, float, float] | None = None,
) -> float:
    """The share (0 to 1) of a (south, west, north, east) box inside ``hull`` (corners in Web
    Mercator metres, as ``CoverageGrid.hull``) and inside ``box`` when given, by area on the
    map; a hull of None leaves only the box (1.0 when there is no box either)."""
    from shapely.geometry import Polygon
    from shapely.geometry import box as rect

    x0, y0, x1, y1 = _mercator_box(bounds)
    view = rect(x0, y0, x1, y1)
    inside = view
    if hull is not None:
        corners = np.asarray(hull, dtype=float).reshape(-1, 2)
        inside = inside.intersection(Polygon(corners) if len(corners) >= 3 else Polygon())
    if box is not None:
        inside = inside.intersection(rect(*_mercator_box(box)))
    return min(1.0, max(0.0, inside.area / view.area))


def _disk(r: int) -> np.ndarray:
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    return np.asarray(xx * xx + yy * yy <= r * r + r)  # a disk, a little fuller than a circle's


def coverage_of(
    path: Path, *, cell_m: float = CELL_M, closing_cells: int = CLOSING_CELLS
) -> CoverageGrid:
    """The coverage grid of an OSM file's nodes and ways (read once, with node locations).

    Raises ``RuntimeError`` (from osmium) when the file cannot be read, and ``ValueError`` when
    it has no node with a valid location.
    """
    import osmium
    from scipy import ndimage

    node_lon: list[float] = []
    node_lat: list[float] = []
    way_lon: list[float] = []
    way_lat: list[float] = []
    joined: list[bool] = []  # True where a way point continues the previous point's way
    obj: Any
    for obj in osmium.FileProcessor(str(path), osmium.osm.NODE | osmium.osm.WAY).with_locations():
        if obj.is_node():
            loc = obj.location
            if loc.valid():
                node_lon.append(loc.lon)
                node_lat.append(loc.lat)
            continue
        cont = False
        for ref in obj.nodes:
            loc = ref.location
            if loc.valid():
                way_lon.append(loc.lon)
                way_lat.append(loc.lat)
                joined.append(cont)
                cont = True
            else:
                cont = False
    if not node_lat:
        raise ValueError(f"{path} has no node with a valid location")
    nx_, ny_ = _mercator(np.array(node_lat), np.array(node_lon))
    cell = cell_m / math.cos(math.radians(min(float(np.median(node_lat)), 85.0)))
    wx, wy = _mercator(np.array(way_lat), np.array(way_lon))
    # points every half cell along each segment (the segment's ends are nodes already)
    seg = np.flatnonzero(np.array(joined, dtype=bool))  # segment from point k-1 to point k
    if seg.size:
        dx, dy = wx[seg] - wx[seg - 1], wy[seg] - wy[seg - 1]
        steps = np.ceil(np.hypot(dx, dy) / (cell / 2)).astype(np.int64)
        extra = np.maximum(steps - 1, 0)
        owner = np.repeat(np.arange(seg.size), extra)
        first = np.cumsum(extra) - extra
        k = np.arange(owner.size) - np.repeat(first, extra) + 1
        t = k / steps[owner]
        px = np.concatenate([nx_, wx[seg - 1][owner] + t * dx[owner]])
        py = np.concatenate([ny_, wy[seg - 1][owner] + t * dy[owner]])
    else:
        px, py = nx_, ny_
    pad = closing_cells + 1
    lo_x, lo_y = float(px.min()), float(py.min())
    span_x, span_y = float(px.max()) - lo_x, float(py.max()) - lo_y
    cells = (span_x / cell + 2 * pad + 1) * (span_y / cell + 2 * pad + 1)
    if cells > MAX_CELLS:
        cell *= math.sqrt(cells / MAX_CELLS) * 1.01
    ncx = int(span_x / cell) + 1 + 2 * pad
    ncy = int(span_y / cell) + 1 + 2 * pad
    x0, y0 = lo_x - pad * cell, lo_y - pad * cell
    occupied = np.zeros((ncy, ncx), dtype=bool)
    ix = np.clip(((px - x0) / cell).astype(np.int64), 0, ncx - 1)
    iy = np.clip(((py - y0) / cell).astype(np.int64), 0, ncy - 1)
    occupied[iy, ix] = True
    covered = (
        ndimage.binary_closing(occupied, structure=_disk(closing_cells))
        if closing_cells > 0
        else occupied
    )
    return CoverageGrid(covered | occupied, x0=x0, y0=y0, cell=cell, hull=_hull(nx_, ny_))


def _hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The convex hull of points, its corners in order (a degenerate hull: the points)."""
    from shapely.geometry import MultiPoint

    pts = np.unique(np.column_stack([x, y]), axis=0)
    shape = MultiPoint([tuple(p) for p in pts]).convex_hull
    if shape.geom_type != "Polygon":
        return np.asarray(shape.coords if hasattr(shape, "coords") else [], dtype=float)
    return np.asarray(shape.exterior.coords, dtype=float)[:-1]
