"""Scoring speed: ``score_run`` over one oracle answer per sample of a GPS set.

    python benchmarks/scoring.py [--per-task 1000] [--repeat 5] [--dataset DIR]

One run, one table: the best of ``--repeat`` timings of scoring every sample of
a GPS set (generated afresh, 17 tasks and the probe; or ``--dataset``), and the
time per answer.  To compare two checkouts, score one ``--dataset`` in each, one
after the other (it also imports the scorer from where it stood before
``cartoqa.scoring``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from pathlib import Path

from cartoqa.models import OracleModel, Request
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps

try:
    from cartoqa.scoring import score_run
except ImportError:  # a checkout from before the task seam
    from evaluators.scoring import score_run  # type: ignore[no-redef]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--per-task", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dataset", type=Path, default=None)
    args = ap.parse_args()
    if args.dataset is not None:
        ds = load_dataset(args.dataset)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            generate_gps(Path(tmp) / "gps", per_task=args.per_task, seed=42)
            ds = load_dataset(Path(tmp) / "gps")
    answers = OracleModel().generate([Request(id=s.id, text="", sample=s) for s in ds])
    responses = {s.id: r.text for s, r in zip(ds, answers, strict=True)}
    times = []
    for _ in range(args.repeat):
        gc.collect()  # each timing starts from the same heap
        t0 = time.perf_counter()
        score_run(ds.samples, responses)
        times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"{len(ds)} answers, best of {args.repeat}")
    print(f"{'step':<28}{'seconds':>10}{'µs/answer':>12}")
    print(f"{'score_run (best)':<28}{best:>10.3f}{1e6 * best / len(ds):>12.1f}")
    median = statistics.median(times)
    print(f"{'score_run (median)':<28}{median:>10.3f}{1e6 * median / len(ds):>12.1f}")
    print("all runs: " + ", ".join(f"{t:.3f}" for t in times))


if __name__ == "__main__":
    main()
