"""The openai adapter against a real local HTTP server that injects faults."""

import hashlib
import time

import pytest

from cartoqa.errors import ModelError
from cartoqa.models import GenerationSettings, Request, RetryPolicy, load_model
from cartoqa.models._retry import parse_retry_after
from cartoqa.runner import open_run_store, run_model
from cartoqa.testing.fake_openai import FakeOpenAIServer, Fault
from tests.cartoqa.model_data import kinds_dataset, text_dataset

FAST = RetryPolicy(max_retries=3, base_s=0.01, max_s=2.0, timeout_s=0.5)


def model_for(server, retry=FAST, **kw):
    return load_model(f"openai:fake-vlm@{server.url}", retry=retry, **kw)


def test_images_and_prompts_reach_the_server_as_sent(tmp_path, fake_server):
    ds = kinds_dataset(tmp_path / "ds")
    sample = next(s for s in ds if s.task == "srn")
    path = ds.image_path(sample.prompt.images[0])
    model = model_for(fake_server)
    settings = GenerationSettings(temperature=0, max_tokens=77, seed=5)
    [r] = model.generate(
        [
            Request(
                id=sample.id,
                text=sample.prompt.text,
                system="sys",
                images=(path,),
                settings=settings,
            )
        ]
    )
    [got] = fake_server.log
    assert r.ok and r.text == FakeOpenAIServer.reply_for(sample.prompt.text)
    assert got.text == sample.prompt.text and got.system == "sys"
    assert got.image_sha256 == [hashlib.sha256(path.read_bytes()).hexdigest()]
    assert got.params["max_tokens"] == 77 and got.params["temperature"] == 0
    assert got.params["seed"] == 5 and got.model == "fake-vlm"
    assert r.input_tokens == len(sample.prompt.text.split()) + 85
    assert r.output_tokens == len(r.text.split())


def test_429_waits_at_least_retry_after_then_succeeds(fake_server):
    fake_server.faults = [Fault("429", retry_after=0.4)]
    model = model_for(fake_server)
    t0 = time.perf_counter()
    [r] = model.generate([Request(id="a", text="hello")])
    assert r.ok and r.retries == 1
    assert time.perf_counter() - t0 >= 0.4
    assert [e.fault for e in fake_server.log] == ["429", None]


@pytest.mark.parametrize("kind", ["500", "hang", "malformed", "empty"])
def test_transient_faults_are_retried(fake_server, kind):
    fake_server.faults = [Fault(kind, times=2, hang_s=3)]
    [r] = model_for(fake_server).generate([Request(id="a", text="hello")])
    assert r.ok, r.error
    assert r.retries == 2
    assert r.text == FakeOpenAIServer.reply_for("hello")


def test_a_fault_that_never_ends_fails_the_request_with_its_reason(fake_server):
    fake_server.faults = [Fault("500", times=-1)]
    [r] = model_for(fake_server).generate([Request(id="a", text="hello")])
    assert not r.ok and r.text is None
    assert "HTTP 500" in r.error and "after 4 tries" in r.error
    assert len(fake_server.log) == 4


def test_a_bad_request_is_not_retried(fake_server):
    fake_server.faults = [Fault("400", times=-1)]
    [r] = model_for(fake_server).generate([Request(id="a", text="hello")])
    assert "HTTP 400" in r.error and r.retries == 0 and len(fake_server.log) == 1


def test_a_refused_key_stops_everything(fake_server):
    fake_server.faults = [Fault("401", times=-1)]
    with pytest.raises(ModelError, match="refused the API key: check OPENAI_API_KEY"):
        model_for(fake_server).generate([Request(id="a", text="hello")])


def test_the_key_is_sent_but_never_stored(tmp_path, fake_server, monkeypatch):
    secret = "sk-test-" + "x7" * 12
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    ds = text_dataset(tmp_path / "ds", 5)
    model = model_for(fake_server)
    with open_run_store(tmp_path / "runs", ds, model.spec, GenerationSettings()) as store:
        run_model(ds, model, store)
    assert {e.authorization for e in fake_server.log} == {f"Bearer {secret}"}
    for f in (tmp_path / "runs").iterdir():
        assert secret not in f.read_text()


