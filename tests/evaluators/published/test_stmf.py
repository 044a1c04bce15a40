"""evaluators.published.stmf: presence, counting and name listing, from the published rules."""

from __future__ import annotations

import math
import random

import pytest

from evaluators.published import rng_for, stmf


class _NoDraw(random.Random):
    def randint(self, a: int, b: int) -> int:  # a draw here means the rule was misread
        raise AssertionError("drew at random")


# ------------------------------------------------------------------ presence


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("Yes", "yes"),
        ("**Answer:** Yes", "yes"),
        ("*Yes*", "yes"),
        ("  No, there is none.", "no"),
        ("-No-", "no"),
        ("YES.\nThere is one.", "yes"),
        ("Nope", "no"),  # starts with "no"
        ("Notably, yes", "no"),  # starts with "no" too
    ],
)
def test_parse_presence(reply: str, label: str) -> None:
    assert stmf.parse_presence(reply, _NoDraw()) == (label, False)


@pytest.mark.parametrize("reply", ["There is one pharmacy.", "", "Answer: yes", "I think yes"])
def test_parse_presence_draws(reply: str) -> None:
    expect = "yes" if rng_for(3, "k").randint(0, 1) == 1 else "no"
    assert stmf.parse_presence(reply, rng_for(3, "k")) == (expect, True)


def test_presence_item_and_table() -> None:
    recs = [
        ("a", {"Correct answer": "Yes", "Answer": "yes", "Response": "Yes"}),
        ("b", {"Correct answer": "No", "Answer": "yes", "Response": "Maybe"}),
        ("c", {"Correct answer": "No", "Answer": "no", "Response": "No"}),
        ("d", {"Correct answer": "Yes", "Answer": "no", "Response": "no"}),
        ("e", {"Correct answer": "Yes", "Answer": "yes", "Response": "*Yes*"}),
    ]
    ev = stmf.evaluate_presence(recs)
    assert [i.values["correct"] for i in ev.items] == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert ev.items[1].drawn and not ev.items[4].drawn
    row = ev.table["all"]
    assert row["accuracy"] == pytest.approx(3 / 5)
    assert row["drawn at random"] == 1
    # macro averages by hand: true 1,0,0,1,1 pred 1,1,0,0,1
    p1, r1 = 2 / 3, 2 / 3  # class 1: tp 2, fp 1, fn 1
    p0, r0 = 1 / 2, 1 / 2  # class 0: tp 1, fp 1, fn 1
    f = lambda p, r: 2 * p * r / (p + r)  # noqa: E731
    assert row["precision"] == pytest.approx((p1 + p0) / 2)
    assert row["recall"] == pytest.approx((r1 + r0) / 2)
    assert row["f1"] == pytest.approx((f(p1, r1) + f(p0, r0)) / 2)


def test_presence_unmapped_label_makes_published_run_raise() -> None:
    recs = [
        ("a", {"Correct answer": "Yes", "Answer": "yes"}),
        ("b", {"Correct answer": "Maybe", "Answer": "no"}),
        ("c", {"Correct answer": "No", "Answer": "no"}),
    ]
    ev = stmf.evaluate_presence(recs)
    assert ev.items[1].values["true"] is None
    assert any("ValueError" in n for n in ev.notes)
    row = ev.table["all"]
    assert row["accuracy"] == pytest.approx(2 / 3)
    assert row["precision"] == 1.0  # over a and c, both right


# ------------------------------------------------------------------ counting


@pytest.mark.parametrize(
    ("reply", "count"),
    [
        ("3", 3),
        ("3.", 3),
        ("1,234", 1234),
        ("- 3", 0),  # " 3" is not numeric; its first word "" is 0 to the number-word reader
        ("There are 5 pharmacies.", 5),
        ("I see that there are 4 of them", 4),
        ("There is one pharmacy.", 1),
        ("there is one", 1),
        ("There are twenty one shops", 20),  # only the first word: "twenty"
        ("twenty", 20),  # no "There are": the first line's first word
        ("seven shops", 7),
        ("There are 2 here. There are 9 there.", 2),  # the first "There are"
        ("Counting:\nthere are 6 banks", 6),
    ],
)
def test_parse_count(reply: str, count: int) -> None:
    assert stmf.parse_count(reply, _NoDraw()) == (count, False)


@pytest.mark.parametrize(
    "reply",
    [
        "twenty-one",  # "-" removed: "twentyone"
        "Thirty",  # case-sensitive
        "There are Thirty shops",
        "There are twenty-one shops",
        "There are 3.",  # "3." is not numeric
        "There is one.",  # "one." is no number word
        "I count several",
    ],
)
def test_parse_count_draws_0_to_16(reply: str) -> None:
    expect = rng_for(1, reply).randint(0, 16)
    assert stmf.parse_count(reply, rng_for(1, reply)) == (expect, True)
    draws = {stmf.parse_count(reply, random.Random(s))[0] for s in range(400)}
    assert draws == set(range(17))


