"""Map rendering speed: end to end against the Mapnik floor and a naive path.

    python benchmarks/render.py [--extract FILE] [--views 50] [--repeats 3] [--carto-files DIR]

One run, one table.  The same views (random centres in the extract, zooms
15-19 in turn, two markers and a path each) go through the paths below.
End to end and the floor are measured ``--repeats`` times, in turn (cold,
warm, floor; cold, warm, floor; ...), each cold pass with a new tile cache,
and the table gives each pass and the medians: on these shared machines one
pass of the floor has been seen to take 16 s and the next 19 s.

- end to end: MapEngine.render_many, one browser, 3 pages at once, 8x8
  metatiles, a cold tile cache; the style is loaded before the clock starts;
- the Mapnik floor: each 1366x768 view rendered straight by Mapnik and
  encoded as PNG, with the style loaded once;
- naive: a fresh browser per map, single 256 px tiles, no tile cache.

The browser is ``maps.browser.chromium_path()``'s: Debian's headless shell
where installed; ``CARTOQA_CHROMIUM=/usr/bin/chromium`` measures the full
browser instead.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

from maps import MapEngine, Marker, View
from maps.browser import chromium_path, screenshot_views
from maps.projection import metres_per_pixel, pixel_box, pixel_to_m
from maps.style import load_map
from maps.tiles import TileRenderer

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def make_views(engine: MapEngine, n: int, seed: int) -> list[View]:
    rng = random.Random(seed)
    s, w, north, e = engine.extract.bounds
    views = []
    for i in range(n):
        zoom = 15 + i % 5
        lat = rng.uniform(s + 0.2 * (north - s), north - 0.2 * (north - s))
        lon = rng.uniform(w + 0.2 * (e - w), e - 0.2 * (e - w))
        d = 200 * metres_per_pixel(zoom) / 111_320 * math.cos(math.radians(lat))
        a, b = (lat + d, lon - d), (lat - d, lon + d)
        views.append(
            View.make(
                (lat, lon),
                zoom,
                markers=[Marker(*a, "blue"), Marker(*b, "red")],
                paths=[[a, (lat, lon), b]],
                id=f"v{i}",
            )
        )
    return views


def mapnik_floor(engine: MapEngine, views: list[View]) -> float:
    import mapnik

    m = load_map(engine.style, engine.database.connection, views[0].width, views[0].height)
    t0 = time.perf_counter()
    for v in views:
        x0, y0, x1, y1 = pixel_box(v.center, v.zoom, v.width, v.height)
        m.zoom_to_box(mapnik.Box2d(*pixel_to_m(x0, y1, v.zoom), *pixel_to_m(x1, y0, v.zoom)))
        im = mapnik.Image(v.width, v.height)
        mapnik.render(m, im)
        im.to_string("png")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--extract", type=Path, default=SHARED / "data" / "osm" / "monaco.osm.pbf")
    ap.add_argument("--carto-files", type=Path, default=SHARED / "carto-5.7.0")
    ap.add_argument("--views", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=3)
    ap.add_argument("--metatile", type=int, default=8, help="tiles per metatile side")
    ap.add_argument("--repeats", type=int, default=3, help="passes of end to end and the floor")
    args = ap.parse_args()
    carto = args.carto_files if args.carto_files.is_dir() else None

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        passes = []
        for r in range(args.repeats):
            # a new cache folder: a cold tile cache (the database is kept, keyed by extract)
            engine = MapEngine(
                args.extract, carto_files=carto, cache=cache / f"pass{r}", metatile=args.metatile
            )
            views = make_views(engine, args.views, args.seed)
            engine.tiles.warm()
            t0 = time.perf_counter()
            engine.render_many(views, concurrency=args.concurrency, progress=False)
            cold = time.perf_counter() - t0
            metatiles = engine.tiles.rendered_metatiles
            t0 = time.perf_counter()
            engine.render_many(views, concurrency=args.concurrency, progress=False)
            warm = time.perf_counter() - t0
            passes.append((cold, warm, mapnik_floor(engine, views)))
        t_e2e, t_warm, t_floor = (statistics.median(p[k] for p in passes) for k in range(3))

        naive_tiles = TileRenderer(
            engine.style, engine.database, cache=cache / "naive", metatile=1, use_cache=False
        ).warm()
        t0 = time.perf_counter()
        for v in views:
            screenshot_views([v], naive_tiles, concurrency=1)  # a fresh browser each time
        t_naive = time.perf_counter() - t0

    n = len(views)
    print("passes (cold, warm, floor seconds; cold / floor):")
    for cold, warm, floor in passes:
        print(f"  {cold:6.1f} {warm:6.1f} {floor:6.1f}   {cold / floor:.2f}x")
    rows = [
        ("end to end (cold tiles)", t_e2e, f"{t_e2e / t_floor:.2f}x the floor", "target <= 1.5x"),
        ("end to end (warm tiles)", t_warm, f"{t_warm / t_floor:.2f}x the floor", ""),
        ("Mapnik floor", t_floor, "1.00x", ""),
        ("naive", t_naive, f"{t_naive / t_e2e:.1f}x end to end", "target >= 3x"),
    ]
    print(
        f"{n} views of {args.extract.name}, zooms 15-19; {metatiles} metatiles rendered end to "
        f"end; medians of {len(passes)} passes; browser {chromium_path()}"
    )
    print(f"{'path':<26}{'seconds':>9}{'maps/min':>10}  {'ratio':<22}")
    print("-" * 78)
    for name, secs, ratio, target in rows:
        print(f"{name:<26}{secs:>9.1f}{n / secs * 60:>10.1f}  {ratio:<22}{target}")


if __name__ == "__main__":
    main()