def test_retry_after_parsing():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert 0 <= parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") <= 0.0  # in the past: no wait


def test_backoff_grows_with_jitter_and_is_capped():
    import random

    p = RetryPolicy(base_s=1, max_s=8)
    rng = random.Random(0)
    waits = [[p.backoff_s(k, rng, None) for _ in range(200)] for k in range(6)]
    for k, w in enumerate(waits):
        ceiling = min(8, 2**k)
        assert ceiling / 2 <= min(w) and max(w) <= ceiling
        assert len(set(w)) > 100  # jittered
    assert p.backoff_s(0, rng, 5.0) >= 5.0  # Retry-After wins over a shorter backoff
    assert p.backoff_s(0, rng, 500.0) == 8.0  # but not past the cap


def test_runner_with_every_fault_ends_with_each_sample_answered_or_failed(tmp_path, fake_server):
    ds = text_dataset(tmp_path / "ds", 24)
    fake_server.faults = [
        Fault("429", match="q-0001", times=2, retry_after=0.1),
        Fault("500", match="q-0002"),
        Fault("hang", match="q-0003", hang_s=3),
        Fault("malformed", match="q-0004"),
        Fault("empty", match="q-0005"),
        Fault("500", match="q-0006", times=-1),
        Fault("malformed", match="q-0007", times=-1),
        Fault("400", match="q-0008", times=-1),
    ]
    fake_server.latency_s = 0.02
    model = model_for(fake_server)
    with open_run_store(tmp_path / "runs", ds, model.spec, GenerationSettings()) as store:
        summary = run_model(ds, model, store, concurrency=6)
        latest = store.latest()
    assert summary.stopped is None
    assert sorted(summary.failed_ids) == ["q-0006", "q-0007", "q-0008"]
    assert summary.answered == 21 and summary.failed == 3 and summary.remaining == 3
    assert summary.retried == 5 + 2  # q-0001..5, and the two that never recover
    assert set(latest) == {s.id for s in ds}
    assert "HTTP 500" in latest["q-0006"].error and "malformed" in latest["q-0007"].error
    assert "HTTP 400" in latest["q-0008"].error
    for s in ds:
        if s.id not in summary.failed_ids:
            assert latest[s.id].response == FakeOpenAIServer.reply_for(s.prompt.text)

    # the faults are gone: a second run retries the three failures only
    fake_server.faults = []
    fake_server.log.clear()
    with open_run_store(tmp_path / "runs", ds, model.spec, GenerationSettings()) as store:
        again = run_model(ds, model, store, concurrency=6)
        assert store.attempts("q-0006") == 2
        assert len(store.completed_ids()) == 24
    assert again.skipped == 21 and again.answered == 3 and again.failed == 0
    assert sorted(e.text.split("]")[0][1:] for e in fake_server.log) == [
        "q-0006",
        "q-0007",
        "q-0008",
    ]


def test_runner_stops_on_a_refused_key_and_keeps_what_was_answered(tmp_path, fake_server):
    ds = text_dataset(tmp_path / "ds", 12)
    fake_server.faults = [Fault("401", match="q-0008", times=-1)]
    model = model_for(fake_server)
    with open_run_store(tmp_path / "runs", ds, model.spec, GenerationSettings()) as store:
        summary = run_model(ds, model, store, concurrency=1)
        assert store.completed_ids() == {f"q-{i:04d}" for i in range(8)}
    assert summary.stopped and "refused the API key" in summary.stopped
    assert summary.answered == 8


def test_a_batch_to_generate_is_sent_concurrently_and_answered_in_order(fake_server):
    fake_server.latency_s = 0.2
    model = model_for(fake_server)
    texts = [f"question {i}" for i in range(6)]
    out = model.generate([Request(id=str(i), text=t) for i, t in enumerate(texts)])
    assert [r.text for r in out] == [FakeOpenAIServer.reply_for(t) for t in texts]
    assert fake_server.max_in_flight > 1
