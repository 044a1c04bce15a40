"""The review tool's answer fields (``annotations.fields``): every kind round-trips through
its form unchanged, edits make the truth a reviewer means, bad entries are named."""

from __future__ import annotations

import json

import pytest

from annotations.fields import (
    JSON_FIELD,
    NO_NAME,
    edited_fields,
    form_fields,
    read_form,
    truth_from_form,
)
from cartoqa.errors import ReviewError
from cartoqa.records import (
    CountTruth,
    DrawnFeature,
    LabelBox,
    NamesTruth,
    NumberTruth,
    RoadEdge,
    RoadNetwork,
    RoadPairTruth,
    RouteLeg,
    RouteTruth,
)
from tests.cartoqa.model_data import CASES


def as_browser_sends(truth: dict) -> dict[str, str]:
    """The form as a browser posts it untouched: text areas with CRLF line ends."""
    return {f.name: f.value.replace("\n", "\r\n") for f in form_fields(truth)}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_an_untouched_form_gives_back_the_same_truth(case):
    truth = case[1].model_dump(mode="json")
    got, part = read_form(truth, as_browser_sends(truth))
    assert got == truth and part == ""


def route() -> dict:
    network = RoadNetwork(
        origin=1,
        destination=3,
        nodes={"1": (43.73, 7.42), "2": (43.731, 7.421), "3": (43.732, 7.422)},
        roads={"Rue A": [RoadEdge(u=1, v=2, length_m=90, heading_start=0, heading_end=0)]},
        junctions={"Rue A|Rue B": [2]},
    )
    leg = RouteLeg(action="turn left", road="Rue A", nodes=[1, 2], length_m=90, length_px=300)
    return RouteTruth(
        steps=["blue", "turn left", "Rue A", "turn right", "Rue B", "red"],
        network=network,
        nodes=[1, 2, 3],
        legs=[leg, leg.model_copy(update={"action": "turn right", "road": "Rue B"})],
    ).model_dump(mode="json")


def test_route_steps_are_lines_of_action_and_road():
    t = route()
    (steps, _json) = form_fields(t)
    assert steps.value == "turn left | Rue A\nturn right | Rue B"
    form = {**as_browser_sends(t), "steps": "turn right | Rue B\r\n\r\n continue straight | Rue C "}
    got, part = read_form(t, form)
    assert part == "fields"
    assert got["steps"] == ["blue", "turn right", "Rue B", "continue straight", "Rue C", "red"]
    # the map's roads stay for scoring connectivity; the old route's legs and nodes go
    assert got["network"] == t["network"]
    assert got.get("legs", []) == [] and got.get("nodes", []) == []
    RouteTruth.model_validate(got)


@pytest.mark.parametrize(
    "text, says",
    [
        ("turn left Rue A", "line 1"),
        ("turn left |", "line 1"),
        ("", "empty"),
        ("| Rue A", "line 1"),
        ("turn lft | Rue A", "'turn lft' is not an action the question allows"),
        ("blue | Rue A", "'blue' is not an action"),
    ],
)
def test_a_route_line_without_action_and_road_is_named(text, says):
    with pytest.raises(ReviewError, match=says):
        truth_from_form(route(), {**as_browser_sends(route()), "steps": text})


def test_road_pair_keeps_the_label_of_the_road_still_named():
    box = (1.0, 2.0, 3.0, 4.0)
    t = RoadPairTruth(
        road_1="Rue A",
        road_2="Rue B",
        junction=7,
        labels=[
            LabelBox(road="Rue A", osm_id=1, box=box),
            LabelBox(road="Rue B", osm_id=2, box=box),
        ],
    ).model_dump(mode="json")
    got = truth_from_form(t, {**as_browser_sends(t), "road_2": "  Avenue C "})
    assert (got["road_1"], got["road_2"], got["junction"]) == ("Rue A", "Avenue C", 7)
    assert [b["road"] for b in got["labels"]] == ["Rue A"]
    swapped = truth_from_form(t, {**as_browser_sends(t), "road_1": "Rue B", "road_2": "Rue A"})
    assert len(swapped["labels"]) == 2  # the same two roads
    with pytest.raises(ReviewError, match="Road 1 is empty"):
        truth_from_form(t, {**as_browser_sends(t), "road_1": " "})


def test_count_keeps_its_evidence_and_refuses_what_is_not_a_count():
    f = DrawnFeature(osm="node/1", type="bank", name="Nordea")
    t = CountTruth(value=2, optional=1, feature_type="bank", features=[f]).model_dump(mode="json")
    got = truth_from_form(t, {**as_browser_sends(t), "value": "3", "optional": "0"})
    assert (got["value"], got.get("optional", 0), got["features"]) == (3, 0, t["features"])
    for bad in ("-1", "2.5", "three", "", "nan"):
        with pytest.raises(ReviewError, match="Count"):
            truth_from_form(t, {**as_browser_sends(t), "value": bad})


def test_a_number_takes_thousands_separators_and_its_other_units_follow():
    t = NumberTruth(value=1000, unit="m", equivalents={"ft": 3280.84}).model_dump(mode="json")
    got = truth_from_form(t, {**as_browser_sends(t), "value": "1,250"})
    assert got["value"] == 1250 and got["equivalents"]["ft"] == pytest.approx(4101.05)
    assert truth_from_form(t, {**as_browser_sends(t), "value": "1 000"}) == t
    with pytest.raises(ReviewError, match="'1,25' is not a number"):
        truth_from_form(t, {**as_browser_sends(t), "value": "1,25"})  # a decimal comma
    with pytest.raises(ReviewError, match="finite"):
        truth_from_form(t, {**as_browser_sends(t), "value": "1e400"})
    for bad in ("inf", "nan", "1_000", "²", "１２", "0x10"):
        with pytest.raises(ReviewError, match="is not a number"):
            truth_from_form(t, {**as_browser_sends(t), "value": bad})
    with pytest.raises(ReviewError, match="negative length"):
        truth_from_form(t, {**as_browser_sends(t), "value": "-5"})
    assert truth_from_form(t, {**as_browser_sends(t), "value": "1.5e3"})["value"] == 1500


