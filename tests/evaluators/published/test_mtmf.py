"""evaluators.published.mtmf: the published MTMF parser (json.loads, exact keys) and scorer."""

from __future__ import annotations

import json
import math

import pytest

from evaluators.published import mtmf

TRUTH = {t: {"count": 0, "names": []} for t in mtmf.TYPES}
TRUTH["bank"] = {"count": 2, "names": ["First Bank", "Second Bank"]}
TRUTH["coffee shop"] = {"count": 1, "names": ["Cafe Uno"]}
TRUTH["ATM or cash point"] = {"count": 3, "names": []}


def _full(overrides: dict[str, dict]) -> str:
    answer = {t.capitalize(): {"count": 0, "names": []} for t in mtmf.TYPES}
    answer.update(overrides)
    return json.dumps(answer)


PUBLISHED_SPELLINGS = [
    ["convenience store", "convenience_store"], ["supermarket"],
    ["drug store/pharmacy", "drug_store/pharmacy"], ["general clinic", "general_clinic"],
    ["hospital"], ["restaurant"], ["fast food store", "fast_food_store"],
    ["coffee shop", "coffee_shop"], ["atm or cash point", "atm_or_cash_point"], ["bank"],
    ["playground"], ["park area", "park_area"], ["fitness center", "fitness_center"],
    ["clothes shop", "clothes_shop"], ["beauty shop", "beauty_shop"],
    ["water stream", "water_stream"], ["river"], ["bus stop", "bus_stop"],
    ["gas station", "gas_station"], ["primary road", "primary_road"],
    ["car parking lot", "car_parking_lot"], ["public toilet", "public_toilet"],
]  # fmt: skip


def test_every_published_spelling() -> None:
    assert [list(mtmf.ALTERNATE_NAMES[t]) for t in mtmf.TYPES] == PUBLISHED_SPELLINGS
    for t, spellings in zip(mtmf.TYPES, PUBLISHED_SPELLINGS, strict=True):
        for key in (*spellings, spellings[-1].upper()):
            norm = mtmf.parse(json.dumps({key: {"count": 1, "names": []}}), TRUTH)[0]
            assert list(norm) == [t]


def test_types_and_spellings() -> None:
    assert len(mtmf.TYPES) == 22
    assert mtmf.TYPES[0] == "convenience store" and mtmf.TYPES[8] == "ATM or cash point"
    assert mtmf.ALTERNATE_NAMES["ATM or cash point"] == ("atm or cash point", "atm_or_cash_point")
    assert mtmf.ALTERNATE_NAMES["bank"] == ("bank",)


def test_parse_code_fences_keys_and_truth() -> None:
    reply = (
        '```json\n{"Bank": {"count": 2, "names": ["First Bank"]},'
        ' "ATM_or_cash_point": {"count": 1, "names": []}, "Cinema": {"count": 1}}\n```<|eot|>'
    )
    rec = mtmf.parse(reply, TRUTH)
    assert isinstance(rec, list) and len(rec) == 2
    norm, raw = rec
    assert set(norm) == {"bank", "ATM or cash point"}  # only the types present; "Cinema" none
    assert norm["bank"]["true_count"] == 2
    assert norm["bank"]["true_names"] == ["First Bank", "Second Bank"]
    assert "true_count" not in raw["Bank"]  # the raw copy is kept as it was
    assert "Cinema" in raw


def test_parse_a_type_under_two_keys_keeps_the_last() -> None:
    reply = '{"Bank": {"count": 1, "names": []}, "bank": {"count": 5, "names": []}}'
    norm = mtmf.parse(reply, TRUTH)[0]
    assert norm["bank"]["count"] == 5


@pytest.mark.parametrize(
    "reply",
    [
        'Here is the JSON: {"Bank": {"count": 1, "names": []}}',  # json.loads of the whole
        '{"Bank": 3}',  # a type's value that is no object
        '{"Bank": ["A"]}',
        "42",
        '[{"Bank": {"count": 1, "names": []}}]',
        "null",
    ],
)
def test_parse_failures_save_the_text(reply: str) -> None:
    assert mtmf.parse("```json" + reply + "```<|eot|>", TRUTH) == reply


def test_parse_a_string_value_passes_with_no_type() -> None:
    assert mtmf.parse('"just text"', TRUTH) == [{}, "just text"]


def test_parse_a_type_missing_from_truth_saves_the_text() -> None:
    truth = {k: v for k, v in TRUTH.items() if k != "bank"}
    reply = '{"Bank": {"count": 1, "names": []}}'
    assert mtmf.parse(reply, truth) == reply


