"""GPS track speed: generating the full set, and scoring one response per sample.

    python benchmarks/gps.py [--per-task 3400] [--seed 42]

One run, one table.  Generation writes the full dataset, GPSBench's 17
tasks and the missing-data probe, 3,400 each: 61,200 samples (target: under
60 s on 2 cores); scoring runs ``score_run`` over one response per sample,
those of the ``oracle`` baseline (target: under 10 s).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from cartoqa.models import OracleModel, Request
from cartoqa.scoring import score_run
from cartoqa.stores import load_dataset
from cartoqa.tasks.gps import generate_gps


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--per-task", type=int, default=3400)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = generate_gps(Path(tmp) / "gps", per_task=args.per_task, seed=args.seed)
        t_gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        ds = load_dataset(Path(tmp) / "gps")
        t_load = time.perf_counter() - t0
        answers = OracleModel().generate([Request(id=s.id, text="", sample=s) for s in ds])
        responses = {s.id: r.text for s, r in zip(ds, answers, strict=True)}
        t0 = time.perf_counter()
        scores = score_run(ds.samples, responses)
        t_score = time.perf_counter() - t0
    n = sum(report.samples.values())
    print(f"{n} samples, {len(report.samples)} tasks, seed {args.seed}")
    print(f"{'step':<34}{'seconds':>9}  target")
    print("-" * 56)
    print(f"{'generate and write':<34}{t_gen:>9.1f}  < 60 s")
    print(f"{'load and validate':<34}{t_load:>9.1f}")
    print(f"{'score ' + str(n) + ' responses':<34}{t_score:>9.1f}  < 10 s")
    print(f"oracle overall accuracy: {scores['gps']['overall']['accuracy']:.3f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak resident memory: {peak:,.0f} MiB")
    print()
    print(f"{'task (generation)':<34}{'seconds':>9}")
    print("-" * 43)
    print(f"{'loading the cities':<34}{report.seconds['cities']:>9.1f}")
    for task, sec in report.task_seconds.items():
        print(f"{task:<34}{sec:>9.1f}")


if __name__ == "__main__":
    main()
