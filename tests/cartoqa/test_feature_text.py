"""The map-feature tasks' text twin and their truths under another style (issue 32).

- ``cartoqa.tasks.feature_text.describe`` writes a view's drawn features out; a parser of
  the documented format, written here on its own, derives every question's answer from the
  text alone (presence, the count range, the name lists, the MTMF table) for real views of
  Monaco, and they equal the truths;
- ``cartoqa.tasks.poi.view_truth`` recomputes the four tasks' truths from what an engine
  draws of a view: with the engine and view the question was planned on, byte for byte the
  truths; at zoom 18 those of the zoom-18 drawing (its symbols where the extract puts their
  nodes in that view; a hand count of one view); without labels, presence and count read
  from the no-label render.  The language case: ``tests/maps/test_feature_view_truth.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import pytest

from cartoqa.errors import CartoqaError
from cartoqa.records import BooleanTruth, CountTruth, FeatureTableTruth, NamesTruth
from cartoqa.tasks.feature_text import describe
from cartoqa.tasks.poi import attempt_map_features, view_truth
from cartoqa.tasks.spec import get_task
from cartoqa.tasks.views import Plan, Question, Reject, ViewSampler
from maps import View
from tests.maps.conftest import cache, carto_files, cluster, engine_for  # noqa: F401

FEATURE_TASKS = ("stmf_presence", "stmf_count", "stmf_names", "mtmf")
N_VIEWS = 5


# ------------------------------------------------------------------ an independent parser

_LINE = re.compile(
    r"^(?P<type>[^;]+); (?P<name>-|\"(?:[^\"\\]|\\.)*\"); (?P<x>-?\d+),(?P<y>-?\d+)"
    r"(?P<notes>(?:; [^;]+)*)$"
)


def parse(text: str) -> list[dict]:
    """The feature lines of a description: type (as written), name (None for "-"), x, y,
    partly (may be counted or not), name_optional."""
    lines = text.splitlines()
    assert lines[-1] == "Map data © OpenStreetMap contributors."
    body = [ln for ln in lines[2:-1]]
    if body == ["(none)"]:
        return []
    out = []
    for ln in body:
        m = _LINE.match(ln)
        assert m, f"not a feature line: {ln!r}"
        notes = [n.strip() for n in m["notes"].split(";") if n.strip()]
        partly = any(n.startswith("partly shown") for n in notes)
        name = None if m["name"] == "-" else json.loads(m["name"])
        out.append(
            {
                "type": m["type"],
                "name": name,
                "x": int(m["x"]),
                "y": int(m["y"]),
                "partly": partly,
                "name_optional": name is not None
                and (partly or any(n.startswith("name optional") for n in notes)),
            }
        )
    return out


def asked_types(mtmf_prompt: str) -> dict[str, str]:
    """What the MTMF prompt calls each type -> the type's key (its "key: what" lines)."""
    out = {}
    for ln in mtmf_prompt.splitlines():
        m = re.fullmatch(r"([a-z_]+): (.+)", ln)
        if m:
            out[m[2]] = m[1]
    assert len(out) == 22
    return out


def table(features: list[dict], keys: dict[str, str]) -> dict[str, dict]:
    """Type key -> count, optional count, names and optional names, as the text says."""
    out = {k: {"count": 0, "optional": 0, "names": [], "optional_names": []} for k in
           keys.values()}  # fmt: skip
    for f in features:
        t = out[keys[f["type"]]]
        if f["partly"]:
            t["optional"] += 1
            if f["name"] is not None:
                t["optional_names"].append(f["name"])
        elif f["name"] is None:
            t["count"] += 1
            t["names"].append("")
        else:
            t["count"] += 1
            (t["optional_names"] if f["name_optional"] else t["names"]).append(f["name"])
    for t in out.values():
        t["names"].sort()
        t["optional_names"].sort()
    return out


# ------------------------------------------------------------------ real views


@pytest.fixture(scope="module")
def monaco(engine_for, cache):  # noqa: F811
    """(engine, road graph, map-feature plans of Monaco)."""
    from maps.labels import RoadLabels
    from maps.roads import load_road_graph

    engine = engine_for("monaco.osm.pbf")
    roads = load_road_graph(engine.extract, cache=cache)
    sampler = ViewSampler(
        roads, RoadLabels(engine), engine.extract.bounds, 11,
        covered_share=engine.extract.covered_share,
    )  # fmt: skip
    plans: list[Plan] = []
    for _ in range(60):
        if len(plans) == N_VIEWS:
            break
        try:
            plans.append(attempt_map_features(sampler, len(plans)))
        except Reject:
            continue
    assert len(plans) == N_VIEWS
    return engine, roads, plans


