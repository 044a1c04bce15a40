"""STMF and MTMF scoring: what models write, the default rules, and the published arithmetic
("original" mode: the tasks' registered scorers, ``evaluators.published`` through
``cartoqa.tasks.release.features``) recomputed by hand."""

from __future__ import annotations

import json
import math
import time

import pytest

from cartoqa.records import (
    BooleanTruth,
    CountTruth,
    FeatureCount,
    FeatureTableTruth,
    NamesTruth,
    Prompt,
    Provenance,
    Sample,
)
from cartoqa.records.feature_types import FEATURE_TYPES
from cartoqa.tasks.spec import get_task
from evaluators import AnswerParseError
from evaluators.poi import (
    count_metrics,
    count_score,
    mtmf_metrics,
    mtmf_score,
    name_key,
    names_metrics,
    names_score,
    parse_count,
    parse_feature_map,
    parse_names,
    parse_presence,
    presence_metrics,
    presence_score,
)


def original(task: str):
    """The task's registered "original" scorer (``evaluators.published`` through
    ``cartoqa.tasks.release.features``)."""
    return get_task(task).scorer("original")


def _sample(truth, task: str, id_: str = "s1") -> Sample:
    return Sample(
        id=id_,
        task=task,
        prompt=Prompt(text="q"),
        ground_truth=truth,
        provenance=Provenance(generator="tests"),
    )


def presence(value: bool, id_: str = "p1") -> Sample:
    return _sample(BooleanTruth(value=value, feature_type="bank"), "stmf_presence", id_)


def count(value: int, optional: int = 0, id_: str = "c1") -> Sample:
    truth = CountTruth(value=value, optional=optional, feature_type="bank")
    return _sample(truth, "stmf_count", id_)


def names(required: list[str], optional: list[str] | None = None, id_: str = "n1") -> Sample:
    truth = NamesTruth(names=required, optional=optional or [], feature_type="coffee_shop")
    return _sample(truth, "stmf_names", id_)


def table(features: dict[str, FeatureCount], id_: str = "m1") -> Sample:
    return _sample(FeatureTableTruth(features=features), "mtmf", id_)


def _lines_answer(required: list[str]) -> str:
    """A names truth as the prompt asks for it: one a line, `""` unnamed, None for none."""
    if not required:
        return "None"
    return "\n".join('""' if n == "" else n for n in required)


ALL_ONE_PRESENCE = {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}

# ------------------------------------------------------------------ presence


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ("Yes", True),
        ("No", False),
        ("**Yes**", True),
        ("Yes.", True),
        ("- yes", True),
        ("Answer: No", False),
        ("**Answer:** Yes", True),
        ("[Yes]", True),
        ("No, there is no bank on this map.", False),
        ("Yes\nThere is a bank icon near the top left.", True),
        ("Looking at the map, I checked every icon.\n\nYes", True),
        ("I think there is one.\nFINAL ANSWER: **no**", False),
        ("<think>yes? no?</think>\nNo.", False),
        ("No hospital is shown on this map.", False),
        ("TRUE", True),
    ],
)
def test_presence_reads_what_models_write(answer, want):
    assert parse_presence(presence(want), answer) is want
    assert presence_score(presence(want), answer).correct


@pytest.mark.parametrize(
    "answer", ["", "   \n", "Maybe.", "No idea", "I cannot tell from the map."]
)
def test_presence_unreadable(answer):
    with pytest.raises(AnswerParseError):
        parse_presence(presence(True), answer)
    sc = presence_score(presence(True), answer)
    assert sc.correct is False and sc.why.startswith("unreadable")
    assert sc.values == {"predicted": None, "truth": 1.0}


def test_presence_no_response():
    sc = presence_score(presence(False), None)
    assert sc.correct is False and sc.why == "no response" and sc.values["predicted"] is None


