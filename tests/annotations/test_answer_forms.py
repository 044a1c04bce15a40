"""``cartoqa answer``'s forms (issue 33): for every registered task and every kind of truth
it allows, the answer a person types becomes text its own scorer reads as a model's."""

from __future__ import annotations

from typing import Any

import pytest

from annotations.answer_forms import ACTIONS, answer_form, read_answer
from cartoqa.records import Sample
from cartoqa.scoring import score_samples
from cartoqa.tasks.spec import registered_tasks
from tests.annotations.answer_data import every_task_samples, typed

SAMPLES = every_task_samples()


def _wrong(sample: Sample) -> dict[str, Any]:
    """A form that gives another answer than the truth."""
    form = typed(sample)
    t: Any = sample.ground_truth
    if t.kind == "choice":
        form["choice"] = next(k for k in t.options if k != t.answer)
    elif t.kind == "boolean":
        form["yesno"] = "no" if t.value else "yes"
    elif t.kind in ("count", "number"):
        form["number"] = str(int(t.value) * 3 + 7)
    elif t.kind == "names":
        form["names"] = "Nowhere Lane\nNo Such Place"
    elif t.kind == "road_pair":
        form.update(road_1="Nowhere Lane", road_2="No Such Road")
    elif t.kind == "route":
        form["action_0"] = next(a for a in ACTIONS if a != form["action_0"])
        form["road_0"] = "Nowhere Lane"
    elif t.kind == "feature_table":
        form = {k: (str(int(v) + 5) if k.startswith("count_") else "") for k, v in form.items()}
    else:
        form["text"] = "77.7, -33.3" if "," in form["text"] else "Nowhere at all"
    return form


def _score(sample: Sample, text: str) -> bool | None:
    [(_, score)] = score_samples([sample], {sample.id: text})[sample.task]
    return score.correct


def test_every_registered_task_has_a_sample() -> None:
    assert {s.task for s in SAMPLES} == set(registered_tasks())
    assert {"mfs", "interpolation", "mtmf", "srn"} <= {s.task for s in SAMPLES}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_the_truth_typed_scores_correct_and_another_answer_wrong(sample: Sample) -> None:
    right = read_answer(sample, typed(sample))
    assert right.problems == []
    assert _score(sample, right.text) is True, right.text
    wrong = read_answer(sample, _wrong(sample))
    assert wrong.problems == []
    assert _score(sample, wrong.text) is False, wrong.text


def _sample(task: str) -> Sample:
    return next(s for s in SAMPLES if s.task == task)


def test_the_form_fits_the_kind_and_holds_no_truth() -> None:
    assert answer_form(_sample("mfs")).form == "choice"
    assert answer_form(_sample("stmf_presence")).form == "yesno"
    rle = answer_form(_sample("rle"))
    assert (rle.form, rle.unit) == ("number", "m")
    assert answer_form(_sample("mml")).form == "road_pair"
    assert answer_form(_sample("srn")).form == "route"
    table = answer_form(_sample("mtmf"))
    assert table.form == "table" and table.rows
    assert answer_form(_sample("interpolation")).form == "text"
    # a table form names the feature types asked about, never their counts or names
    mtmf: Any = _sample("mtmf").ground_truth
    shown = repr(table)
    for fc in mtmf.features.values():
        for name in filter(None, fc.names):
            assert name not in shown


def test_a_refused_form_says_why_and_keeps_what_was_typed() -> None:
    got = read_answer(_sample("rle"), {"number": "about 4OO"})
    assert got.text == "" and got.values == {"number": "about 4OO"}
    assert "'about 4OO' is not a number" in got.problems[0]
    got = read_answer(_sample("stmf_count"), {"number": "2.5"})
    assert "whole number" in got.problems[0]
    got = read_answer(_sample("mml"), {"road_1": "Rue A", "road_2": ""})
    assert got.problems == ["Write both roads."] and got.values["road_1"] == "Rue A"
    got = read_answer(_sample("srn"), {"action_0": "fly", "road_0": "Rue A"})
    assert "Leg 1: pick an action" in got.problems[0]
    assert got.values["legs"] == [("fly", "Rue A")]
    got = read_answer(_sample("mfs"), {"choice": "Z"})
    assert got.problems and got.problems[0].startswith("Pick one of A, B")
    got = read_answer(_sample("interpolation"), {"text": "   "})
    assert got.problems == ["Write an answer."]
