"""The MFS legend: catalogue, render and CLIP embedding time for the whole catalogue, one run.

    python benchmarks/legend.py [--carto-files DIR] [--checkpoint FILE]

Reads the catalogue from the style and the tagging schema, draws every legend
image into a temporary database and folder (``symbols.legend``), classes the
look-alikes and embeds the images with CLIP (``symbols.embed``): with
``--checkpoint`` its weights, else random weights (loudly; the time is the
same, the distances are not semantic).  Then the same through the cache
(``symbols.store``), cold and warm, and the questions of every subject
(``symbols.questions``).  Issue 16's target: under 5 minutes on 2 cores for
the first four stages.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

from symbols.catalogue import build_catalogue
from symbols.embed import ClipWeights, embed_images
from symbols.legend import render_legend
from symbols.lookalike import lookalike_classes
from symbols.questions import category_counts, make_questions
from symbols.store import load_embeddings, load_legend

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--carto-files", type=Path, default=SHARED / "carto-5.7.0")
    ap.add_argument("--checkpoint", type=Path, default=None)
    args = ap.parse_args()
    carto = args.carto_files if args.carto_files.is_dir() else None
    weights = (
        ClipWeights(checkpoint=args.checkpoint)
        if args.checkpoint
        else ClipWeights(random_weights=True)
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        entries, version = build_catalogue()
        rows.append(
            ("catalogue", time.perf_counter() - t0, f"{len(entries)} entries, schema {version}")
        )
        t0 = time.perf_counter()
        legend = render_legend(
            entries, Path(tmp) / "legend", carto_files=carto, cache=Path(tmp) / "cache"
        )
        per = Counter(k.split(":")[0] for k in legend.images)
        rows.append(
            ("legend (incl. import)", time.perf_counter() - t0,
             f"{len(legend.images)} images {dict(per)}, {len(legend.dropped)} dropped")
        )  # fmt: skip
        t0 = time.perf_counter()
        classes = lookalike_classes(legend.images)
        members = sum(len(c) for c in classes)
        distinct = len(legend.images) - members + len(classes)
        rows.append(
            ("look-alike classes", time.perf_counter() - t0,
             f"{len(classes)} classes of {members} images; {distinct} distinct")
        )  # fmt: skip
        t0 = time.perf_counter()
        vectors, info = embed_images(list(legend.images.values()), weights)
        rows.append(
            ("CLIP embeddings", time.perf_counter() - t0,
             f"{vectors.shape}, random weights: {info['random_weights']}")
        )  # fmt: skip
        cache = Path(tmp) / "store"
        t0 = time.perf_counter()
        stored = load_legend(cache=cache, carto_files=carto)
        by_key, _ = load_embeddings(stored, weights)
        rows.append(
            ("all of it, cold cache", time.perf_counter() - t0,
             f"symbols.store: {len(stored.images)} images, {stored.distinct()} distinct")
        )  # fmt: skip
        t0 = time.perf_counter()
        again = load_legend(cache=cache, carto_files=carto)
        load_embeddings(again, weights)
        rows.append(
            ("all of it, warm cache", time.perf_counter() - t0,
             f"read back: {not again.built}")
        )  # fmt: skip
        t0 = time.perf_counter()
        questions = make_questions(stored, by_key, seed=0)
        rows.append(
            ("questions (every subject)", time.perf_counter() - t0,
             f"{len(questions)}: {category_counts(questions)}")
        )  # fmt: skip
    print(f"{'stage':<27}{'seconds':>8}  notes")
    print("-" * 80)
    for name, seconds, note in rows:
        print(f"{name:<27}{seconds:>8.1f}  {note}")
    first = sum(r[1] for r in rows[:4])
    print(f"{'catalogue to embeddings':<27}{first:>8.1f}  (the four stages; target: under 300 s)")


if __name__ == "__main__":
    main()