def test_presence_macro_f1_against_a_hand_computation():
    truths = [True, True, True, False, False]
    answers = ["Yes", "No", "Yes", "No", "Yes"]
    rows = [
        (s, presence_score(s, a))
        for s, a in (
            (presence(t, f"p{i}"), a) for i, (t, a) in enumerate(zip(truths, answers, strict=True))
        )
    ]
    m = presence_metrics(rows)
    # yes: tp 2, fp 1, fn 1 -> P = R = F1 = 2/3; no: tp 1, fp 1, fn 1 -> 1/2
    assert m["n"] == 5 and m["accuracy"] == pytest.approx(3 / 5)
    assert m["precision"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert m["recall"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert m["f1"] == pytest.approx(7 / 12)
    assert m["unanswered"] == 0
    metrics = pytest.importorskip("sklearn.metrics")
    y, p = [int(t) for t in truths], [int(a == "Yes") for a in answers]
    assert m["f1"] == pytest.approx(metrics.f1_score(y, p, average="macro"))
    assert m["precision"] == pytest.approx(metrics.precision_score(y, p, average="macro"))


def test_presence_metrics_classes_as_sklearn_takes_them_and_unreadable_answers():
    # one class present only: sklearn's macro over the labels present is 1
    rows = [(presence(True, f"p{i}"), presence_score(presence(True), "Yes")) for i in range(2)]
    assert presence_metrics(rows) == {"n": 2.0, **ALL_ONE_PRESENCE, "unanswered": 0.0}
    # an unreadable answer misses its true class, and is nobody's false positive
    rows = [
        (presence(True, "a"), presence_score(presence(True), "hmm")),
        (presence(False, "b"), presence_score(presence(False), "No")),
    ]
    m = presence_metrics(rows)
    assert m["accuracy"] == 0.5 and m["unanswered"] == 1
    assert m["f1"] == pytest.approx(0.5) and m["recall"] == pytest.approx(0.5)
    assert math.isnan(presence_metrics([])["f1"])


# ------------------------------------------------------------------ counting


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ("3", 3),
        ("3\nI counted three bank icons.", 3),
        ("**4**", 4),
        ("There are 3 banks on the map.", 3),
        ("There are three banks.", 3),
        ("Three.", 3),
        ("twenty", 20),
        ("1,234", 1234),
        ("None", 0),
        ("No banks are visible.", 0),
        ("There is a bank near the river.", 1),
        ("Answer: 5", 5),
        ("Count: **6**", 6),
        ("- 2", 2),
        ("Looking at the map carefully at zoom 19.\n\nThere are 7 banks.", 7),
        ("I count 2 banks.", 2),
        ("The map shows 4 banks:\n1. Chase\n2. Wells Fargo\n3. Citi\n4. BofA", 4),
        ("Let me think.\nFINAL ANSWER: 8", 8),
        ("3.0", 3),
    ],
)
def test_count_reads_what_models_write(answer, want):
    assert parse_count(count(want), answer) == want


@pytest.mark.parametrize(
    "answer", ["", "-2", "3.5", "1,5", "12,345", "10001", "I am not sure.", "many", "9" * 200]
)
def test_count_unreadable(answer):
    with pytest.raises(AnswerParseError):
        parse_count(count(1), answer)


def test_count_accepts_the_optional_range_and_reports_the_distance_to_it():
    s = count(3, optional=1)
    assert count_score(s, "3").correct and count_score(s, "4").correct
    assert count_score(s, "4").values == {"predicted": 4.0, "truth": 3.0, "error": 0.0}
    assert count_score(s, "6").values["error"] == 2.0 and not count_score(s, "6").correct
    assert count_score(s, "1").values["error"] == 2.0
    bad = count_score(s, "lots")
    assert bad.correct is False and bad.why.startswith("unreadable")
    assert bad.values == {"predicted": None, "truth": 3.0, "error": 3.0}  # counted as 0


def test_count_metrics_pooled_against_a_hand_computation():
    rows = [
        (count(1, id_="a"), count_score(count(1), "1")),
        (count(2, id_="b"), count_score(count(2), "4")),
        (count(3, optional=1, id_="c"), count_score(count(3, optional=1), "5")),
        (count(6, id_="d"), count_score(count(6), "no idea at all")),
    ]
    m = count_metrics(rows)
    errors = [0, 2, 1, 6]  # d unreadable: counted as 0
    truths = [1, 2, 3, 6]
    sse = sum(e * e for e in errors)
    sst = sum((t - 3) ** 2 for t in truths)
    assert m["n"] == 4 and m["unanswered"] == 1
    assert m["rmse"] == pytest.approx(math.sqrt(sse / 4))
    assert m["mae"] == pytest.approx(9 / 4)
    assert m["r2"] == pytest.approx(1 - sse / sst)
    assert "drawn_at_random" not in m


