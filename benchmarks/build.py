"""Dataset build speed: samples per minute for each navigation task, split by stage.

    python benchmarks/build.py [--extract FILE] [--per-task 6] [--carto-files DIR]

One run, one table.  The road graph is built once from a cold cache (its
time is the "graph" line); each task is then built on its own with the same
engine, so its time splits into sampling (graph searches, routes, views),
labels (the colour-coded renders that prove road names are drawn), rendering
(tiles, page, screenshot; cold tile cache per task) and writing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cartoqa.tasks import build_dataset
from maps import MapEngine
from maps.roads import load_road_graph

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--extract", type=Path, default=SHARED / "data" / "osm" / "monaco.osm.pbf")
    ap.add_argument("--carto-files", type=Path, default=SHARED / "carto-5.7.0")
    ap.add_argument("--per-task", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    carto = args.carto_files if args.carto_files.is_dir() else None

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        t0 = time.perf_counter()
        engine = MapEngine(args.extract, carto_files=carto, cache=cache)
        t_engine = time.perf_counter() - t0
        t0 = time.perf_counter()
        graph = load_road_graph(engine.extract, cache=cache)
        t_graph = time.perf_counter() - t0
        for task in ("srn", "rle", "mml"):
            engine.tiles.folder = Path(tmp) / f"tiles-{task}"  # a cold tile cache per task
            t0 = time.perf_counter()
            report = build_dataset(
                Path(tmp) / task,
                engine=engine,
                tasks=[task],
                per_task=args.per_task,
                seed=args.seed,
                progress=False,
            )
            total = time.perf_counter() - t0
            rows.append((task, report, total))

    print(
        f"{args.extract.name}: engine (database, style) {t_engine:.1f} s; road graph "
        f"{t_graph:.2f} s ({len(graph.graph)} nodes, {graph.graph.number_of_edges()} edges)"
    )
    head = ("task", "samples", "per min", "sampling", "labels", "rendering", "writing", "rejected")
    print(
        f"{head[0]:<6}{head[1]:>8}{head[2]:>9}{head[3]:>10}{head[4]:>8}{head[5]:>11}"
        f"{head[6]:>9}  {head[7]}"
    )
    print("-" * 90)
    for task, r, total in rows:
        n = r.samples.get(task, 0)
        s = r.seconds
        rejected = sum(r.rejected[task].values())
        print(
            f"{task:<6}{n:>8}{n / total * 60:>9.1f}{s['sampling']:>10.2f}{s['labels']:>8.2f}"
            f"{s['rendering']:>11.2f}{s['writing']:>9.3f}  {rejected} "
            f"({', '.join(f'{k} {v}' for k, v in r.rejected[task].most_common(3))})"
        )
    print(
        "seconds per stage; labels and rendering dominate (2 Mapnik renders per metatile for "
        "labels, then tiles and a browser screenshot per map)"
    )


if __name__ == "__main__":
    main()
