"""A writer process for the run-store kill tests: answers samples 0..N-1 into a store, resuming.

Usage: python run_writer.py STORE N RESPONSE_BYTES PAUSE_S
"""

import sys
import time

from cartoqa.records import RunRecord
from cartoqa.stores import RunStore


def main() -> None:
    path, n, size, pause = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    store = RunStore(path)
    done = store.completed_ids()
    print("ready", flush=True)
    for i in range(n):
        sid = f"s-{i:04d}"
        if sid in done:
            continue
        body = (f"answer {i} " * (size // 10 + 1))[:size]
        store.append(RunRecord(sample_id=sid, model="writer", response=body, latency_s=0.0))
        time.sleep(pause)
    store.close()


if __name__ == "__main__":
    main()