def test_count_r2_edge_cases():
    same = [(count(2, id_=f"s{i}"), count_score(count(2), "2")) for i in range(3)]
    assert count_metrics(same)["r2"] == 1.0  # SST 0, SSE 0
    off = [*same[:2], (count(2, id_="x"), count_score(count(2), "3"))]
    assert count_metrics(off)["r2"] == 0.0  # SST 0, SSE > 0
    assert math.isnan(count_metrics(same[:1])["r2"])  # fewer than two, as r2_score
    assert math.isnan(count_metrics([])["rmse"])
    metrics = pytest.importorskip("sklearn.metrics")
    assert metrics.r2_score([2, 2, 2], [2, 2, 2]) == 1.0
    assert metrics.r2_score([2, 2, 2], [2, 2, 3]) == 0.0


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("answer", "want"),
    [
        ('Café Noir\n""\nBlue Bottle', ["Café Noir", "", "Blue Bottle"]),
        ('["Café Noir", "", "Blue Bottle"]', ["Café Noir", "", "Blue Bottle"]),
        ('```json\n["Café Noir", "Blue Bottle"]\n```', ["Café Noir", "Blue Bottle"]),
        ("```\n- Café Noir\n- Blue Bottle\n```", ["Café Noir", "Blue Bottle"]),
        ("1. Café Noir\n2. Blue Bottle", ["Café Noir", "Blue Bottle"]),
        ("* **Café Noir**\n* Blue Bottle", ["Café Noir", "Blue Bottle"]),
        ("Coffee shops shown on the map:\n- Café Noir", ["Café Noir"]),
        ("“Café Noir”\n''\n\"Blue Bottle\",", ["Café Noir", "", "Blue Bottle"]),
        ("Café Noir\n(unnamed)", ["Café Noir", ""]),
        ("None", []),
        ("None.", []),
        ("There are no coffee shops on this map.", []),
        ("No names", []),
        ("[]", []),
        ('I looked.\nFINAL ANSWER: ["Café Noir"]', ["Café Noir"]),
        ('Here are the names:\n["Café Noir"]', ["Café Noir"]),
        ("Café Noir\n[unnamed]\nBlue Bottle", ["Café Noir", "", "Blue Bottle"]),
    ],
)
def test_names_read_what_models_write(answer, want):
    assert parse_names(names(["x"]), answer) == want


def test_name_keys_make_case_quotes_and_spacing_alike():
    assert name_key("  McDonald’s. ") == name_key("mcdonald's") == "mcdonald's"
    assert name_key("“Café  Noir”") == name_key("CAFÉ NOIR") == name_key("Cafe\u0301 Noir")
    assert name_key("Café (Main St)") == "café (main st)"


def test_names_multiset_and_optional_rules():
    s = names(["Café Noir", "Blue Bottle", "Café Noir", ""], optional=["Espresso Bar"])
    # curly quotes, case, duplicates (two cafés of one name), an optional name, a wrong one
    sc = names_score(s, 'café noir\nCAFÉ NOIR\n“Espresso Bar”\nStarbucks\n""')
    v = sc.values
    # matched 2 (both Café Noir); Espresso Bar optional: out of precision's denominator
    assert v["precision"] == pytest.approx(2 / 3) and v["recall"] == pytest.approx(2 / 3)
    assert v["f1"] == pytest.approx(2 / 3) and not sc.correct
    # a third Café Noir is one too many
    v = names_score(s, "Café Noir\nCafé Noir\nCafé Noir\nBlue Bottle").values
    assert v["precision"] == pytest.approx(3 / 4) and v["recall"] == 1.0
    # optional names may be left out
    assert names_score(s, "Café Noir\nCafé Noir\nBlue Bottle").correct


