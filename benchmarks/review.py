"""Review tool speed: how long its pages take on a large dataset, over real HTTP.

    python benchmarks/review.py [--copies 400] [--decisions 3000]

One run, one table.  The dataset is the tests' one-of-every-kind set, ``copies``
times (14 samples each: 5,600 by default), with ``decisions`` accepts already in
its store; the server is ``cartoqa review`` in its own process.  Each line is the
median of its requests: the list (every sample's status read once), a sample page
(the list read for its position and neighbours), its drawing (made, then
cached), and a decision (stored, then the redirect).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotations.decisions import DecisionStore  # noqa: E402
from tests.annotations.review_server import review_server  # noqa: E402
from tests.cartoqa.model_data import kinds_dataset  # noqa: E402


def timed(srv, method: str, path: str, body: str | None = None, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        status, _, _ = srv.request(method, path, body)
        times.append(time.perf_counter() - t0)
        assert status in (200, 303), (path, status)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--copies", type=int, default=400)
    ap.add_argument("--decisions", type=int, default=3000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "ds"
        ds = kinds_dataset(folder, copies=args.copies)
        with DecisionStore.open(folder / "review.sqlite", ds) as store:
            for s in ds.samples[: args.decisions]:
                store.decide(s, reviewer="bench", verdict="accept", seen=0)
        undecided = ds.samples[args.decisions :] if args.decisions < len(ds) else []
        sid = ds.samples[len(ds) // 2].id
        rows = []
        with review_server(folder, "--reviewer", "bench") as srv:
            rows.append(("list page", timed(srv, "GET", "/")))
            rows.append(("list page, one task", timed(srv, "GET", "/?task=srn")))
            rows.append(("sample page", timed(srv, "GET", f"/sample/{sid}")))
            t0 = time.perf_counter()
            srv.request("GET", f"/drawing/{sid}.png")
            rows.append(("drawing, first", time.perf_counter() - t0))
            rows.append(("drawing, cached", timed(srv, "GET", f"/drawing/{sid}.png")))
            times = []
            for s in undecided[:5]:
                body = urlencode({"verdict": "accept", "seen": "0", "reviewer": "bench"})
                t0 = time.perf_counter()
                srv.request("POST", f"/sample/{s.id}", body)
                times.append(time.perf_counter() - t0)
            if times:
                rows.append(("decision (accept)", statistics.median(times)))
    print(f"{len(ds)} samples, {min(args.decisions, len(ds))} decisions")
    print(f"{'request':<24} {'ms':>8}")
    for name, t in rows:
        print(f"{name:<24} {t * 1000:>8.1f}")


if __name__ == "__main__":
    main()
