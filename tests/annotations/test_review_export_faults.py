"""A reviewed export that cannot lie (issue 27, item 3): an image replaced in the source
dataset stops it, and an export taken while people decide agrees with its own review.jsonl
and counts (every decision read in one snapshot)."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest
from typer.testing import CliRunner

from annotations.decisions import DecisionStore
from annotations.export import REVIEW_FILE, export_reviewed
from cartoqa.cli import app
from cartoqa.errors import CartoqaError, StaleEditError
from cartoqa.stores import load_dataset
from tests.cartoqa.model_data import kinds_dataset, png


def test_an_image_replaced_in_the_source_stops_the_export_naming_it(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=1)
    ds = load_dataset(tmp_path / "ds")
    rel = next(s.prompt.images[0] for s in ds.samples if s.prompt.images)
    (tmp_path / "ds" / rel).write_bytes(png(77))  # another map, a valid PNG
    store = DecisionStore.open(tmp_path / "ds" / "review.sqlite", ds)
    with store, pytest.raises(CartoqaError, match=rf"{rel}.*does not match.*manifest"):
        export_reviewed(ds, store, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    result = CliRunner().invoke(
        app, ["review", "export", str(tmp_path / "ds"), str(tmp_path / "out")]
    )
    assert result.exit_code == 2 and rel in result.output, result.output
    assert not (tmp_path / "out").exists()


_PAST = {"accept": "accepted", "correct": "corrected", "reject": "rejected"}


def _replayed(decisions: list[dict]) -> dict[str, str]:
    """Each sample's status from the decisions file alone (one review required)."""
    status: dict[str, str] = {}
    for d in sorted(decisions, key=lambda d: d["seq"]):
        status[d["sample_id"]] = _PAST[d["verdict"]]
    return status


def test_an_export_taken_while_people_decide_agrees_with_its_own_decisions(tmp_path):
    kinds_dataset(tmp_path / "ds", copies=2)
    ds = load_dataset(tmp_path / "ds")
    path = tmp_path / "ds" / "review.sqlite"
    DecisionStore.open(path, ds).close()
    stop = threading.Event()
    made = Counter()

    def reviewer(name: str, offset: int) -> None:
        with DecisionStore.open(path, ds, busy_timeout_s=60) as store:
            n = offset
            while not stop.is_set():
                sample = ds.samples[n % len(ds.samples)]
                verdict = ("accept", "reject")[(n // len(ds.samples)) % 2]
                try:
                    store.decide(
                        sample,
                        reviewer=name,
                        verdict=verdict,
                        seen=store.version(sample.id),
                        reason="" if verdict == "accept" else "blank",
                    )
                    made[name] += 1
                except StaleEditError:
                    pass
                n += 1

    threads = [threading.Thread(target=reviewer, args=(f"r{i}", 7 * i)) for i in range(3)]
    for t in threads:
        t.start()
    try:
        for attempt in range(4):
            out = tmp_path / f"out{attempt}"
            with DecisionStore.open(path, ds, read_only=True) as store:
                manifest = export_reviewed(ds, store, out)
            lines = (out / REVIEW_FILE).read_text(encoding="utf-8").splitlines()
            decisions = [json.loads(x) for x in lines]
            status = _replayed(decisions)
            got = {s.id: s for s in load_dataset(out, verify_images=True)}
            for s in ds.samples:
                want = status.get(s.id, "unreviewed")
                if want == "rejected":
                    assert s.id not in got, (attempt, s.id)
                else:
                    assert s.id in got, (attempt, s.id, want)
                    assert got[s.id].metadata.model_extra["review_status"] == want, (attempt, s.id)
            r = manifest.review
            counts = Counter(status.values())
            assert r["decisions"] == len(decisions), attempt
            for key in ("accepted", "rejected", "corrected"):
                assert r[key] == counts[key], (attempt, key, r[key], counts[key])
            assert r["unreviewed"] == len(ds) - len(status), attempt
            assert r["exported"] == len(got) == len(ds) - counts["rejected"], attempt
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert sum(made.values()) > 0