@pytest.mark.parametrize(
    ("required", "optional", "answer", "prf"),
    [
        ([], [], "None", (1.0, 1.0, 1.0)),
        ([], [], '""', (1.0, 1.0, 1.0)),  # unnamed features are the count task's
        ([], [], "Starbucks", (0.0, 1.0, 0.0)),
        (["Café Noir"], [], "None", (0.0, 0.0, 0.0)),
        ([], ["Espresso Bar"], "Espresso Bar", (1.0, 1.0, 1.0)),
        (["Café Noir"], ["Espresso Bar"], "Espresso Bar", (0.0, 0.0, 0.0)),
    ],
)
def test_names_edge_cases(required, optional, answer, prf):
    v = names_score(names(required, optional), answer).values
    assert (v["precision"], v["recall"], v["f1"]) == prf


def test_names_fuzzy_values_are_reported_beside_the_exact_ones():
    s = names(["Starbucks Coffee", "Blue Bottle"])
    v = names_score(s, "Starbuck Coffee\nBlue Bottle\nPeet's").values
    assert (v["precision"], v["recall"]) == (pytest.approx(1 / 3), 0.5)
    assert v["fuzzy_precision"] == pytest.approx(2 / 3) and v["fuzzy_recall"] == 1.0
    assert v["fuzzy_f1"] == pytest.approx(0.8)
    # a name far from every truth does not match even fuzzily
    v = names_score(names(["Blue Bottle"]), "Red Barn").values
    assert v["fuzzy_f1"] == 0.0


def test_names_unreadable_answers_score_zero_and_count_as_unanswered():
    s = names(["Café Noir"])
    for answer in ("", None, "x" * 2_000_000, "\n".join(["a"] * 20_000), "[" * 50 + "]" * 50):
        sc = names_score(s, answer)
        assert sc.correct is False and sc.values["predicted"] is None, answer and answer[:20]
        assert sc.values["f1"] == sc.values["fuzzy_f1"] == 0.0
    rows = [(s, names_score(s, "Café Noir")), (s, names_score(s, ""))]
    m = names_metrics(rows)
    assert m == {
        "n": 2.0,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "fuzzy_precision": 0.5,
        "fuzzy_recall": 0.5,
        "fuzzy_f1": 0.5,
        "unanswered": 1,
    }


# ------------------------------------------------------------------ MTMF

MTMF = {
    "bank": FeatureCount(count=2, names=["Nordea", ""]),
    "coffee_shop": FeatureCount(
        count=1, names=["Café Noir"], optional_count=1, optional_names=["Espresso Bar"]
    ),
}
MTMF_ANSWER = (
    "Here is the table.\n```json\n"
    + json.dumps(
        {
            "Banks": {"count": "3", "names": ["Nordea"]},
            "Coffee Shop": {"count": 2, "names": ["Café Noir", "Espresso Bar"]},
            "restaurant": {"count": 1, "names": ["Pizza Hut"]},
            "school": {"count": 4, "names": []},
        }
    )
    + "\n```\nThat is all."
)


def test_feature_map_keys_labels_and_values_as_models_write_them():
    s = table(MTMF)
    got = parse_feature_map(s, MTMF_ANSWER)
    assert len(got) == 22 and "school" not in got
    assert got["bank"] == {"count": 3, "names": ["Nordea"]}
    assert got["restaurant"] == {"count": 1, "names": ["Pizza Hut"]}
    assert got["atm"] == {"count": 0, "names": []}
    other = parse_feature_map(
        s,
        '{"ATM or cash point": 2, "coffee-shop": ["A", "B"], "Fitness Center": '
        '{"names": ["Gym One"]}, "BUS_STOP": {"count": 2.0, "names": null}, '
        '"Drug store/pharmacy": {"count": null}}',
    )
    assert other["atm"] == {"count": 2, "names": []}
    assert other["coffee_shop"] == {"count": 2, "names": ["A", "B"]}
    assert other["fitness_centre"] == {"count": 1, "names": ["Gym One"]}
    assert other["bus_stop"] == {"count": 2, "names": []}
    assert other["pharmacy"] == {"count": 0, "names": []}
    wrapped = parse_feature_map(s, '{"features": {"bank": {"count": 1, "names": []}}}')
    assert wrapped["bank"]["count"] == 1
    assert all(v["count"] == 0 for v in parse_feature_map(s, "{}").values())


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "I cannot read the map.",
        '{"answer": "two banks"}',
        '{"bank": {"count": -1}}',
        '{"bank": {"count": 2.5}}',
        '{"bank": {"count": "several"}}',
        '{"bank": ' * 40 + "1" + "}" * 40,
        "{" + " " * 2_000_000 + "}",
    ],
)
def test_feature_map_unreadable(answer):
    with pytest.raises(AnswerParseError):
        parse_feature_map(table(MTMF), answer)
    sc = mtmf_score(table(MTMF), answer)
    assert sc.correct is False and sc.why.startswith("unreadable")
    assert sc.values["predicted"] is None and sc.values["f1"] == 0.0