def test_the_text_alone_gives_every_answer_of_real_views(monaco):
    _, roads, plans = monaco
    asked = Counter()
    for plan in plans:
        mtmf = next(q for q in plan.questions if q.task == "mtmf")
        keys = asked_types(mtmf.text)
        for q in plan.questions:
            assert q.task in FEATURE_TASKS
            text = describe(plan, q, roads)
            got = table(parse(text), keys)
            truth = q.truth
            asked[type(truth).__name__] += 1
            if isinstance(truth, BooleanTruth):
                assert (got[truth.feature_type]["count"] > 0) == truth.value, (plan.view.id, q)
            elif isinstance(truth, CountTruth):
                t = got[truth.feature_type]
                assert (t["count"], t["optional"]) == (truth.value, truth.optional)
            elif isinstance(truth, NamesTruth):
                t = got[truth.feature_type]
                assert t["names"] == sorted(truth.names), plan.view.id
                assert t["optional_names"] == sorted(truth.optional), plan.view.id
            else:
                assert isinstance(truth, FeatureTableTruth)
                for key, c in truth.features.items():
                    t = got[key]
                    assert t["count"] == c.count and t["optional"] == c.optional_count, key
                    assert t["names"] == sorted(c.names), key
                    assert t["optional_names"] == sorted(c.optional_names), key
    assert asked == {
        "BooleanTruth": 2 * N_VIEWS,
        "CountTruth": N_VIEWS,
        "NamesTruth": N_VIEWS,
        "FeatureTableTruth": N_VIEWS,
    }


def test_the_text_lists_every_type_of_the_view_whatever_is_asked(monaco):
    """One text per view, whichever question: it must not give away the asked type."""
    _, roads, plans = monaco
    for plan in plans:
        texts = {describe(plan, q, roads) for q in plan.questions}
        assert len(texts) == 1
        mtmf = next(q for q in plan.questions if q.task == "mtmf")
        keys = asked_types(mtmf.text)
        features = parse(texts.pop())
        evidence = mtmf.truth.evidence
        assert len(features) == len(evidence)
        assert Counter(keys[f["type"]] for f in features) == Counter(f.type for f in evidence)
        # each inside the map, an icon's at its centre
        assert all(0 <= f["x"] <= 1366 and 0 <= f["y"] <= 768 for f in features)
        for f in evidence:
            if f.icon is None:
                continue
            cx, cy = (f.icon[0] + f.icon[2]) / 2, (f.icon[1] + f.icon[3]) / 2
            if 0 <= cx <= 1366 and 0 <= cy <= 768:
                assert any(
                    keys[g["type"]] == f.type and abs(g["x"] - cx) <= 1 and abs(g["y"] - cy) <= 1
                    for g in features
                ), f


def test_the_scene_is_json_and_never_named_where_the_map_writes_no_name(monaco):
    _, _, plans = monaco
    for plan in plans:
        scene = json.loads(json.dumps(plan.scene))
        assert scene == plan.scene
        mtmf = next(q for q in plan.questions if q.task == "mtmf")
        by_osm = {f.osm: f for f in mtmf.truth.evidence}
        for f in scene["features"]:
            drawn = by_osm[f["osm"]]
            assert f["name"] == drawn.label  # the label, never the OSM name alone
            assert f["optional"] == (drawn.counted == "optional")
            assert f["flags"] == drawn.flags


def test_view_truth_on_the_planning_engine_is_the_truth_byte_for_byte(monaco):
    engine, _, plans = monaco
    n = Counter()
    for plan in plans:
        for q in plan.questions:
            again = get_task(q.task).view_truth(plan, q, engine, plan.view)
            assert not isinstance(again, str), (plan.view.id, q.suffix, again)
            assert again.model_dump_json() == q.truth.model_dump_json(), (plan.view.id, q)
            n[q.task] += 1
    assert n == {"stmf_presence": 2 * N_VIEWS, "stmf_count": N_VIEWS, "stmf_names": N_VIEWS,
                 "mtmf": N_VIEWS}  # fmt: skip


@pytest.fixture(scope="module")
def node_positions() -> dict[str, tuple[float, float]]:
    """ "node/ID" -> (lat, lon) of every tagged node of the Monaco file, read with pyosmium
    (not through the database the truths are read from)."""
    import osmium

    from tests.maps.conftest import extract_path

    out = {}
    for obj in osmium.FileProcessor(str(extract_path("monaco.osm.pbf"))).with_filter(
        osmium.filter.KeyFilter("amenity", "shop", "highway", "leisure", "tourism")
    ):
        if obj.is_node():
            out[f"node/{obj.id}"] = (obj.location.lat, obj.location.lon)
    return out


