"""Dataset build speed: samples per minute per navigation task, split by stage, against the
Mapnik floor of the maps each build made; or the wall time of a CartoMapQA-sized build.

    python benchmarks/build.py [--extract FILE] [--per-task 6] [--carto-files DIR]
    python benchmarks/build.py --cartomapqa [--extract FILE] [--workers 2]
        [--clip-checkpoint FILE | --clip-random-weights]
    python benchmarks/build.py --variants [--extract FILE] [--per-task 6]

One run, one table.  The road graph is built once from a cold cache (its time is the
"graph" line); each task is then built on its own with the same engine, so its time splits
into sampling (graph searches, routes, views), labels (the colour-coded renders that prove
road names are drawn, and the tiles' renders they read the placement boxes of), rendering
(the rest of the tiles, page, screenshot; a cold tile cache per task) and writing.

"x floor" is the build's whole time over the Mapnik floor of the maps it made: each map of
the dataset drawn straight by Mapnik (as ``benchmarks/render.py``'s floor: a 1366x768 map at
the view's centre and zoom, the style loaded once before the clock, PNG-encoded), so that a
build at 1.0x would cost no more than drawing its own maps once.

``--cartomapqa`` builds a set the size of CartoMapQA, the six map tasks in the paper's
proportions (../shared/spec/cartomapqa.md): SRN 278, RLE 600 (300 maps, each asked in metres
and feet), MML 250, STMF 510 (170 each of presence, count and names, on the map-feature
views), MTMF on those views, and MFS 463 from the legend (needs CLIP weights: give
``--clip-checkpoint FILE`` or knowingly ``--clip-random-weights``; without either MFS is
left out and the note says so).  It is one build with a count per task (``--per-task
srn=278,...``; MTMF is asked on the first 150 of the views the STMF tasks share), so
``--workers`` samples the view groups side by side; it prints the wall time, each task's
counts and the stage split.  It is long: run it once.

``--variants`` measures what paired variants cost (``cartoqa build --variants``): the seven
view tasks built twice with the same engine, seed and counts, each from a cold tile cache,
once without variants and once with every variant a build makes; it prints both wall times,
the variants' own stage, the copies each variant made, and the ratio of the two builds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from cartoqa.tasks import build_dataset
from maps import MapEngine, View
from maps.roads import load_road_graph

sys.path.insert(0, str(Path(__file__).resolve().parent))
from render import mapnik_floor  # the floor benchmarks/render.py measures

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
OSM = SHARED / "data" / "osm"

#: the CartoMapQA-sized set: questions per task, the paper's counts (MTMF is asked on the
#: first 150 of the map-feature views the STMF tasks share)
CARTOMAPQA = {
    "srn": 278,
    "rle": 600,
    "mml": 250,
    "stmf_presence": 170,
    "stmf_count": 170,
    "stmf_names": 170,
    "mtmf": 150,
    "mfs": 463,
}


def made_views(folder: Path) -> list[View]:
    """The maps a dataset holds, one per image, at the centre and zoom its samples record."""
    views: dict[str, View] = {}
    for line in (folder / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        image, meta = s["prompt"]["images"][0], s["metadata"]
        if image not in views and "center_lat" in meta:
            views[image] = View.make(
                (meta["center_lat"], meta["center_lon"]), meta["zoom"], id=Path(image).stem
            )
    return list(views.values())


def navigation(args: argparse.Namespace, carto: Path | None) -> None:
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
                cache=cache,
                tasks=[task],
                per_task=args.per_task,
                seed=args.seed,
                progress=False,
            )
            total = time.perf_counter() - t0
            views = made_views(Path(tmp) / task)
            floor = mapnik_floor(engine, views) if views else float("nan")
            rows.append((task, report, total, len(views), floor))

    print(
        f"{args.extract.name}: engine (database, style) {t_engine:.1f} s; road graph "
        f"{t_graph:.2f} s ({len(graph.graph)} nodes, {graph.graph.number_of_edges()} edges)"
    )
    head = f"{'task':<6}{'samples':>8}{'per min':>9}{'sampling':>10}{'labels':>8}{'rendering':>11}"
    head += f"{'writing':>9}{'maps':>6}{'floor':>7}{'x floor':>9}  rejected"
    print(head)
    print("-" * 110)
    for task, r, total, maps, floor in rows:
        n = r.samples.get(task, 0)
        s = r.seconds
        rejected = sum(r.rejected[task].values())
        print(
            f"{task:<6}{n:>8}{n / total * 60:>9.1f}{s['sampling']:>10.2f}{s['labels']:>8.2f}"
            f"{s['rendering']:>11.2f}{s['writing']:>9.3f}{maps:>6}{floor:>7.2f}"
            f"{total / floor:>9.2f}  {rejected} "
            f"({', '.join(f'{k} {v}' for k, v in r.rejected[task].most_common(3))})"
        )
    print(
        "seconds per stage; 'x floor': the task's whole build time over its Mapnik floor, the "
        "maps it made drawn straight by Mapnik (1366x768 at each view's centre and zoom, the "
        "style loaded once before the clock, PNG-encoded; benchmarks/render.py's floor), "
        "measured after the build with the same engine"
    )


#: the tasks the variants benchmark builds: every map task made from an extract's views
VIEW_TASKS = ["srn", "rle", "mml", "stmf_presence", "stmf_count", "stmf_names", "mtmf"]


def variants(args: argparse.Namespace, carto: Path | None) -> None:
    from cartoqa.tasks.variants.apply import BUILT

    # a language needs an extract whose names are translated: Monaco's are not, so none here
    asked = [v for v in BUILT if v != "lang:XX"]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        engine = MapEngine(args.extract, carto_files=carto, cache=cache)
        load_road_graph(engine.extract, cache=cache)
        for name, which in (("base", []), ("variants", asked)):
            engine.tiles.folder = Path(tmp) / f"tiles-{name}"  # a cold tile cache each
            t0 = time.perf_counter()
            report = build_dataset(
                Path(tmp) / name,
                engine=engine,
                cache=cache,
                carto_files=carto,
                tasks=VIEW_TASKS,
                per_task=args.per_task,
                seed=args.seed,
                variants=which,
                progress=False,
            )
            runs.append((name, report, time.perf_counter() - t0))
    (_, base, t_base), (_, var, t_var) = runs
    n_base = sum(base.samples.values())
    made = var.variants.get("made", {})
    print(
        f"{args.extract.name}: {len(VIEW_TASKS)} view tasks, {args.per_task} each, seed {args.seed}"
    )
    print(f"{'build':<10}{'samples':>9}{'seconds':>9}{'variants stage':>16}")
    print("-" * 44)
    print(f"{'base':<10}{n_base:>9}{t_base:>9.1f}{'-':>16}")
    n_var = n_base + sum(sum(c.values()) for c in made.values())
    print(f"{'variants':<10}{n_var:>9}{t_var:>9.1f}{var.seconds.get('variants', 0.0):>16.1f}")
    print("copies made: " + ", ".join(f"{v} {sum(c.values())}" for v, c in made.items()))
    print(
        f"the build with {', '.join(asked)} took {t_var / t_base:.2f}x the base build's time "
        f"for {n_var / n_base:.2f}x its samples (one run; each from a cold tile cache)"
    )


def cartomapqa(args: argparse.Namespace, carto: Path | None) -> None:
    with_mfs = bool(args.clip_checkpoint or args.clip_random_weights)
    counts = {
        t: max(2, round(n * args.scale)) for t, n in CARTOMAPQA.items() if t != "mfs" or with_mfs
    }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cartomapqa"
        start = time.perf_counter()
        report = build_dataset(
            out,
            extract=args.extract,
            carto_files=carto,
            cache=Path(tmp) / "cache",
            tasks=list(counts),
            per_task=counts,
            seed=args.seed,
            progress=False,
            workers=args.workers,
            task_options={
                "clip_checkpoint": args.clip_checkpoint,
                "clip_random_weights": args.clip_random_weights,
            },
        )
        wall = time.perf_counter() - start
        maps = len(list((out / "images").glob("*.png")))
    questions = sum(report.samples.values())
    print(
        f"CartoMapQA-sized build (x{args.scale:g}) from {args.extract.name}, "
        f"--workers {args.workers}: {questions} questions on {maps} images in {wall:.0f} s "
        f"({wall / 60:.1f} min; cold tile and road-graph caches; an extract imported "
        "before is not imported again)"
    )
    print(f"{'task':<16}{'asked':>7}{'made':>7}{'maps':>7}  rejected (top 3)")
    print("-" * 80)
    for task, n in counts.items():
        rejected = report.rejected.get(task, {})
        top = sorted(rejected.items(), key=lambda kv: -kv[1])[:3]
        print(
            f"{task:<16}{n:>7}{report.samples.get(task, 0):>7}{report.maps.get(task, 0):>7}  "
            + ", ".join(f"{k} {v}" for k, v in top)
        )
    s = report.seconds
    print(
        "stages (s): "
        + ", ".join(
            f"{k} {s[k]:.1f}"
            for k in ("graph", "sampling", "labels", "rendering", "writing")
            if k in s
        )
        + " (with workers, labels are summed over the workers and sampling is the sampling "
        "phase's wall time less their share)"
    )
    if not with_mfs:
        print("MFS left out: no CLIP weights given (--clip-checkpoint or --clip-random-weights)")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--extract", type=Path, default=None, help="default: Monaco, or Vancouver with --cartomapqa"
    )
    ap.add_argument("--carto-files", type=Path, default=SHARED / "carto-5.7.0")
    ap.add_argument("--per-task", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cartomapqa", action="store_true", help="a CartoMapQA-sized build instead")
    ap.add_argument("--workers", type=int, default=1, help="with --cartomapqa: build processes")
    ap.add_argument("--clip-checkpoint", type=Path, default=None, help="MFS's CLIP weights")
    ap.add_argument("--clip-random-weights", action="store_true", help="MFS with random CLIP")
    ap.add_argument(
        "--scale", type=float, default=1.0, help="with --cartomapqa: this share of the counts"
    )
    ap.add_argument(
        "--variants", action="store_true", help="what paired variants add to a build instead"
    )
    args = ap.parse_args()
    carto = args.carto_files if args.carto_files.is_dir() else None
    if args.variants:
        args.extract = args.extract or OSM / "monaco.osm.pbf"
        variants(args, carto)
    elif args.cartomapqa:
        args.extract = args.extract or OSM / "vancouver.osm.pbf"
        cartomapqa(args, carto)
    else:
        args.extract = args.extract or OSM / "monaco.osm.pbf"
        navigation(args, carto)


if __name__ == "__main__":
    main()