def test_mtmf_per_map_against_a_hand_computation():
    v = mtmf_score(table(MTMF), MTMF_ANSWER).values
    # errors: bank 1, coffee 0 (2 in [1, 2]), restaurant 1; true counts 2, 1 and 20 zeros
    sst = 5 - 22 * (3 / 22) ** 2
    assert v["rmse"] == pytest.approx(math.sqrt(2 / 22))
    assert v["r2"] == pytest.approx(1 - 2 / sst)
    # names per type: bank 1 of 1, coffee 1 of 2 less the optional, restaurant 0 of 1
    assert v["precision"] == pytest.approx(2 / 3) and v["recall"] == 1.0
    assert v["f1"] == pytest.approx(0.8)


def test_mtmf_r2_edge_cases_and_metrics():
    empty = table({})
    nothing = mtmf_score(empty, "{}")
    assert nothing.correct and nothing.values["r2"] == 1.0 and nothing.values["f1"] == 1.0
    one = mtmf_score(empty, '{"bank": {"count": 1, "names": []}}').values
    assert one["r2"] == 0.0 and one["rmse"] == pytest.approx(math.sqrt(1 / 22))
    unread = mtmf_score(empty, "no table")
    assert unread.values["r2"] == 1.0 and unread.values["f1"] == 0.0  # counted as zeros
    m = mtmf_metrics([(empty, nothing), (empty, unread)])
    assert m["n"] == 2 and m["unanswered"] == 1 and m["f1"] == 0.5 and m["rmse"] == 0.0
    assert "crashed" not in m


# ------------------------------------------------------------------ the oracle, both modes

ORACLE_NAMES = [[], ["Café Noir"], ["Café Noir", "", "Blue Bottle"], ["McDonald's", "Subway"]]


def full(features: dict[str, FeatureCount], id_: str = "m1") -> Sample:
    """An MTMF map whose truth lists all 22 types, as a built dataset's does (the published
    evaluator reads every one of them from the reply)."""
    every = {t: FeatureCount(count=0) for t in FEATURE_TYPES} | features
    return table(every, id_)


def original_table(task: str, rows) -> dict[str, float]:
    """The "all" row of the task's original-mode table (the published table)."""
    return get_task(task).scores_table(rows, mode="original")["all"]


