"""``cartoqa answer`` over real HTTP (issue 33): a real server in its own process, answers
stored in a real run store."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from urllib.parse import urlencode

from annotations.answer import open_sitting_store, sitting_samples
from cartoqa.records import Metadata, NumberTruth, Prompt, Sample
from cartoqa.stores import DatasetWriter, load_dataset
from tests.annotations.answer_data import answer_server, human_store, truth_strings, typed
from tests.cartoqa.model_data import PROV, kinds_dataset


def _form(sample: Sample, served: str) -> str:
    return urlencode({**typed(sample), "served": served}, doseq=True)


def _served(html: bytes) -> str:
    m = re.search(rb'name="served" value="([^"]+)"', html)
    assert m, html[:2000]
    return m.group(1).decode()


def _answer(server, sample: Sample) -> tuple[int, dict[str, str]]:
    status, _, html = server.request("GET", f"/q/{sample.id}")
    assert status == 200
    status, headers, _ = server.request("POST", f"/q/{sample.id}", _form(sample, _served(html)))
    return status, headers


def test_token_required_and_no_truth_in_any_page(tmp_path: Path) -> None:
    ds = kinds_dataset(tmp_path / "ds")
    with answer_server(ds.path, tmp_path / "runs", "ana") as server:
        assert server.request("GET", "/", token=False)[0] == 403
        assert server.request("GET", "/wrongtoken/", token=False)[0] == 403
        status, _, index = server.request("GET", "/")
        assert status == 200 and b"answered 0 / " in index
        checked = 0
        for s in ds:
            status, _, html = server.request("GET", f"/q/{s.id}")
            assert status == 200
            page = html.decode()
            assert s.prompt.text in page.replace("&#39;", "'").replace("&#34;", '"')
            for word in truth_strings(s):
                assert word not in page and word not in index.decode(), (s.id, word)
                checked += 1
            assert "© OpenStreetMap contributors" in page
        assert checked >= 8


def test_answers_are_stored_as_runs_of_human_name_and_survive_a_kill(tmp_path: Path) -> None:
    ds = kinds_dataset(tmp_path / "ds")
    samples = list(ds)
    runs = tmp_path / "runs"
    with answer_server(ds.path, runs, "ana") as server:
        for s in samples[:2]:
            status, headers = _answer(server, s)
            assert status == 303 and headers["location"].endswith(f"?done={s.id}")
        server.proc.kill()  # SIGKILL: nothing is flushed on the way out
        server.proc.wait()
    store = human_store(runs)
    recs = store.records
    assert [r.sample_id for r in recs] == [s.id for s in samples[:2]]
    assert {r.model for r in recs} == {"human:ana"}
    assert all(r.latency_s is not None and r.latency_s >= 0 for r in recs)
    assert store.path == open_sitting_store(runs, ds, "ana").path  # as cartoqa run names it
    with answer_server(ds.path, runs, "ana") as server:
        _, _, index = server.request("GET", "/")
        assert f"answered 2 / {len(samples)}".encode() in index
        assert f'href="/{server.token}/q/{samples[2].id}"'.encode() in index  # the next
        _, _, html = server.request("GET", f"/q/{samples[0].id}")
        assert b"first answer stands" in html and b'name="served"' not in html


def test_two_posts_for_one_question_store_one_record(tmp_path: Path) -> None:
    ds = kinds_dataset(tmp_path / "ds")
    s = next(x for x in ds if x.ground_truth.kind == "road_pair")
    with answer_server(ds.path, tmp_path / "runs", "bo") as server:
        _, _, html1 = server.request("GET", f"/q/{s.id}")
        _, _, html2 = server.request("GET", f"/q/{s.id}")
        got: list[int] = []
        bodies = [_form(s, _served(html1)), _form(s, _served(html2))]
        threads = [
            threading.Thread(
                target=lambda b=b: got.append(server.request("POST", f"/q/{s.id}", b)[0])
            )
            for b in bodies
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(got) == [303, 409]
    assert [r.sample_id for r in human_store(tmp_path / "runs").records] == [s.id]


def test_a_refused_form_keeps_what_was_typed_and_stores_nothing(tmp_path: Path) -> None:
    ds = kinds_dataset(tmp_path / "ds")
    s = next(x for x in ds if x.task == "rle")
    with answer_server(ds.path, tmp_path / "runs", "bo") as server:
        _, _, html = server.request("GET", f"/q/{s.id}")
        body = urlencode({"number": "four <b>hundred</b>", "served": _served(html)})
        status, _, page = server.request("POST", f"/q/{s.id}", body)
        assert status == 422
        assert b"four &lt;b&gt;hundred&lt;/b&gt;" in page and b"is not a number" in page
    assert (
        list((tmp_path / "runs").glob("*.jsonl")) == []
        or not human_store(tmp_path / "runs").records
    )


def test_skip_and_come_back(tmp_path: Path) -> None:
    ds = kinds_dataset(tmp_path / "ds")
    first, second, third = list(ds)[:3]
    with answer_server(ds.path, tmp_path / "runs", "cy") as server:
        _, _, html = server.request("GET", f"/q/{first.id}")
        assert f'id="skip" href="/{server.token}/q/{second.id}"'.encode() in html
        status, headers = _answer(server, second)
        assert status == 303
        assert headers["location"] == f"/{server.token}/q/{third.id}?done={second.id}"
        _, _, index = server.request("GET", "/")
        assert f'id="start" href="/{server.token}/q/{first.id}"'.encode() in index  # back
        status, headers = _answer(server, first)
        assert headers["location"] == f"/{server.token}/q/{third.id}?done={first.id}"


def _variant_dataset(folder: Path):
    with DatasetWriter(folder, name="variants", overwrite=True) as w:
        for task in ("rle", "distance", "bearing"):
            for i in range(4):
                for sid in (f"{task}-{i}", f"{task}-{i}@flip"):
                    w.add(
                        Sample(
                            id=sid,
                            task=task,
                            prompt=Prompt(text=f"[{sid}] How far?"),
                            ground_truth=NumberTruth(value=10.0 + i, unit="m"),
                            metadata=Metadata(),
                            provenance=PROV,
                        )
                    )
        w.finish(seeds=[0])
    return load_dataset(folder)


def test_stratified_n_seeded_and_without_variants(tmp_path: Path) -> None:
    ds = _variant_dataset(tmp_path / "ds")
    every = sitting_samples(ds)
    assert len(every) == 12 and not any("@" in s.id for s in every)
    assert len(sitting_samples(ds, variants=True)) == 24
    six = sitting_samples(ds, n=6, seed=3)
    assert sorted(s.task for s in six) == ["bearing"] * 2 + ["distance"] * 2 + ["rle"] * 2
    assert [s.id for s in six] == [s.id for s in sitting_samples(ds, n=6, seed=3)]
    others = {tuple(s.id for s in sitting_samples(ds, n=6, seed=k)) for k in range(8)}
    assert len(others) > 1  # the seed draws
    with answer_server(ds.path, tmp_path / "runs", "di", "--n", "6", "--seed", "3") as server:
        _, _, index = server.request("GET", "/")
        assert b"answered 0 / 6" in index
        for s in six:
            assert f'/q/{s.id}"'.encode() in index
        assert b"@flip" not in index


def test_a_bad_name_is_refused_with_what_may_be_used(tmp_path: Path) -> None:
    import subprocess
    import sys

    ds = kinds_dataset(tmp_path / "ds")
    for name in ("", "ana smith", "../x", "<b>"):
        got = subprocess.run(
            [sys.executable, "-m", "cartoqa", "answer", str(ds.path), "--as", name],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert got.returncode == 2
        assert f"--as {name!r} cannot name a run" in got.stderr
        assert "letters, digits" in got.stderr
