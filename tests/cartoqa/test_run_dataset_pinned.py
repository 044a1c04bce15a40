"""A run pins the dataset it started on (issue 27, finding 2).

The case as found: ``cartoqa build DS --overwrite`` while ``cartoqa run DS`` is going gave
answers to the new dataset's maps stored against the old questions.  A run now answers only
the dataset it started on (the image bytes it sends are the ones its manifest recorded, read
once), stops with a message naming the dataset, the old and new hashes and the fix when the
dataset changes under it, and loses nothing it stored.  Real ``cartoqa run`` processes against
the fake OpenAI-compatible server; the dataset replaced through the real ``DatasetWriter``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from cartoqa.models import GenerationSettings, Request, Response
from cartoqa.records import NumberTruth, Prompt, Provenance, Sample
from cartoqa.runner import open_run_store, run_model
from cartoqa.stores import Dataset, DatasetWriter, load_dataset
from cartoqa.testing.fake_openai import FakeOpenAIServer
from tests.cartoqa.model_data import png
from tests.cartoqa.test_runner import run_command, store_lines, wait_for_lines

N = 24


def map_dataset(folder: Path, generation: int, n: int = N, *, maps: int | None = None) -> Dataset:
    """``n`` map questions, each with its own map; another ``generation`` has other maps
    under the same file names and other question texts (as a rebuild with another seed);
    ``maps`` draws the maps of another generation."""
    with DatasetWriter(folder, name="maps", overwrite=True) as w:
        for i in range(n):
            sid = f"m-{i:02d}"
            rel = w.add_image(f"{sid}.png", png((maps or generation) * 1000 + i * 7))
            w.add(
                Sample(
                    id=sid,
                    task="rle",
                    prompt=Prompt(
                        text=f"[{sid}] (build {generation}) How long is the blue path, in metres?",
                        images=[rel],
                    ),
                    ground_truth=NumberTruth(value=100.0 * generation + i, unit="m"),
                    provenance=Provenance(generator="tests", seed=generation),
                )
            )
        w.finish(seeds=[generation])
    return load_dataset(folder)


def image_hash(ds: Dataset, sample: Sample) -> str:
    return ds.manifest.images_sha256[sample.prompt.images[0]]


def test_a_dataset_rebuilt_under_a_run_stops_it_and_nothing_is_misfiled(tmp_path):
    folder, runs = tmp_path / "maps", tmp_path / "runs"
    old = map_dataset(folder, 1)
    with FakeOpenAIServer(latency_s=0.3) as server:
        cmd = run_command(old, server, runs, concurrency=2)
        first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_lines(runs, 3)
            server.latency_s = 1.0  # (so that the run is still going when the rebuild ends)
            new = map_dataset(folder, 2)  # cartoqa build maps --overwrite, meanwhile
            server.latency_s = 0.0  # the run may now go as fast as it can
            out, err = first.communicate(timeout=120)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        assert first.returncode == 1, out + err
        said = " ".join(err.split())
        assert "Traceback" not in said
        for words in (
            "the dataset maps",
            str(folder),
            "changed while this run was going",
            old.manifest.samples_sha256[:12],
            new.manifest.samples_sha256[:12],
            "run the same command again",
            "resumes",
        ):
            assert words.lower() in said.lower(), (words, said)
        [store] = runs.glob("*.jsonl")
        stored = store_lines(runs)
        assert 3 <= len(stored) < N  # what was answered is kept; the run did not go on
        old_by_id, new_by_id = old.by_id(), new.by_id()
        for rec in stored:  # every stored answer is the old question's, on the old map
            assert rec["error"] is None, rec
            [asked] = [e for e in server.log if e.text.startswith(f"[{rec['sample_id']}] ")]
            assert asked.text == old_by_id[rec["sample_id"]].prompt.text
            assert asked.image_sha256 == [image_hash(old, old_by_id[rec["sample_id"]])]
        for e in server.log:  # no request mixed an old question with a new map
            sid = e.text[1:5]
            ds = old if "(build 1)" in e.text else new
            assert e.image_sha256 == [image_hash(ds, ds.by_id()[sid])], e.text
        kept = store.read_bytes()

        # run again, as the message says: the dataset as it is now, to the end
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
    assert store.read_bytes() == kept  # the old dataset's answers stay as they were
    [new_store] = [p for p in runs.glob("*.jsonl") if p != store]
    lines = store_lines_of(new_store)
    assert sorted(r["sample_id"] for r in lines) == sorted(new_by_id)
    assert all(r["error"] is None for r in lines)
    for e in server.log:
        if "(build 2)" in e.text:
            sid = e.text[1:5]
            assert e.image_sha256 == [image_hash(new, new_by_id[sid])]


def store_lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class _Reader:
    """A deterministic local model: reads each request's image files as a local model does
    and answers with their SHA-256; ``during`` runs once, inside the first call, after the
    runner checked the images and before they are read (the window a rebuild can hit)."""

    spec = "test:image-reader"
    batch_size = 1
    thread_safe = False

    def __init__(self, during) -> None:
        self.during = during
        self.calls = 0

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        self.calls += 1
        if self.calls == 1:
            self.during()
        return [Response(text=" ".join(_sha256(p) for p in r.images)) for r in requests]

    def close(self) -> None:
        pass


def test_the_bytes_sent_are_the_pinned_datasets_even_when_it_is_replaced_mid_request(
    tmp_path,
):
    folder = tmp_path / "maps"
    old = map_dataset(folder, 1, n=5)
    model = _Reader(lambda: map_dataset(folder, 2, n=5))
    with open_run_store(tmp_path / "runs", old, model.spec, GenerationSettings()) as store:
        summary = run_model(old, model, store)
        records = store.records
    first = old.samples[0]
    assert [r.sample_id for r in records] == [first.id]  # answered, then the run stopped
    assert records[0].response == image_hash(old, first)  # the old map, as pinned
    assert summary.stopped and "changed while this run was going" in summary.stopped
    assert summary.remaining == 4


def test_a_rebuild_that_makes_the_same_dataset_does_not_stop_the_run(tmp_path):
    """A deterministic rebuild (same questions, same maps): nothing to stop for."""
    folder = tmp_path / "maps"
    old = map_dataset(folder, 1, n=5)
    model = _Reader(lambda: map_dataset(folder, 1, n=5))
    with open_run_store(tmp_path / "runs", old, model.spec, GenerationSettings()) as store:
        summary = run_model(old, model, store)
        latest = store.latest()
    assert summary.stopped is None and summary.answered == 5
    assert all(latest[s.id].response == image_hash(old, s) for s in old)


def test_a_dataset_deleted_under_a_run_stops_it_with_the_fix(tmp_path):
    folder = tmp_path / "maps"
    old = map_dataset(folder, 1, n=5)
    done = threading.Event()

    def delete() -> None:
        shutil.rmtree(folder)
        done.set()

    model = _Reader(delete)
    with open_run_store(tmp_path / "runs", old, model.spec, GenerationSettings()) as store:
        summary = run_model(old, model, store)
        records = store.records
    assert done.is_set()
    assert [r.response for r in records] == [image_hash(old, old.samples[0])]  # pinned bytes
    assert summary.stopped and "changed while this run was going" in summary.stopped
    assert "no manifest.json" in summary.stopped and "run the same command again" in (
        summary.stopped
    )


def test_a_rebuild_with_the_same_questions_on_other_maps_stops_the_run(tmp_path):
    folder = tmp_path / "maps"
    old = map_dataset(folder, 1, n=5)
    model = _Reader(lambda: map_dataset(folder, 1, n=5, maps=2))
    with open_run_store(tmp_path / "runs", old, model.spec, GenerationSettings()) as store:
        summary = run_model(old, model, store)
        records = store.records
    assert [r.response for r in records] == [image_hash(old, old.samples[0])]
    said = summary.stopped or ""
    assert "the same questions but 5 other image(s) (images/m-00.png" in said, said
    assert "run with a new --runs-dir" in said