def test_the_oracle_scores_one_on_every_metric_in_both_modes():
    samples = [presence(v, f"p{v}") for v in (True, False)]
    rows = [
        (s, presence_score(s, ("Yes" if s.ground_truth.value else "No") + "\nAn icon."))
        for s in samples
    ]
    assert presence_metrics(rows) == {"n": 2.0, **ALL_ONE_PRESENCE, "unanswered": 0.0}
    score = original("stmf_presence")
    rows = [
        (s, score(s, ("Yes" if s.ground_truth.value else "No") + "\nAn icon.")) for s in samples
    ]
    want = {"n": 2, **ALL_ONE_PRESENCE, "crashed": 0, "drawn at random": 0}
    assert original_table("stmf_presence", rows) == want
    rows = [(s, presence_score(s, s.ground_truth.answer_text())) for s in samples]
    assert presence_metrics(rows)["f1"] == 1.0  # "FINAL ANSWER: yes"

    counts = [count(v, id_=f"c{v}") for v in (0, 1, 3, 16)]
    m = count_metrics([(s, count_score(s, s.ground_truth.answer_text())) for s in counts])
    assert (m["rmse"], m["mae"], m["r2"], m["unanswered"]) == (0.0, 0.0, 1.0, 0.0)
    score = original("stmf_count")
    row = original_table("stmf_count", [(s, score(s, str(s.ground_truth.value))) for s in counts])
    assert (row["rmse"], row["r2"], row["crashed"], row["drawn at random"]) == (0, 1, 0, 0)
    assert (
        count_metrics(
            [(s, count_score(s, f"FINAL ANSWER: {s.ground_truth.value}")) for s in counts]
        )["rmse"]
        == 0.0
    )

    samples = [names(n, id_=f"n{i}") for i, n in enumerate(ORACLE_NAMES)]
    m = names_metrics([(s, names_score(s, _lines_answer(s.ground_truth.names))) for s in samples])
    assert (m["precision"], m["recall"], m["f1"], m["unanswered"]) == (1.0, 1.0, 1.0, 0.0)
    score = original("stmf_names")
    rows = [(s, score(s, _lines_answer(s.ground_truth.names))) for s in samples]
    row = original_table("stmf_names", rows)
    assert (row["precision"], row["recall"], row["f1"], row["crashed"]) == (1, 1, 1, 0)
    m = names_metrics([(s, names_score(s, s.ground_truth.answer_text())) for s in samples])
    assert m["f1"] == m["fuzzy_f1"] == 1.0

    named = {
        "bank": FeatureCount(count=2, names=["Nordea", "Danske Bank"]),
        "atm": FeatureCount(count=1, names=[]),
        "coffee_shop": FeatureCount(count=1, names=["Café Noir"]),
    }
    maps = [full(named, "m1"), full({}, "m2")]
    m = mtmf_metrics([(s, mtmf_score(s, s.ground_truth.answer_text())) for s in maps])
    assert (m["rmse"], m["r2"], m["precision"], m["recall"], m["f1"]) == (0, 1, 1, 1, 1)
    spec = get_task("mtmf")
    rows = [(s, original("mtmf")(s, spec.answer_format(s))) for s in maps]
    row = original_table("mtmf", rows)
    assert (row["rmse"], row["r2"], row["precision"], row["recall"], row["f1"]) == (0, 1, 1, 1, 1)
    assert all(sc.correct for _, sc in rows)
    assert mtmf_score(table(MTMF), table(MTMF).ground_truth.answer_text()).correct


def test_quirks_of_the_published_arithmetic_on_oracle_answers():
    # two features of one name: precision counts the repeat against the set
    s = names(["Starbucks", "Starbucks"])
    assert names_score(s, "Starbucks\nStarbucks").values["f1"] == 1.0
    assert original("stmf_names")(s, "Starbucks\nStarbucks").values["precision"] == 0.5
    # one unnamed feature: the answer's `""` is dropped by the published parser, and the
    # truth, as the release's lists hold it, is names only: nothing against nothing, 1
    v = original("stmf_names")(names([""]), '""').values
    assert (v["precision"], v["recall"], v["f1"]) == (1.0, 1.0, 1.0)
    v = original("stmf_names")(names(["", "A"]), '""\nA').values
    assert (v["precision"], v["recall"]) == (1.0, 1.0)
    # MTMF: the truth's empty names are not pooled either, so the oracle's recall is whole
    s = full(MTMF)
    v = original("mtmf")(s, get_task("mtmf").answer_format(s)).values
    assert v["recall"] == 1.0 and v["precision"] == 1.0


# ------------------------------------------------------------------ original mode by hand


def test_original_names_recall_is_a_substring_of_the_raw_response():
    score = original("stmf_names")
    v = score(names(["Café Noir"]), "I see Café Noir's terrace").values
    assert (v["precision"], v["recall"], v["f1"]) == (0.0, 1.0, 0.0)
    # exact and case-sensitive: the default mode reads the line as a name and finds none
    v = score(names(["Café Noir"]), "café noir").values
    assert (v["precision"], v["recall"]) == (0.0, 0.0)
    assert names_score(names(["Café Noir"]), "café noir").correct