def test_view_truth_at_zoom_18_is_that_drawings(monaco, node_positions):
    """The same centre at zoom 18 (what the ``zoom`` variant asks): every question's truth
    comes back, of its own type, and is what the zoom-18 drawing shows: each symbol counted
    lies inside the image where the extract puts its node in the zoom-18 view (at zoom 19
    it would lie twice as far from the centre), the four tasks agree with one another, and
    the wider map shows symbols the zoom-19 one cannot."""
    engine, _, plans = monaco
    changed = beyond_19 = placed = 0
    for plan in plans:
        v18 = replace(plan.view, zoom=18, id=f"{plan.view.id}@zoom")
        got = {q.suffix: view_truth(plan, q, engine, v18) for q in plan.questions}
        table = got["-m"]
        assert isinstance(table, FeatureTableTruth)
        for q in plan.questions:
            t = got[q.suffix]
            if isinstance(t, str):
                assert q.task == "stmf_presence" and t == "type_only_in_part", (q, t)
                c = table.features[q.truth.feature_type]
                assert c.count == 0 and c.optional_count > 0
                continue
            assert type(t) is type(q.truth)
            changed += t.model_dump_json() != q.truth.model_dump_json()
            if isinstance(t, FeatureTableTruth):
                continue
            assert t.feature_type == q.truth.feature_type
            c = table.features[t.feature_type]
            if isinstance(t, BooleanTruth):
                assert t.value == (c.count > 0)
            elif isinstance(t, CountTruth):
                assert (t.value, t.optional) == (c.count, c.optional_count)
            else:
                assert (t.names, t.optional) == (c.names, c.optional_names)
        for f in table.evidence:
            if f.counted != "yes" or f.icon is None:
                continue
            cx, cy = (f.icon[0] + f.icon[2]) / 2, (f.icon[1] + f.icon[3]) / 2
            assert 0 <= cx <= 1366 and 0 <= cy <= 768, f
            if f.osm in node_positions:
                x, y = v18.pixel(*node_positions[f.osm])
                assert abs(x - cx) <= 2 and abs(y - cy) <= 2, (f, x, y)
                placed += 1
            # where the zoom-19 map of the same centre would put it
            x19, y19 = 683 + 2 * (cx - 683), 384 + 2 * (cy - 384)
            beyond_19 += not (0 <= x19 <= 1366 and 0 <= y19 <= 768)
    assert changed > 0 and beyond_19 > 0 and placed > 10


#: a view of Monaco (Larvotto) whose zoom-18 map was looked at and counted by hand: three
#: restaurant symbols (two named "Avenue 31" and "Maya Jah"; "Le Sans Souci" is cut at the
#: bottom edge), six bus stops (two of them "La Rousse", whose one label both share), three
#: toilets; at zoom 19 the same centre shows two restaurants and three bus stops
HAND_CENTRE = (43.74640802413821, 7.431210065194856)


@pytest.mark.parametrize(
    ("zoom", "ftype", "count", "optional"),
    [(18, "restaurant", 3, 1), (18, "bus_stop", 6, 0), (18, "public_toilet", 3, 0),
     (19, "restaurant", 2, 0), (19, "bus_stop", 3, 0)],
)  # fmt: skip
def test_counts_match_a_hand_count_of_one_view(engine_for, zoom, ftype, count, optional):  # noqa: F811
    engine = engine_for("monaco.osm.pbf")
    view = View.make(HAND_CENTRE, zoom, id=f"hand-{zoom}")
    q = Question("-c", "How many?", CountTruth(value=0, feature_type=ftype), {}, "stmf_count")
    t = view_truth(Plan("stmf_presence", view, [q]), q, engine, view)
    assert isinstance(t, CountTruth) and (t.value, t.optional) == (count, optional)
    if (zoom, ftype) == (18, "restaurant"):
        names = Question("-n", "?", NamesTruth(names=[], feature_type=ftype), {}, "stmf_names")
        n = view_truth(Plan("stmf_presence", view, [names]), names, engine, view)
        assert isinstance(n, NamesTruth)
        assert (n.names, n.optional) == (["", "Avenue 31", "Maya Jah"], ["Le Sans Souci"])