def test_names_write_an_unnamed_feature_so_that_it_is_kept():
    t = NamesTruth(names=["Café Noir", ""], optional=["Bar X"]).model_dump(mode="json")
    names, optional, _ = form_fields(t)
    assert names.value == f"Café Noir\n{NO_NAME}" and optional.value == "Bar X"
    got = truth_from_form(t, {**as_browser_sends(t), "names": f"Café Noir\n{NO_NAME}\nLe Zinc"})
    assert got["names"] == ["Café Noir", "", "Le Zinc"] and got["optional"] == ["Bar X"]


def test_feature_table_counts_and_names_per_type():
    t = next(c[1] for c in CASES if c[0] == "mtmf").model_dump(mode="json")
    form = {**as_browser_sends(t), "table.atm.count": "1", "table.atm.names": "Otto"}
    got = truth_from_form(t, form)
    assert got["features"]["atm"]["count"] == 1 and got["features"]["atm"]["names"] == ["Otto"]
    assert got["features"]["bank"] == t["features"]["bank"]
    with pytest.raises(ReviewError, match="atm: count"):
        truth_from_form(t, {**form, "table.atm.count": "x"})


def test_choice_boolean_coordinate_and_indices():
    cases = {c[0]: c[1].model_dump(mode="json") for c in CASES}
    mfs = cases["mfs"]
    assert truth_from_form(mfs, {**as_browser_sends(mfs), "answer": "A"})["answer"] == "A"
    with pytest.raises(ReviewError, match="'E' is not one of A, B, C, D"):
        truth_from_form(mfs, {**as_browser_sends(mfs), "answer": "E"})
    b = cases["stmf_presence"]
    assert truth_from_form(b, {**as_browser_sends(b), "value": "yes"})["value"] is True
    c = cases["interpolation"]
    with pytest.raises(ReviewError, match="off the globe"):
        truth_from_form(c, {**as_browser_sends(c), "lat": "95"})
    i = cases["route_geometry_indices"]
    assert truth_from_form(i, {**as_browser_sends(i), "indices": "5, 0 2,2"})["indices"] == [
        0,
        2,
        5,
    ]
    with pytest.raises(ReviewError, match="'-1'"):
        truth_from_form(i, {**as_browser_sends(i), "indices": "-1, 2"})


def test_the_json_edit_wins_and_editing_both_is_refused():
    t = next(c[1] for c in CASES if c[0] == "boundary_analysis").model_dump(mode="json")
    edited = {**t, "groups": {"Europe": ["Paris", "Oslo", "Tokyo"]}}
    got, part = read_form(t, {JSON_FIELD: json.dumps(edited)})
    assert (got, part) == (edited, "json")
    count = CountTruth(value=2, feature_type="bank").model_dump(mode="json")
    both = {**as_browser_sends(count), "value": "3", JSON_FIELD: json.dumps({**count, "value": 4})}
    with pytest.raises(ReviewError, match="both the fields and the JSON"):
        truth_from_form(count, both)
    for bad, says in (("{", "not valid JSON"), ("[1]", "must be an object")):
        with pytest.raises(ReviewError, match=says):
            truth_from_form(count, {**as_browser_sends(count), JSON_FIELD: bad})


def test_only_the_edited_part_is_read():
    # a truth the store holds with an empty name: accepting it unedited is no error
    t = RoadPairTruth(road_1="", road_2="Rue B").model_dump(mode="json")
    assert read_form(t, as_browser_sends(t)) == (t, "")
    fixed = {**t, "road_1": "Rue A"}
    assert read_form(t, {**as_browser_sends(t), JSON_FIELD: json.dumps(fixed)}) == (fixed, "json")
    # a route with a step that has no road is shown as it is, and stays as it is
    odd = RouteTruth(steps=["blue", "turn left", "Rue A", "turn right", "red"]).model_dump(
        mode="json"
    )
    (steps, _) = form_fields(odd)
    assert steps.value.endswith("turn right |")
    assert read_form(odd, as_browser_sends(odd)) == (odd, "")
    with pytest.raises(ReviewError, match="line 2"):
        truth_from_form(odd, {**as_browser_sends(odd), "steps": steps.value + " \nx"})


def test_edited_fields_are_the_ones_whose_text_changed():
    t = next(c[1] for c in CASES if c[0] == "mtmf").model_dump(mode="json")
    form = {**as_browser_sends(t), "table.bank.count": " 3 ", "table.atm.names": "\r\n"}
    assert edited_fields(t, form) == ["table.bank.count"]


def test_json_too_deep_or_not_json_is_refused_not_a_crash():
    t = CountTruth(value=2, feature_type="bank").model_dump(mode="json")
    for raw in ("[" * 50_000, '{"kind": "count", "value": NaN}', '{"kind": "count"}'):
        form = {**as_browser_sends(t), JSON_FIELD: raw}
        try:
            got, part = read_form(t, form)
        except ReviewError:
            continue
        assert part == "json" and got != t  # read, and left for the store to refuse