def test_parse_count_there_are_token_with_newline() -> None:
    # the word after "There are " runs to the next space, across the line break: "3\nshops"
    # is not numeric, and the number-word reader refuses "3": drawn
    for reply in ("There are 3\nshops here", "There are three\nshops here"):
        expect = rng_for(0, reply).randint(0, 16)
        assert stmf.parse_count(reply, rng_for(0, reply)) == (expect, True)
    # without "There are", the first word of the first line
    assert stmf.parse_count("three shops\nhere", _NoDraw()) == (3, False)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", 0),
        ("and", 0),
        ("one hundred and five", 105),
        ("two thousand three hundred", 2300),
        ("Thirty", -1),
        ("thirty", 30),
        ("twenty-one", -1),
        ("twenty one", 21),
    ],
)
def test_text2int(text: str, value: int) -> None:
    assert stmf.text2int(text) == value


def test_count_table_pools() -> None:
    recs = [
        ("a", {"Correct answer": 3, "Answer": 3, "Response": "3"}),
        ("b", {"Correct answer": 5, "Answer": 2, "Response": "Thirty"}),
        ("c", {"Correct answer": 0, "Answer": 1, "Response": "There is one"}),
    ]
    ev = stmf.evaluate_count(recs)
    row = ev.table["all"]
    true, pred = [3, 5, 0], [3, 2, 1]
    sse = sum((t - p) ** 2 for t, p in zip(true, pred, strict=True))
    mean = sum(true) / 3
    assert row["rmse"] == pytest.approx(math.sqrt(sse / 3))
    assert row["r2"] == pytest.approx(1 - sse / sum((t - mean) ** 2 for t in true))
    assert row["drawn at random"] == 1 and ev.items[1].drawn


# ------------------------------------------------------------------ names


def test_parse_names() -> None:
    reply = "\n1. **Cafe Uno**\n\n2. Bar Two\n* Three *\n"
    assert stmf.parse_names(reply) == ["Cafe Uno", "", "Bar Two", "Three"]


def _names(true: list[str], pred: list[str], response: str) -> dict[str, float | None]:
    rec = {"Correct answer": true, "Answer": pred, "Response": response}
    return stmf.names_item("k", rec).values


def test_names_blank_answer_with_no_true_names_scores_f1_zero() -> None:
    # a blank reply parses to [""]: one predicted name that is not true: precision 0
    v = _names([], stmf.parse_names(""), "")
    assert v == {"precision": 0.0, "recall": 1.0, "f1": 0.0}


@pytest.mark.parametrize(
    "said",
    ["There are no pharmacies.", "there is no such place", "None"],
)
def test_names_no_names_sayings(said: str) -> None:
    assert _names([], [said], said) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_names_case_sensitive_sayings() -> None:
    said = "I am unable to identify any names"
    assert _names([], [said], said)["f1"] == 1.0
    lower = "i am unable to identify any names"
    assert _names([], [lower], lower)["precision"] == 0.0
    assert _names([], ["none"], "none")["precision"] == 0.0


def test_names_cleaning_and_substring_recall() -> None:
    true = ["Cafe Uno", "Bar Two", "Kiosk"]
    pred = ["Cafe Uno", '""', "Bar Two<|eot|>."]  # "." removed first, then <|eot|>
    v = _names(true, pred, "Cafe Uno, Bar Two, and the Kiosks")
    assert v["precision"] == 1.0  # '""' dropped
    assert v["recall"] == 1.0  # "Kiosk" is a substring of the raw response
    v2 = _names(true, ["Cafe Uno", "Cafe Uno", "Bar"], "Cafe Uno Bar")
    assert v2["precision"] == pytest.approx(1 / 3)  # |{Cafe Uno}| / 3 predictions
    assert v2["recall"] == pytest.approx(1 / 3)
    assert v2["f1"] == pytest.approx(1 / 3)


def test_names_eot_then_dot_order() -> None:
    # the trailing "." is removed before "<|eot|>": "Kiosk.<|eot|>" keeps its "."
    v = _names(["Kiosk"], ["Kiosk.<|eot|>"], "Kiosk")
    assert v["precision"] == 0.0


def test_names_table_means() -> None:
    recs = [
        ("a", {"Correct answer": ["A"], "Answer": ["A"], "Response": "A"}),
        ("b", {"Correct answer": ["B"], "Answer": ["C"], "Response": "C"}),
    ]
    row = stmf.evaluate_names(recs).table["all"]
    assert row == {
        "n": 2,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "crashed": 0,
        "drawn at random": 0,
    }


def test_names_table_uses_numpy_mean() -> None:
    # ten items of precision 0.1: numpy's pairwise mean is 0.1, a plain sum / 10 is not
    names = [f"N{j}" for j in range(10)]
    recs = [
        (str(i), {"Correct answer": ["N0"], "Answer": names, "Response": "N0"}) for i in range(10)
    ]
    ev = stmf.evaluate_names(recs)
    assert [i.values["precision"] for i in ev.items] == [0.1] * 10
    assert sum([0.1] * 10) / 10 != 0.1
    assert ev.table["all"]["precision"] == 0.1