def test_view_truth_refuses_a_truth_it_does_not_own():
    from cartoqa.records import TextTruth

    view = View.make((43.73, 7.42), 19, id="mf-0009")
    for truth in (TextTruth(answer="Rue Grimaldi"), BooleanTruth(value=True)):
        q = Question("-x", "?", truth, {}, "stmf_count")
        with pytest.raises(CartoqaError, match=r"'-x' of view 'mf-0009'.*map-feature"):
            view_truth(Plan("stmf_presence", view, [q]), q, None, view)


def test_view_truth_without_labels_is_read_from_that_render(monaco):
    """With the labels taken out the truths are read from the no-label render: a presence or
    count truth of the same type comes back (or None: the type is then drawn only in part).
    Counts may change; primary roads count by the name written along them, so without
    labels every one is optional and a presence question of them cannot be kept."""
    from maps import without_labels

    engine, _, plans = monaco
    bare = engine.restyled(without_labels(engine.style))
    outcome = Counter()
    for plan in plans:
        for q in plan.questions:
            if q.task not in ("stmf_presence", "stmf_count"):
                continue
            again = view_truth(plan, q, bare, plan.view)
            ftype = q.truth.feature_type
            if isinstance(again, str):
                assert q.task == "stmf_presence" and again == "type_only_in_part"
                outcome["left out"] += 1
                continue
            assert type(again) is type(q.truth) and again.feature_type == ftype
            assert all(f.type == ftype for f in again.features)
            assert all(f.label_box is None for f in again.features)  # no label is drawn
            if ftype == "primary_road":
                assert not any(f.counted == "yes" for f in again.features)
            same = again.model_dump(exclude={"features"}) == q.truth.model_dump(
                exclude={"features"}
            )
            outcome["same" if same else "changed"] += 1
    assert sum(outcome.values()) == 3 * N_VIEWS
    assert outcome["same"] > 0


# ------------------------------------------------------------------ without a database


def _plan(features: list[dict]) -> tuple[Plan, Question]:
    view = View.make((43.73, 7.42), 19, id="mf-0001")
    q = Question("-c", "How many?", CountTruth(value=0, feature_type="bank"), {}, "stmf_count")
    scene = {"width": 1366, "height": 768, "zoom": 19, "features": features}
    return Plan("stmf_presence", view, [q], scene=scene), q


def _feature(**kw) -> dict:
    f = {
        "type": "restaurant",
        "name": None,
        "name_optional": False,
        "optional": False,
        "at": [10.0, 20.0],
        "icon": None,
        "label_box": None,
        "flags": [],
        "osm": "node/1",
    }
    return {**f, **kw}


def test_names_with_quotes_and_semicolons_are_written_as_json_strings():
    plan, q = _plan(
        [
            _feature(name='Freddy"s; Grill', at=[100.4, 50.6]),
            _feature(type="clinic", at=[5.0, 5.0], optional=True, flags=["icon_cut"]),
            _feature(
                type="atm",
                name="Kilo Bank",
                name_optional=True,
                flags=["label_cut"],
                at=[700.0, 767.9],
            ),
        ]
    )
    features = parse(describe(plan, q))
    assert features == [
        {"type": "general clinic or doctors' practice", "name": None, "x": 5, "y": 5,
         "partly": True, "name_optional": False},
        {"type": "restaurant", "name": 'Freddy"s; Grill', "x": 100, "y": 51, "partly": False,
         "name_optional": False},
        {"type": "ATM or cash point", "name": "Kilo Bank", "x": 700, "y": 768, "partly": False,
         "name_optional": True},
    ]  # fmt: skip
    assert "partly shown (symbol cut at the map's edge)" in describe(plan, q)


def test_a_view_without_features_says_none_and_a_plan_without_a_scene_is_refused():
    plan, q = _plan([])
    assert parse(describe(plan, q)) == []
    assert "(none)" in describe(plan, q)
    bare = Plan("stmf_presence", plan.view, plan.questions)
    with pytest.raises(CartoqaError, match="mf-0001.*no recorded scene"):
        describe(bare, q)


def test_the_four_tasks_have_a_text_twin_and_names_need_labels():
    q = SimpleNamespace(truth=None)
    for name in FEATURE_TASKS:
        spec = get_task(name)
        assert spec is not None and spec.describe is describe
    assert get_task("stmf_names").needs_labels(q) is True
    assert get_task("mtmf").needs_labels(q) is True
    # presence and count need labels for the types counted one per written name only
    for name in ("stmf_presence", "stmf_count"):
        needs = get_task(name).needs_labels
        for ftype, want in (("primary_road", True), ("river", True), ("restaurant", False)):
            assert needs(SimpleNamespace(truth=SimpleNamespace(feature_type=ftype))) is want
    for name in FEATURE_TASKS:
        assert get_task(name).view_truth is view_truth