def _by_hand(true_counts, counts, true_names, names):
    n = len(true_counts)
    sse = sum((t - p) ** 2 for t, p in zip(true_counts, counts, strict=True))
    mean = sum(true_counts) / n
    sst = sum((t - mean) ** 2 for t in true_counts)
    stripped = [x.strip() for x in names]
    prec = (
        len({x.strip() for x in true_names} & set(stripped)) / len(names)
        if names
        else (1 if not true_names else 0)
    )
    rec = sum(x in names for x in true_names) / len(true_names) if true_names else 1
    f1 = 0 if prec + rec == 0 else 2 * prec * rec / (prec + rec)
    return math.sqrt(sse / n), 1 - sse / sst, prec, rec, f1


def test_item_counts_as_given_and_unstripped_recall() -> None:
    reply = _full(
        {
            "Bank": {"count": 2.5, "names": ["First Bank ", ""]},
            "Coffee shop": {"count": -1, "names": ["Cafe Uno"]},
            "ATM or cash point": {"count": 3, "names": []},
        }
    )
    rec = mtmf.parse(reply, TRUTH)
    it = mtmf.item("m.json", rec)
    assert it.crashed is None
    counts = [0] * 22
    counts[mtmf.TYPES.index("bank")] = 2.5
    counts[mtmf.TYPES.index("coffee shop")] = -1
    counts[mtmf.TYPES.index("ATM or cash point")] = 3
    true_counts = [TRUTH[t]["count"] for t in mtmf.TYPES]
    names = ["First Bank ", "Cafe Uno"]  # the blank name dropped, nothing stripped
    true_names = ["First Bank", "Second Bank", "Cafe Uno"]
    rmse, r2, prec, recall, f1 = _by_hand(true_counts, counts, true_names, names)
    assert it.values["rmse"] == pytest.approx(rmse)
    assert it.values["r2"] == pytest.approx(r2)
    assert it.values["precision"] == pytest.approx(prec) == 1.0  # stripped for precision
    assert it.values["recall"] == pytest.approx(recall) == pytest.approx(1 / 3)  # not recall
    assert it.values["f1"] == pytest.approx(f1)


def test_item_names_as_a_string_iterated_by_character() -> None:
    truth = {t: {"count": 0, "names": []} for t in mtmf.TYPES}
    truth["bank"] = {"count": 1, "names": ["B"]}
    rec = mtmf.parse(_full({"Bank": {"count": 1, "names": "Bo B"}}), truth)
    it = mtmf.item("m.json", rec)
    # the names read: "B", "o", "B" (the blank " " dropped): precision |{B}| / 3, recall 1
    assert it.values["precision"] == pytest.approx(1 / 3)
    assert it.values["recall"] == 1.0
    assert it.values["rmse"] == 0.0 and it.values["r2"] == 1.0


def test_item_missing_type_crashes_and_scores_the_empty_answer() -> None:
    rec = mtmf.parse('{"Bank": {"count": 2, "names": ["First Bank"]}}', TRUTH)
    it = mtmf.item("m.json", rec, TRUTH)
    assert it.crashed == "KeyError: 'convenience store'"
    true_counts = [TRUTH[t]["count"] for t in mtmf.TYPES]
    rmse, r2, _, _, _ = _by_hand(
        true_counts, [0] * 22, ["First Bank", "Second Bank", "Cafe Uno"], []
    )
    assert it.values["rmse"] == pytest.approx(rmse)
    assert it.values["r2"] == pytest.approx(r2)
    assert (it.values["precision"], it.values["recall"], it.values["f1"]) == (0.0, 0.0, 0.0)
    # without a ground truth at hand: not scorable
    bare = mtmf.item("m.json", rec)
    assert bare.crashed and bare.values["rmse"] is None


def test_item_txt_record_crashes() -> None:
    text = mtmf.parse("I cannot read this map.", TRUTH)
    assert text == "I cannot read this map."
    it = mtmf.item("m.txt", text, TRUTH)
    assert it.crashed is not None and it.crashed.startswith("JSONDecodeError")
    assert it.values["f1"] == 0.0


def test_evaluate_means_over_maps() -> None:
    good = mtmf.parse(
        _full(
            {
                "Bank": {"count": 2, "names": ["First Bank", "Second Bank"]},
                "Coffee shop": {"count": 1, "names": ["Cafe Uno"]},
                "ATM or cash point": {"count": 3, "names": []},
            }
        ),
        TRUTH,
    )
    bad = mtmf.parse("no json", TRUTH)
    ev = mtmf.evaluate([("a.json", good), ("b.txt", bad)], truths={"b.txt": TRUTH})
    assert ev.items[0].values == {
        "rmse": 0.0,
        "r2": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    row = ev.table["all"]
    assert row["n"] == 2 and row["crashed"] == 1
    assert row["f1"] == pytest.approx(0.5)
    assert row["rmse"] == pytest.approx(ev.items[1].values["rmse"] / 2)
    assert ev.notes
