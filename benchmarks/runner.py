"""Runner throughput against a local OpenAI-compatible server, and the harness's own overhead.

    python benchmarks/runner.py [--latency 0.1] [--seconds 3]

One run, one table.  The fake server (cartoqa.testing.fake_openai, a separate
process, so it does not share the GIL with the runner) answers every request
after a fixed latency.  ``cartoqa.runner.run_model`` with the real ``openai``
adapter sends the same kind of dataset at concurrency 1, 4 and 16; each
level gets about ``--seconds`` of work.  Then the harness alone: the
``constant`` baseline (no latency, no HTTP) over many samples, so the time
per sample is what the runner, the request building and the run store cost.
Targets: concurrency 16 at least 10x the throughput of 1; overhead under 2 ms.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cartoqa.models import GenerationSettings, load_model
from cartoqa.records import NumberTruth, Prompt, Provenance, Sample
from cartoqa.runner import open_run_store, run_model
from cartoqa.stores import DatasetWriter, load_dataset


def make_dataset(folder: Path, n: int):  # type: ignore[no-untyped-def]
    with DatasetWriter(folder, name=f"bench-{n}", overwrite=True) as w:
        for i in range(n):
            w.add(
                Sample(
                    id=f"q-{i:06d}",
                    task="distance",
                    prompt=Prompt(
                        text=f"[q-{i:06d}] What is the distance between A{i} and B{i}?",
                        system="Answer with FINAL ANSWER: <number> km",
                    ),
                    ground_truth=NumberTruth(value=float(i), unit="km"),
                    provenance=Provenance(generator="benchmarks/runner.py"),
                )
            )
        w.finish()
    return load_dataset(folder)


def timed_run(ds, spec: str, runs: Path, concurrency: int, batch: int | None = None) -> float:  # type: ignore[no-untyped-def]
    model = load_model(spec)
    if batch is not None:
        model.batch_size = batch
    with open_run_store(runs, ds, model.spec, GenerationSettings()) as store:
        t0 = time.perf_counter()
        summary = run_model(ds, model, store, concurrency=concurrency)
        wall = time.perf_counter() - t0
    model.close()
    if summary.answered != len(ds):
        raise SystemExit(f"{spec}: answered {summary.answered} of {len(ds)} ({summary.stopped})")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--latency", type=float, default=0.1, help="server latency in seconds")
    ap.add_argument("--seconds", type=float, default=3.0, help="work per concurrency level")
    ap.add_argument("--overhead-samples", type=int, default=5000)
    args = ap.parse_args()

    server = subprocess.Popen(
        [sys.executable, "-m", "cartoqa.testing.fake_openai", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            base = None
            for c in (1, 4, 16):
                n = max(10, int(args.seconds / args.latency * c))
                ds = make_dataset(Path(tmp) / f"ds-{c}", n)
                wall = timed_run(ds, f"openai:fake@{url}", Path(tmp) / f"runs-{c}", c)
                rate = n / wall
                base = base or rate
                rows.append((f"openai, concurrency {c}", n, wall, rate, f"{rate / base:.1f}x"))
            n = args.overhead_samples
            ds = make_dataset(Path(tmp) / "ds-const", n)
            # batch 1 is how API adapters are fed (the worst case); baselines take 256 at once
            for batch, c in ((1, 1), (1, 16), (256, 1)):
                wall = timed_run(
                    ds, "constant:FINAL ANSWER: 1 km", Path(tmp) / f"runs-c{batch}-{c}", c, batch
                )
                rows.append(
                    (
                        f"zero latency, batch {batch}, c {c}",
                        n,
                        wall,
                        n / wall,
                        f"{wall / n * 1000:.3f} ms/sample",
                    )
                )
    finally:
        server.terminate()
        server.wait()

    print(f"fake OpenAI server latency {args.latency * 1000:.0f} ms per request")
    print(f"{'path':<30}{'samples':>8}{'seconds':>9}{'per s':>9}  {'ratio / overhead':<18}")
    print("-" * 78)
    for name, n, wall, rate, note in rows:
        print(f"{name:<30}{n:>8}{wall:>9.2f}{rate:>9.1f}  {note:<18}")
    print("targets: concurrency 16 >= 10x concurrency 1; harness overhead < 2 ms per sample")


if __name__ == "__main__":
    main()
