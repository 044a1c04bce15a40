"""Speed of the geodesy core against the obvious alternatives.  Run: python benchmarks/geodesy.py

Prints one table from one run: best of several repeats for each row, and the
ratio between each pair.  These machines are noisy; compare ratios, not times.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
from pyproj import Transformer

from cartoqa.geodesy import EARTH_RADIUS_KM, distance_km, to_utm


def best_of(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def python_haversine(la1, lo1, la2, lo2):
    out = []
    r = math.radians
    for a, b, c, d in zip(la1, lo1, la2, lo2, strict=True):
        p1, p2 = r(a), r(c)
        h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(r(d - b) / 2) ** 2
        out.append(2 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(1.0, h))))
    return out


def print_table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> None:
    cells = [[f"{c:.4f}" if isinstance(c, float) else str(c) for c in r] for r in [header, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for k, r in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--points", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    n = args.pairs
    la1, lo1 = rng.uniform(-89, 89, n), rng.uniform(-180, 180, n)
    la2, lo2 = rng.uniform(-89, 89, n), rng.uniform(-180, 180, n)
    lists = [a.tolist() for a in (la1, lo1, la2, lo2)]
    ours = distance_km(la1, lo1, la2, lo2)
    ref = python_haversine(*lists)
    assert np.allclose(ours, ref, atol=1e-9), "the two haversines disagree"
    t_np = best_of(lambda: distance_km(la1, lo1, la2, lo2), args.repeats)
    t_py = best_of(lambda: python_haversine(*lists), max(1, args.repeats // 2))

    m = args.points
    # one zone (a city region around Paris) and the whole world (60 zones x 2 hemispheres)
    la_c, lo_c = rng.uniform(48.0, 49.5, m), rng.uniform(1.0, 5.0, m)
    direct = Transformer.from_crs(4326, 32631, always_xy=True)
    e_ref, n_ref = direct.transform(lo_c, la_c)
    u = to_utm(la_c, lo_c)
    assert np.allclose(u.easting_m, e_ref) and np.allclose(u.northing_m, n_ref)
    t_utm_one = best_of(lambda: to_utm(la_c, lo_c), args.repeats)
    t_direct_one = best_of(lambda: direct.transform(lo_c, la_c), args.repeats)

    la_w, lo_w = rng.uniform(-79, 83, m), rng.uniform(-180, 180, m)
    zones = (np.floor((lo_w + 180) / 6).astype(int) % 60) + 1
    south = la_w < 0
    transformers = {
        (z, s): Transformer.from_crs(4326, (32700 if s else 32600) + z, always_xy=True)
        for z in range(1, 61)
        for s in (False, True)
    }

    def direct_world() -> None:
        e, nn = np.empty(m), np.empty(m)
        for (z, s), t in transformers.items():
            mask = (zones == z) & (south == s)
            if mask.any():
                e[mask], nn[mask] = t.transform(lo_w[mask], la_w[mask])

    to_utm(la_w, lo_w)  # warm the transformer cache, as direct_world's dict is built above
    t_utm_world = best_of(lambda: to_utm(la_w, lo_w), args.repeats)
    t_direct_world = best_of(direct_world, args.repeats)

    rows = [
        (
            f"distance_km, {n:,} pairs",
            "numpy (cartoqa)",
            t_np,
            "pure-Python math loop",
            t_py,
            f"{t_py / t_np:.1f}x faster",
            "target >= 20x",
        ),
        (
            f"to_utm, {m:,} points, one zone",
            "cartoqa.to_utm",
            t_utm_one,
            "pyproj Transformer direct",
            t_direct_one,
            f"{t_utm_one / t_direct_one:.2f}x the time",
            "target <= 2x",
        ),
        (
            f"to_utm, {m:,} points, 120 zones",
            "cartoqa.to_utm",
            t_utm_world,
            "pyproj, a transformer per zone",
            t_direct_world,
            f"{t_utm_world / t_direct_world:.2f}x the time",
            "target <= 2x",
        ),
    ]
    print_table(("case", "ours", "s", "reference", "s", "ratio", ""), rows)


if __name__ == "__main__":
    main()