def test_original_names_precision_with_duplicates_and_the_empty_rules():
    score = original("stmf_names")
    v = score(names(["A"]), "A\nA").values
    assert v["precision"] == 0.5 and v["recall"] == 1.0 and v["f1"] == pytest.approx(2 / 3)
    assert names_score(names(["A"]), "A\nA").values["precision"] == 0.5
    # numbering and * removed, the last item's "." dropped, `""` dropped
    v = score(names(["A", "B", ""]), '1. **A**\n""\n2. B.').values
    assert (v["precision"], v["recall"]) == (1.0, 1.0)
    # only the last item loses its ".": here that is `""`, so "B." stays wrong
    v = score(names(["A", "B", ""]), '1. **A**\n2. B.\n""').values
    assert (v["precision"], v["recall"]) == (0.5, 1.0)
    # a blank line between names is an item of its own, "" (the published parser keeps it)
    v = score(names(["A", "B"]), "A\n\nB").values
    assert (v["precision"], v["recall"]) == (pytest.approx(2 / 3), 1.0)
    for none in ("There are no coffee shops.", "None", "I am unable to read the labels"):
        assert score(names([]), none).values["f1"] == 1.0
        v = score(names(["A"]), none).values
        assert (v["precision"], v["f1"]) == (0.0, 0.0)
    # pred empty, truth empty: 1; true empty: recall 1 whatever is said
    v = score(names([]), "Starbucks").values
    assert (v["precision"], v["recall"], v["f1"]) == (0.0, 1.0, 0.0)
    # optional names do not exist in this mode
    v = score(names(["A"], optional=["B"]), "A\nB").values
    assert v["precision"] == 0.5


def test_original_presence_reads_the_first_line_only_else_draws():
    score = original("stmf_presence")
    s = presence(True, "p-seed")
    assert score(s, "**Yes.**\nbecause").values["drawn"] == 0.0
    assert score(s, "- yes").correct
    # "no" as a prefix: "Not sure" is read as no
    assert score(s, "Not sure").values["pred"] == 0.0
    # an answer on the second line is not read: a seeded draw, the same each time
    first = score(s, "Looking at the map...\nYes")
    again = score(s, "Looking at the map...\nYes")
    assert first.values["drawn"] == 1.0 and first == again
    assert first.parsed in ("yes", "no")
    assert score(s, None).values["drawn"] == 1.0
    rows = [(s, first), (presence(False, "q"), score(presence(False, "q"), "No"))]
    assert original_table("stmf_presence", rows)["drawn at random"] == 1


def test_original_count_reads_the_first_line_or_there_are_else_draws():
    score = original("stmf_count")
    s = count(3, optional=1, id_="c-seed")
    assert score(s, "3").values == {
        "true": 3.0,
        "pred": 3.0,
        "crashed": 0.0,
        "drawn": 0.0,
    }
    assert score(s, "4").correct is False  # no optional range here
    assert score(s, "3.5").values["pred"] == 35.0  # "." removed
    assert score(s, "1,234").values["pred"] == 1234.0
    assert score(s, "Looking.\nThere are five banks.").values["pred"] == 5.0
    assert score(s, "I see:\nThere is 1 bank").values["pred"] == 1.0
    drawn = score(s, "I see a few banks.")
    assert drawn.values["drawn"] == 1.0
    assert drawn == score(s, "I see a few banks.")
    draws = {score(count(3, id_=f"c{i}"), "?").values["pred"] for i in range(60)}
    assert draws <= set(map(float, range(17))) and len(draws) > 5


def test_original_count_pooled_metrics_are_sklearns():
    truths, answers = [1, 2, 3, 0], ["1", "2", "5", "There are 2 banks"]
    rows = [
        (count(t, id_=f"c{i}"), original("stmf_count")(count(t, id_=f"c{i}"), a))
        for i, (t, a) in enumerate(zip(truths, answers, strict=True))
    ]
    row = original_table("stmf_count", rows)
    pred = [r[1].values["pred"] for r in rows]
    assert pred == [1.0, 2.0, 5.0, 2.0] and row["drawn at random"] == 0
    assert row["rmse"] == pytest.approx(math.sqrt(8 / 4))
    assert row["r2"] == pytest.approx(1 - 8 / 5)
    metrics = pytest.importorskip("sklearn.metrics")
    assert row["r2"] == pytest.approx(metrics.r2_score(truths, pred))
    assert row["rmse"] == pytest.approx(math.sqrt(metrics.mean_squared_error(truths, pred)))


