"""Baselines and model specs: oracle scores 100%, random has the right shape, specs parse."""

import pytest

from cartoqa.errors import ModelError
from cartoqa.models import (
    ConstantModel,
    GenerationSettings,
    OracleModel,
    RandomModel,
    Request,
    load_model,
    random_answer,
)
from cartoqa.runner import open_run_store, run_model
from cartoqa.scoring import score_sample
from evaluators.answers import parse_sample_answer, score_response
from tests.cartoqa.model_data import kinds_dataset


def requests_for(ds):
    return [Request(id=s.id, text=s.prompt.text, sample=s) for s in ds]


def test_oracle_scores_every_kind_through_the_runner_and_the_scorer(tmp_path):
    ds = kinds_dataset(tmp_path / "ds", copies=2)
    model = load_model("oracle")
    with open_run_store(tmp_path / "runs", ds, model.spec, GenerationSettings()) as store:
        summary = run_model(ds, model, store, concurrency=3)
        latest = store.latest()
    assert summary.answered == len(ds) and summary.failed == 0
    scores = {s.id: score_sample(s, latest[s.id].response) for s in ds}  # each task's scorer
    assert all(sc.correct for sc in scores.values()), {
        k: sc.why for k, sc in scores.items() if not sc.correct
    }


def test_random_answers_parse_for_every_kind_and_are_mostly_wrong(tmp_path):
    ds = kinds_dataset(tmp_path / "ds", copies=5)
    answers = RandomModel(seed=7).generate(requests_for(ds))
    scores = [score_sample(s, r.text) for s, r in zip(ds, answers, strict=True)]
    unreadable = {
        s.id: sc.why
        for s, sc in zip(ds, scores, strict=True)
        if (sc.why or "").startswith("unreadable")
    }
    assert unreadable == {}  # each task's own reader reads them: the shape is right
    assert sum(bool(sc.correct) for sc in scores) < len(ds) / 2


def test_random_is_seeded_per_sample_so_order_and_resume_do_not_matter(tmp_path):
    ds = list(kinds_dataset(tmp_path / "ds", copies=3))
    a = [random_answer(s, seed=1) for s in ds]
    b = [random_answer(s, seed=1) for s in reversed(ds)][::-1]
    c = [random_answer(s, seed=2) for s in ds]
    assert a == b
    assert a != c


def test_random_multiple_choice_spreads_over_the_options(tmp_path):
    ds = [s for s in kinds_dataset(tmp_path / "ds", copies=60) if s.task == "mfs"]
    letters = {parse_sample_answer(s, random_answer(s, seed=0)) for s in ds}
    assert letters == {"A", "B", "C", "D"}


def test_constant_answers_the_same_text_and_scores_as_unreadable(tmp_path):
    ds = kinds_dataset(tmp_path / "ds")
    model = load_model("constant:I don't know\\nsorry")
    assert isinstance(model, ConstantModel)
    out = model.generate(requests_for(ds))
    assert {r.text for r in out} == {"I don't know\nsorry"}
    assert not any(score_response(s, r.text)[0] for s, r in zip(ds, out, strict=True))


def test_oracle_without_the_sample_is_a_clear_error():
    with pytest.raises(ModelError, match="answers from the sample"):
        OracleModel().generate([Request(id="x", text="hi")])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "not one of"),
        ("openai:", "not one of"),
        ("bogus:model", "unknown model provider 'bogus'"),
        ("random:abc", "integer seed"),
    ],
)
def test_bad_specs_name_the_forms_that_work(spec, message):
    with pytest.raises(ModelError, match=message):
        load_model(spec)


def test_openai_spec_without_a_key_says_which_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        load_model("openai:gpt-4o")
    # a local server needs no key
    model = load_model("openai:my-model@http://127.0.0.1:9/v1")
    assert model.spec == "openai:my-model@http://127.0.0.1:9/v1"
    model.close()


def test_generation_settings_refuse_nonsense():
    with pytest.raises(ValueError, match="temperature=3"):
        GenerationSettings(temperature=3)
    with pytest.raises(ValueError, match="max_tokens=0"):
        GenerationSettings(max_tokens=0)


def test_random_never_writes_truths_kept_in_the_metadata(tmp_path):
    # place association's answer format writes the province and country from the metadata:
    # the oracle's answer has them, the random one must not (it would score them right)
    from cartoqa.scoring import score_run
    from cartoqa.stores import load_dataset
    from cartoqa.tasks.gps import generate_gps

    # the variant asks city, province and country; the default asks the city alone
    tasks = ["place_association_levels", "place_association"]
    generate_gps(tmp_path / "g", per_task=30, seed=4, tasks=tasks)
    ds = load_dataset(tmp_path / "g")
    oracle = {
        s.id: r.text for s, r in zip(ds, OracleModel().generate(requests_for(ds)), strict=True)
    }
    rand = {
        s.id: r.text
        for s, r in zip(ds, RandomModel(seed=3).generate(requests_for(ds)), strict=True)
    }
    for s in ds:
        country = s.metadata.model_extra["country"]
        if s.task == "place_association_levels":
            assert country in oracle[s.id]
        else:
            assert country not in oracle[s.id]  # the city alone, as asked
        assert country not in rand[s.id]
    scores = score_run(ds.samples, rand)
    for task in tasks:
        table = scores[task]["all"]
        assert table["country accuracy"] < 0.2 and table["province accuracy"] < 0.2


def test_random_groups_into_any_continent_not_only_the_truths(tmp_path):
    from cartoqa.stores import load_dataset
    from cartoqa.tasks.gps import generate_gps
    from evaluators.answers import read_grouping

    generate_gps(tmp_path / "g", per_task=30, seed=6, tasks=["boundary_analysis", "missing_data"])
    ds = load_dataset(tmp_path / "g")
    beyond = 0
    for s in ds:
        text = random_answer(s, seed=1)
        if s.task == "boundary_analysis":
            groups = read_grouping(text)  # the plain text the prompt asks
            beyond += bool(set(groups) - set(s.ground_truth.groups))
        else:
            value = float(text.split(":", 1)[1].split()[0])
            assert -180 <= value <= 180, text
    assert beyond >= 10  # the truth's labels would give the answer's shape away
