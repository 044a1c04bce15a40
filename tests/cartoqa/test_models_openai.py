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


class FakeClock:
    """Time that moves only when the code under test sleeps or a try takes time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.now += s


def test_the_deadline_cuts_each_try_and_stops_the_retries():
    from cartoqa.models._retry import Failure, call_with_retries

    clock = FakeClock()
    timeouts = []

    def call(timeout_s):
        timeouts.append(timeout_s)
        clock.now += timeout_s  # the try hangs until its timeout
        raise TimeoutError

    policy = RetryPolicy(max_retries=6, base_s=2, max_s=2, timeout_s=120, deadline_s=300)
    result, failure, retries = call_with_retries(
        call,
        lambda exc: Failure("retry", "timeout", kind="timeout"),
        policy,
        rng=__import__("random").Random(0),
        what="m",
        sleep=clock.sleep,
        clock=clock,
    )
    assert result is None and failure.kind == "timeout"
    assert timeouts[:2] == [120, 120] and 0 < timeouts[2] < 60  # the third is cut to what is left
    assert len(timeouts) == 3 and retries == 2
    assert clock.now <= 300
    assert "gave up after 3 tries" in failure.message and "300 s deadline" in failure.message


def test_a_retry_after_past_the_deadline_gives_up_at_once():
    from cartoqa.models._retry import Failure, call_with_retries

    clock = FakeClock()
    calls = []

    def call(timeout_s):
        calls.append(timeout_s)
        raise RuntimeError("429")

    result, failure, _ = call_with_retries(
        call,
        lambda exc: Failure("retry", "HTTP 429", retry_after=50),
        RetryPolicy(max_s=60, deadline_s=30),
        rng=__import__("random").Random(0),
        what="m",
        sleep=clock.sleep,
        clock=clock,
    )
    assert result is None and len(calls) == 1 and clock.now == 0  # no 50 s wait was begun
    assert "deadline" in failure.message


def test_connect_failures_are_retried_connect_retries_times_only():
    from cartoqa.models._retry import Failure, call_with_retries

    clock = FakeClock()
    for connect_retries in (0, 1, 3):
        calls = []

        def call(timeout_s, calls=calls):
            calls.append(timeout_s)
            raise ConnectionRefusedError

        _, failure, retries = call_with_retries(
            call,
            lambda exc: Failure("retry", "cannot connect", kind="connect"),
            RetryPolicy(max_retries=6, base_s=0.01, connect_retries=connect_retries),
            rng=__import__("random").Random(0),
            what="m",
            sleep=clock.sleep,
            clock=clock,
        )
        assert len(calls) == connect_retries + 1 and retries == connect_retries
        n = connect_retries + 1
        assert failure.message.endswith(f"(after {n} {'try' if n == 1 else 'tries'})")


def test_retry_policy_defaults_and_checks():
    p = RetryPolicy()
    assert (p.max_retries, p.base_s, p.max_s) == (6, 1.0, 60.0)
    assert (p.timeout_s, p.deadline_s, p.connect_retries) == (120.0, 300.0, 1)
    for bad in ({"deadline_s": 0}, {"connect_retries": -1}, {"timeout_s": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            RetryPolicy(**bad)


def test_token_counts_are_whole_numbers_from_zero_or_unknown():
    from cartoqa.models._api import token_count

    assert [token_count(v) for v in (0, 7, 7.0, 2**63 - 1)] == [0, 7, 7, 2**63 - 1]
    for bad in (-5, -0.5, 7.5, "12", "many", None, True, float("nan"), float("inf"), 2**63, [3]):
        assert token_count(bad) is None, bad


def test_retry_after_that_is_not_a_number_is_no_wait():
    assert parse_retry_after("nan") is None
    assert parse_retry_after("-3") == 0.0


def test_openai_leaves_out_settings_its_sdk_does_not_take(fake_server):
    import inspect

    import openai

    model = model_for(fake_server)
    create = openai.OpenAI(api_key="x").chat.completions.create
    taken = set(inspect.signature(create).parameters)
    missing = {"temperature", "seed", "max_tokens"} - taken
    assert len(model.notes) == len(missing)
    model.generate([Request(id="a", text="hi", settings=GenerationSettings(seed=1))])
    [got] = fake_server.log
    assert set(got.params) & {"temperature", "seed", "max_tokens"} == (
        {"temperature", "seed", "max_tokens"} & taken
    )