def _mtmf_reply(**given: tuple[int, list[str]]) -> str:
    """A reply the published parser reads: one JSON object naming all 22 types."""
    reply = {t: {"count": 0, "names": []} for t in FEATURE_TYPES}
    reply |= {t: {"count": c, "names": n} for t, (c, n) in given.items()}
    return json.dumps(reply)


def test_original_mtmf_against_a_hand_computation_and_crashes():
    s = full(MTMF)
    answer = _mtmf_reply(
        bank=(3, ["Nordea"]),
        coffee_shop=(2, ["Café Noir", "Espresso Bar"]),
        restaurant=(1, ["Pizza Hut"]),
    )
    v = original("mtmf")(s, answer).values
    # errors 1 (bank), 1 (coffee: no optional range), 1 (restaurant)
    sst = 5 - 22 * (3 / 22) ** 2
    assert v["rmse"] == pytest.approx(math.sqrt(3 / 22)) and v["r2"] == pytest.approx(1 - 3 / sst)
    # pooled: true [Nordea, Café Noir] (the truth's "" is no name), pred [Nordea, Café Noir,
    # Espresso Bar, Pizza Hut]: precision 2/4, recall 2/2
    assert v["precision"] == 0.5 and v["recall"] == 1.0
    assert v["f1"] == pytest.approx(2 * 0.5 * 1.0 / (0.5 + 1.0))
    metrics = pytest.importorskip("sklearn.metrics")
    y = [MTMF[t].count if t in MTMF else 0 for t in FEATURE_TYPES]
    p = [{"bank": 3, "coffee_shop": 2, "restaurant": 1}.get(t, 0) for t in FEATURE_TYPES]
    assert v["r2"] == pytest.approx(metrics.r2_score(y, p))
    # the published parser reads the whole reply as JSON: text around it, or a type left out,
    # makes the published evaluator crash; scored as the empty answer
    empty = original("mtmf")(s, _mtmf_reply()).values
    for reply in ("Sorry, no JSON.", MTMF_ANSWER, "{}"):
        crashed = original("mtmf")(s, reply)
        assert crashed.values["crashed"] == 1.0 and crashed.correct is False
        assert {k: crashed.values[k] for k in ("rmse", "r2")} == {
            k: empty[k] for k in ("rmse", "r2")
        }
        assert crashed.values["f1"] == 0.0
    row = original_table("mtmf", [(s, original("mtmf")(s, r)) for r in ("Sorry.", "{}")])
    assert row["crashed"] == 2


# ------------------------------------------------------------------ hostile answers


@pytest.mark.parametrize(
    "score",
    [
        (presence_score, presence(True)),
        (count_score, count(3)),
        (names_score, names(["A"])),
        (mtmf_score, table(MTMF)),
        (original("stmf_presence"), presence(True)),
        (original("stmf_count"), count(3)),
        (original("stmf_names"), names(["A"])),
        (original("mtmf"), table(MTMF)),
    ],
    ids=lambda x: x[0].__name__,
)
def test_hostile_answers_are_scored_quickly_and_never_raise(score):
    fn, s = score
    hostile = [
        "yes " * 500_000,  # 2 MB
        "9" * 2_000_000,
        "A\n" * 1_000_000,
        "[" * 100_000 + "]" * 100_000,
        '{"bank": ' * 10_000 + "1" + "}" * 10_000,
        '["' + "x" * 1000 + '"' + ', "y"' * 9_000 + "]",
        "\x00\ufeff\u202e",
    ]
    for answer in hostile:
        start = time.perf_counter()
        sc = fn(s, answer)
        assert time.perf_counter() - start < 5, answer[:20]
        assert sc.correct in (True, False)
        if fn in (presence_score, count_score, names_score, mtmf_score) and len(answer) > 10**6:
            assert sc.why.startswith("unreadable") and sc.values["predicted"] is None
