"""Map-feature ground truth against the view's own render: seconds per view, and their ratio.

    python benchmarks/map_features.py [--extract FILE ...] [--views 8] [--carto-files DIR]

One run, one table per extract.  Views are zoom-19 maps centred on the
extract's POIs (as the STMF/MTMF generator places them).  For each extract,
from a cold tile cache:

- *render*: the views rendered in one batch (``MapEngine.render_many``: the
  metatiles drawn for their tiles, the page, the screenshot), per view;
- *ground truth*: ``maps.feature_pixels.FeatureLabels.view`` on the same views
  afterwards (the colour-coded render of each metatile the view uses, the
  vote, the areas and lines from PostGIS), per view; the tiles' own placement
  boxes are read from beside the tiles, as in a build;
- the ratio of the two (the issue's target: at most 1).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from cartoqa.geodesy import from_web_mercator
from cartoqa.records.feature_types import feature_type_of
from cartoqa.tasks.poi import feature_labels
from maps import MapEngine, View

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
DEFAULT = [
    SHARED / "data" / "osm" / n
    for n in ("monaco.osm.pbf", "helsinki-centre.osm.pbf", "london-moorgate.osm.pbf")
]


def one(extract: Path, carto: Path | None, n_views: int, seed: int) -> tuple[str, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        engine = MapEngine(extract, carto_files=carto, cache=Path(tmp) / "cache")
        labels = feature_labels(engine)
        rng = random.Random(seed)
        pois = [r for _, r in sorted(labels.objects.items()) if feature_type_of(r.tags)]
        s, w, n, e = engine.extract.bounds
        views = []
        for row in rng.sample(pois, min(len(pois), n_views * 4)):
            lat, lon = (float(c) for c in from_web_mercator(row.x, row.y))
            v = View.make((lat, lon), 19, id=f"v{len(views)}")
            vs, vw, vn, ve = v.bounds()
            if vs >= s and vw >= w and vn <= n and ve <= e:
                views.append(v)
            if len(views) == n_views:
                break
        t0 = time.perf_counter()
        engine.render_many(views, progress=False)
        render = (time.perf_counter() - t0) / len(views)
        t0 = time.perf_counter()
        for v in views:
            labels.view(v)
        truth = (time.perf_counter() - t0) / len(views)
        return f"{extract.name} ({len(views)} views)", render, truth


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--extract", type=Path, action="append")
    ap.add_argument("--carto-files", type=Path, default=SHARED / "carto-5.7.0")
    ap.add_argument("--views", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    carto = args.carto_files if args.carto_files.is_dir() else None
    rows = [one(x, carto, args.views, args.seed) for x in args.extract or DEFAULT]
    print(f"{'extract':<42}{'render s/view':>14}{'truth s/view':>14}{'ratio':>8}")
    print("-" * 78)
    for name, render, truth in rows:
        print(f"{name:<42}{render:>14.2f}{truth:>14.2f}{truth / render:>8.2f}")


if __name__ == "__main__":
    main()
