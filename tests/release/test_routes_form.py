"""The release's navigation folders (RLE, MML, SRN) read, scored and written
(``cartoqa.tasks.release.routes``; issue 30).

A small release is written by the tests in the published layout (tiny PNGs); its questions
become samples, a folder or file missing is named, an export reads back unchanged, SRN's road
network gives back the release's two road tables, and replies stored in the release's layout
score the same through the published evaluation (``score-release``'s path) as through
``score --mode original`` on the samples.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from cartoqa.cli import app
from cartoqa.errors import DatasetError
from cartoqa.records import NumberTruth, RoadPairTruth, RouteTruth, Sample
from cartoqa.tasks.release.road_tables import network_from_tables, release_tables_lost
from cartoqa.tasks.release.routes import MML_FORM, RLE_FORM, SRN_FORM
from cartoqa.tasks.spec import get_task
from cartoqa.tasks.templates import load_prompts
from evaluators.navigation import published_tables

S, L, R = "continue straight", "turn left", "turn right"
COMMA_ROAD = "Oak Road, East"


def _png(path: Path, shade: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (4, 3), (shade, 90, 200)).save(path)


def _json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _p(node: int, lat: float, lon: float) -> list:
    return [node, lat, lon]


# SRN route 1: North Street runs north 1 -> 2 -> 3, East Road east from 2 to 4; West Road
# meets North Street at 2 too.  Route 2: "Oak Road, East" north 11 -> 12, Main Street west
# 12 -> 13; Lonely Lane is a key of the junction table with no junction.
N = {
    1: (48.0, 2.0),
    2: (48.001, 2.0),
    3: (48.002, 2.0),
    4: (48.001, 2.0015),
    5: (48.001, 1.9985),
    11: (48.0, 2.01),
    12: (48.001, 2.01),
    13: (48.001, 2.0085),
    14: (48.0, 2.02),
    15: (48.001, 2.02),
}


def _pt(n: int) -> list:
    return _p(n, *N[n])


SRN_ROUTES = {
    "1": {
        "route_directions": f"[blue, {S}, North Street, {R}, East Road, red]",
        "origin": _pt(1),
        "destination": _pt(4),
        "zoom_level": 17,
        "road_dict": {
            "North Street": {"101": [_pt(1), _pt(2)], "102": [_pt(2), _pt(3)]},
            "East Road": {"103": [_pt(2), _pt(4)]},
            "West Road": {"104": [_pt(5), _pt(2)]},
        },
        "conj": {
            "North Street": {"East Road": [_pt(2)], "West Road": [_pt(2)]},
            "East Road": {"North Street": [_pt(2)]},
            "West Road": {"North Street": [_pt(2)]},
        },
    },
    "2": {
        "route_directions": f"[blue, {S}, {COMMA_ROAD}, {L}, Main Street, red]",
        "origin": _pt(11),
        "destination": _pt(13),
        "zoom_level": 18,
        "road_dict": {
            COMMA_ROAD: {"201": [_pt(11), _pt(12)]},
            "Main Street": {"202": [_pt(12), _pt(13)]},
            "Lonely Lane": {"203": [_pt(14), _pt(15)]},
        },
        "conj": {
            COMMA_ROAD: {"Main Street": [_pt(12)]},
            "Main Street": {COMMA_ROAD: [_pt(12)]},
            "Lonely Lane": {},
        },
    },
}

RLE_ROUTES = [
    {
        "route_ID": "1",
        "Ans_meters": 250.12345,
        "Ans_feet": 820.61496,
        "difficulty": "Simple",
        "city": "Paris",
        "zoom_scale": 17,
    },
    {
        "route_ID": "7",
        "Ans_meters": 612.5,
        "Ans_feet": 2009.5144,
        "difficulty": "Complex",
        "city": "Lyon",
        "zoom_scale": 18,
    },
]

MARKERS = {
    "1": {"road_1": "A Street", "road_2": "B Avenue", "zoom_level": 17},
    "2": {"road_1": "Rue Haute", "road_2": "Rue Basse", "zoom_level": 19},
}


def make_release(root: Path) -> Path:
    """The three navigation folders of a release, in the published layout."""
    _json(root / "MapScaleUnderstanding" / "Scale_understanding.json", RLE_ROUTES)
    for i, r in enumerate(RLE_ROUTES):
        _png(root / "MapScaleUnderstanding" / "_Route" / f"route_{r['route_ID']}.png", i)
    for n, info in MARKERS.items():
        _json(root / "MapMarkerLocalization" / "_marker_info" / f"{n}.json", info)
        for c in ("blue", "red"):
            _png(root / "MapMarkerLocalization" / c / f"{n}.png", int(n) * 10)
    nav = root / "MapNavigation"
    for n, r in SRN_ROUTES.items():
        route = {k: r[k] for k in ("route_directions", "origin", "destination", "zoom_level")}
        _json(nav / "_routes" / f"{n}.json", route)
        _json(nav / "road_dict" / f"{n}.json", r["road_dict"])
        _json(nav / "road_conjunction" / f"{n}.json", r["conj"])
        _png(nav / "_maps" / f"{n}.png", int(n))
    return root


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "Dataset" / "CartoMapQA")


FORMS = {"RLE": RLE_FORM, "MML": MML_FORM, "SRN": SRN_FORM}


def test_release_questions_become_samples(release: Path):
    prompts = load_prompts()
    rle = RLE_FORM.read_questions(release, prompts)
    assert [s.id for s in rle] == ["rle-1-m", "rle-1-ft", "rle-7-m", "rle-7-ft"]
    first, feet = rle[0], rle[1]
    assert first.ground_truth == NumberTruth(
        value=250.12345, unit="m", equivalents={"ft": 820.61496}
    )
    assert feet.ground_truth.value == 820.61496 and feet.ground_truth.unit == "ft"
    md = first.metadata
    assert (md.city, md.zoom, md.difficulty, md.unit) == ("Paris", 17, "simple", "m")
    assert rle[2].metadata.difficulty == "complex"
    assert first.prompt.images == ["release/MapScaleUnderstanding/_Route/route_1.png"]
    assert first.prompt.text == prompts.text("map.release.rle", unit="meters")
    assert feet.prompt.text == prompts.text("map.release.rle", unit="feet")
    assert first.prompt.system == prompts.text("map.release.system")
    assert "OpenStreetMap contributors" in (first.provenance.source or "")

    mml = MML_FORM.read_questions(release, prompts)
    assert [s.id for s in mml] == ["mml-1-blue", "mml-1-red", "mml-2-blue", "mml-2-red"]
    assert mml[1].ground_truth == RoadPairTruth(road_1="A Street", road_2="B Avenue")
    assert (mml[1].metadata.colour, mml[1].metadata.zoom) == ("red", 17)
    assert mml[1].prompt.images == ["release/MapMarkerLocalization/red/1.png"]
    assert mml[1].prompt.text == prompts.text("map.release.mml", colour="red")

    srn = SRN_FORM.read_questions(release, prompts)
    assert [s.id for s in srn] == ["srn-1", "srn-2"]
    assert srn[0].ground_truth.steps == ["blue", S, "North Street", R, "East Road", "red"]
    # the road name holding a comma stays one step (the published code splits it)
    assert srn[1].ground_truth.steps == ["blue", S, COMMA_ROAD, L, "Main Street", "red"]
    assert srn[1].metadata.zoom == 18
    assert srn[0].prompt.images == ["release/MapNavigation/_maps/1.png"]
    net = srn[0].ground_truth.network
    assert (net.origin, net.destination) == (1, 4)
    assert net.nodes["4"] == N[4]
    assert net.junctions["East Road|North Street"] == [2]
    # ids are stable: read twice, the same samples
    assert SRN_FORM.read_questions(release, prompts) == srn


@pytest.mark.parametrize(
    ("gone", "named"),
    [
        ("MapScaleUnderstanding/Scale_understanding.json", "Scale_understanding.json"),
        ("MapScaleUnderstanding/_Route/route_7.png", "route_7.png"),
        ("MapMarkerLocalization/red", "MapMarkerLocalization/red"),
        ("MapMarkerLocalization/_marker_info", "_marker_info"),
        ("MapMarkerLocalization/blue/2.png", "blue/2.png"),
        ("MapNavigation/road_dict", "MapNavigation/road_dict"),
        ("MapNavigation/road_conjunction/2.json", "road_conjunction/2.json"),
        ("MapNavigation/_maps/1.png", "_maps/1.png"),
        ("MapNavigation", "MapNavigation"),
    ],
)
def test_a_missing_or_renamed_folder_or_file_is_named(release: Path, gone: str, named: str):
    path = release / gone
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    form = FORMS[
        {"MapScaleUnderstanding": "RLE", "MapMarkerLocalization": "MML"}.get(
            gone.split("/")[0], "SRN"
        )
    ]
    with pytest.raises(DatasetError, match="missing") as err:
        form.read_questions(release, load_prompts())
    assert named in str(err.value)


def test_srn_network_gives_back_the_release_tables(release: Path):
    for r in SRN_ROUTES.values():
        net = network_from_tables(r["origin"], r["destination"], r["road_dict"], r["conj"], release)
        origin, destination, conj, road_dict = published_tables(net)
        assert (origin, destination) == (r["origin"], r["destination"])
        # the junction table comes back as it was, its coordinates included; a road that is a
        # key with no junction stays a key (as a junction with itself, which is never read)
        want = {b: dict(row) for b, row in r["conj"].items()}
        if "Lonely Lane" in want:
            want["Lonely Lane"] = {"Lonely Lane": []}
        assert conj == want
        # the road dictionary: each road's nodes (its links and coordinates are not kept)
        assert {k: sorted(p[0] for p in v["0"]) for k, v in road_dict.items()} == {
            k: sorted({p[0] for pts in links.values() for p in pts})
            for k, links in r["road_dict"].items()
        }
        assert release_tables_lost(r["road_dict"], r["conj"], net) == []


def test_what_the_srn_tables_lose_is_said(release: Path):
    r = SRN_ROUTES["1"]
    one_way = {"North Street": {"East Road": [_pt(2)]}}  # East Road is no key: a KeyError
    net = network_from_tables(r["origin"], r["destination"], r["road_dict"], one_way, release)
    lost = release_tables_lost(r["road_dict"], one_way, net)
    assert lost == [
        "junction 'North Street' -> 'East Road' is added (the release lists only "
        "'East Road' -> 'North Street')"
    ]


def _dataset(tmp_path: Path, release: Path) -> Path:
    """A dataset folder whose "release" names the release root (what import-release makes)."""
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "release").symlink_to(release, target_is_directory=True)
    return ds


@pytest.mark.parametrize("form", [RLE_FORM, MML_FORM, SRN_FORM], ids=lambda f: f.folder)
def test_export_of_imported_samples_reads_back_unchanged(release: Path, tmp_path: Path, form):
    prompts = load_prompts()
    samples = form.read_questions(release, prompts)
    out = tmp_path / "export"
    form.write_questions(samples, _dataset(tmp_path, release), out)
    assert form.read_questions(out, prompts) == samples
    # without the "cartoqa" key (the published scripts' view), the same questions still
    for f in out.rglob("*.json"):
        data = json.loads(f.read_text())
        if isinstance(data, dict):
            data.pop("cartoqa", None)
        else:
            for d in data:
                d.pop("cartoqa", None)
        f.write_text(json.dumps(data))
    again = form.read_questions(out, prompts)
    assert [s.id for s in again] == [s.id for s in samples]
    assert [s.ground_truth.model_dump() for s in again if s.task != "srn"] == [
        s.ground_truth.model_dump() for s in samples if s.task != "srn"
    ]
    if form is SRN_FORM:
        assert [s.ground_truth.steps for s in again] == [s.ground_truth.steps for s in samples]


def built_samples(tmp_path: Path) -> tuple[Path, list[Sample]]:
    """cartoqa-built samples of the three tasks (as a build writes them), images under
    images/, in a dataset folder."""
    ds = tmp_path / "built"
    prov = {"generator": "cartoqa test", "source": "© OpenStreetMap contributors"}
    srn_net = network_from_tables(
        _pt(1), _pt(4), SRN_ROUTES["1"]["road_dict"], SRN_ROUTES["1"]["conj"], ds
    )
    samples = []
    for unit, value, other in (("m", 80.5, 264.11), ("ft", 264.11, 80.5)):
        samples.append(
            Sample(
                id=f"rle-0003-{unit}",
                task="rle",
                prompt={"text": f"How long, in {unit}?", "images": ["images/rle-0003.png"]},
                ground_truth={
                    "kind": "number",
                    "value": value,
                    "unit": unit,
                    "equivalents": {"ft" if unit == "m" else "m": other},
                },
                metadata={"city": "monaco", "zoom": 19, "difficulty": "simple", "unit": unit},
                provenance=prov,
            )
        )
    samples.append(
        Sample(
            id="mml-0005",
            task="mml",
            prompt={"text": "Which roads?", "images": ["images/mml-0005.png"]},
            ground_truth={"kind": "road_pair", "road_1": "Impasse", "road_2": "Rue Grimaldi"},
            metadata={"city": "monaco", "zoom": 18, "colour": "blue"},
            provenance=prov,
        )
    )
    samples.append(
        Sample(
            id="srn-0002",
            task="srn",
            prompt={"text": "Which route?", "images": ["images/srn-0002.png"]},
            ground_truth=RouteTruth(
                steps=["blue", S, "North Street", R, "East Road", "red"], network=srn_net
            ),
            metadata={"city": "monaco", "zoom": 19, "steps": 2},
            provenance=prov,
        )
    )
    for name in ("rle-0003", "mml-0005", "srn-0002"):
        _png(ds / "images" / f"{name}.png")
    return ds, samples


def test_export_of_built_samples_reads_back_the_same_samples(tmp_path: Path):
    ds, samples = built_samples(tmp_path)
    out = tmp_path / "export"
    prompts = load_prompts()
    back = []
    for form in (RLE_FORM, MML_FORM, SRN_FORM):
        mine = [s for s in samples if s.task in form.tasks]
        form.write_questions(mine, ds, out)
        back += form.read_questions(out, prompts)
    assert (out / "MapScaleUnderstanding/_Route/route_0003.png").is_file()
    assert (out / "MapMarkerLocalization/blue/0005.png").is_file()
    assert (out / "MapNavigation/_maps/0002.png").is_file()
    routes = json.loads((out / "MapScaleUnderstanding/Scale_understanding.json").read_text())
    assert {k: routes[0][k] for k in ("route_ID", "Ans_meters", "Ans_feet", "difficulty")} == {
        "route_ID": "0003",
        "Ans_meters": 80.5,
        "Ans_feet": 264.11,
        "difficulty": "Simple",
    }
    # the same samples, their images re-pointed into the release
    expected = [
        s.model_copy(
            update={
                "prompt": s.prompt.model_copy(update={"images": [img]}),
            }
        )
        for s, img in zip(
            samples,
            [
                "release/MapScaleUnderstanding/_Route/route_0003.png",
                "release/MapScaleUnderstanding/_Route/route_0003.png",
                "release/MapMarkerLocalization/blue/0005.png",
                "release/MapNavigation/_maps/0002.png",
            ],
            strict=True,
        )
    ]
    assert back == expected


# replies: typical and hostile, as the published parsers read them
RLE_REPLIES = {
    "rle-1-m": "250 m\nMeasured on the scale bar.",
    "rle-1-ft": "The length is about 3,000 ft",
    "rle-7-m": "The path is 625m long",  # the token "625m": float() rejects it (a crash)
    "rle-7-ft": "-3000 ft",  # the "-" removed: 3000
}
MML_REPLIES = {
    "mml-1-blue": '```json\n{"road_1": "B Avenue", "road_2": "A Street"}\n```',
    "mml-1-red": "A Street and B Avenue",  # unparsed: the published evaluator crashes
    "mml-2-blue": '{"road_1": "rue haute", "road_2": "Rue Basse"}',
    "mml-2-red": "null",  # parses to None: the raw reply is stored, and crashes too
}
SRN_REPLIES = {
    "srn-1": f"blue, {S}, North Street, {R}, East Road, red",  # no brackets
    "srn-2": "[blue, red]",  # the published connectivity check raises
}


@pytest.mark.parametrize(
    ("form", "answers"),
    [(RLE_FORM, RLE_REPLIES), (MML_FORM, MML_REPLIES), (SRN_FORM, SRN_REPLIES)],
    ids=lambda x: getattr(x, "folder", ""),
)
def test_replies_score_the_same_stored_or_by_mode_original(
    release: Path, tmp_path: Path, form, answers
):
    samples = form.read_questions(release, load_prompts())
    folder = tmp_path / "Responses" / form.folder / "some-model"
    form.write_replies(samples, answers, folder)
    assert form.detect(folder)
    assert not [f for f in FORMS.values() if f is not form and f.detect(folder)]
    replies = form.read_replies(folder, release)
    assert sorted(r.sample.id for r in replies) == sorted(answers)
    by_id = {s.id: s for s in samples}
    assert all(r.sample == by_id[r.sample.id] for r in replies)
    (ev,) = form.evaluate(replies, 0)
    spec = get_task(form.tasks[0])
    rows = []
    for r in replies:
        score = spec.modes["original"](r.sample, answers[r.sample.id])
        item = next(i for i in ev.items if i.key == r.key)
        assert {
            k: v for k, v in score.values.items() if k not in ("crashed", "drawn")
        } == pytest.approx(item.values, nan_ok=True), r.key
        assert score.values["crashed"] == float(item.crashed is not None), r.key
        rows.append((r.sample, score))
    assert _same(spec.scores_table(rows, mode="original"), ev.table)
    assert ev.table["all"]["crashed"] == {"RLE": 1, "MML": 2, "SRN": 1}[form.folder]


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for g in a:
        if a[g].keys() != b[g].keys():
            return False
        for k, v in a[g].items():
            w = b[g][k]
            if not (v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w))):
                return False
    return True


def test_hostile_replies_as_the_published_code_reads_them(release: Path, tmp_path: Path):
    rle = {s.id: s for s in RLE_FORM.read_questions(release, load_prompts())}
    original = get_task("rle").modes["original"]
    assert original(rle["rle-7-ft"], "-3000 ft").values["pred"] == 3000.0
    got = original(rle["rle-7-m"], "It is 625m")
    assert got.values["pred"] is None and got.values["crashed"] == 1.0  # ValueError
    got = original(rle["rle-7-m"], "625m")  # no number token, no " is ": -1, dropped
    assert got.values["pred"] is None and got.values["crashed"] == 0.0
    assert original(rle["rle-1-m"], "Five hundred metres").values["pred"] is None  # dropped
    assert original(rle["rle-1-m"], "250 m").values["true"] == 250.123  # rounded to 3
    # a number float() makes infinite: scikit-learn raises on its group; dropped, crashed
    huge = original(rle["rle-1-m"], "133919.0e309 m")
    assert huge.values["pred"] is None and huge.values["crashed"] == 1.0
    table = get_task("rle").scores_table([(rle["rle-1-m"], huge)], mode="original")
    assert table["all"] == {"n": 1, "dropped": 1, "crashed": 1, "drawn at random": 0}
    mml = {s.id: s for s in MML_FORM.read_questions(release, load_prompts())}
    score = get_task("mml").modes["original"]
    assert score(mml["mml-1-blue"], '{"road_1": "B Avenue", "road_2": "A Street"}').correct
    assert not score(mml["mml-1-blue"], '{"road_1": "b avenue", "road_2": "A Street"}').correct
    bad = score(mml["mml-1-red"], "A Street and B Avenue")
    assert (bad.correct, bad.values["crashed"]) == (False, 1.0)
    srn = {s.id: s for s in SRN_FORM.read_questions(release, load_prompts())}
    route = get_task("srn").modes["original"]
    # the published truth of route 2 splits "Oak Road, East": even the right answer is no
    # exact match there (one more step than the answer's split)
    right = route(srn["srn-2"], f"[blue, {S}, {COMMA_ROAD}, {L}, Main Street, red]")
    assert right.values["exact"] == 1.0  # the answer splits the same way: items agree
    wright = route(srn["srn-1"], f"[blue, {S}, North Street, {R}, Wright Street, red]")
    assert wright.values["exact"] == 0.0 and wright.values["connected"] == 0.0


def test_srn_replies_need_the_release_root(release: Path, tmp_path: Path):
    samples = SRN_FORM.read_questions(release, load_prompts())
    folder = tmp_path / "other" / "Responses" / "SRN" / "m"
    SRN_FORM.write_replies(samples, SRN_REPLIES, folder)
    with pytest.raises(DatasetError, match="road_dict"):
        SRN_FORM.read_replies(folder, None)
    # the published scripts' layout: Responses/ beside Dataset/CartoMapQA is found
    beside = release.parent.parent / "Responses" / "SRN" / "m"
    SRN_FORM.write_replies(samples, SRN_REPLIES, beside)
    assert [r.key for r in SRN_FORM.read_replies(beside, None)] == ["1.json", "2.json"]


def test_replies_without_the_release_are_read_from_the_records(release: Path, tmp_path: Path):
    for form, answers in ((RLE_FORM, RLE_REPLIES), (MML_FORM, MML_REPLIES)):
        samples = form.read_questions(release, load_prompts())
        folder = tmp_path / form.folder / "m"
        form.write_replies(samples, answers, folder)
        replies = form.read_replies(folder, None)
        assert sorted(r.sample.id for r in replies) == sorted(answers)
        assert all(r.response == answers[r.sample.id] for r in replies)


def test_a_misnamed_response_file_is_named(tmp_path: Path):
    folder = tmp_path / "RLE" / "m"
    _json(folder / "route_1_metres_Simple.json", {"Result": 1})
    with pytest.raises(DatasetError, match="route_1_metres_Simple.json"):
        RLE_FORM.read_replies(folder, None)


def test_the_forms_are_registered_with_the_tasks():
    for task, form in (("rle", RLE_FORM), ("mml", MML_FORM), ("srn", SRN_FORM)):
        spec = get_task(task)
        assert spec.release is form
        assert "original" in spec.modes and "original" in spec.mode_tables


def test_score_release_and_score_mode_original_agree(release: Path, tmp_path: Path):
    """import-release, replies stored as a run, ``score --mode original``; ``export --to
    cartomapqa`` of the dataset and its run, ``score-release`` of the exported responses: the
    same original tables, task by task."""
    from cartoqa.tasks.release import import_release

    ds = tmp_path / "imported"
    import_release(release, ds, tasks=["RLE", "MML", "SRN"])
    answers = RLE_REPLIES | MML_REPLIES | SRN_REPLIES
    runs = tmp_path / "runs"
    _store_run(ds, runs, answers)
    cli = CliRunner()
    result = cli.invoke(
        app, ["score", str(ds), "--runs-dir", str(runs), "--mode", "original", "--json"]
    )
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.stdout).values()
    scored = run["scores"]
    out = tmp_path / "export"
    done = cli.invoke(
        app, ["export", str(ds), "--to", "cartomapqa", str(out), "--runs-dir", str(runs)]
    )
    assert done.exit_code == 0, done.output
    for form in (RLE_FORM, MML_FORM, SRN_FORM):
        (folder,) = (out / "Responses" / form.folder).iterdir()
        args = ["score-release", str(folder), "--release", str(out / "Dataset"), "--json"]
        got = cli.invoke(app, args)
        assert got.exit_code == 0, got.output
        original = json.loads(got.stdout)[form.folder]["original"]
        assert scored[form.tasks[0]] == original, form.folder
        assert original["all"]["crashed"] == {"RLE": 1, "MML": 2, "SRN": 1}[form.folder]


def _store_run(ds: Path, runs: Path, answers: dict[str, str]) -> None:
    """A run store holding each sample's reply as given (as ``cartoqa run`` would store it)."""
    from cartoqa.records import RunRecord
    from cartoqa.stores import RunStore, load_dataset

    data = load_dataset(ds)
    store = RunStore.open(
        runs,
        dataset_name=data.manifest.name,
        dataset_sha256=data.manifest.samples_sha256,
        model="replay",
    )
    with store:
        for sid, text in answers.items():
            store.append(RunRecord(sample_id=sid, model="replay", response=text, latency_s=0.0))


def test_import_run_oracle_score_is_perfect(release: Path, tmp_path: Path):
    """import-release, ``run --model oracle``, ``score``: every question right, SRN's road
    network (made from the release's tables) connecting the true route."""
    from cartoqa.tasks.release import import_release

    ds = tmp_path / "imported"
    import_release(release, ds, tasks=["RLE", "MML", "SRN"])
    runs = tmp_path / "runs"
    cli = CliRunner()
    ran = cli.invoke(
        app, ["run", str(ds), "-m", "oracle", "--runs-dir", str(runs), "--no-progress"]
    )
    assert ran.exit_code == 0, ran.output
    result = cli.invoke(app, ["score", str(ds), "--runs-dir", str(runs), "--json"])
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.stdout).values()
    scores = run["scores"]
    assert scores["mml"]["all"]["accuracy"] == 1.0
    assert scores["srn"]["all"]["SR2"] == 1.0 and scores["srn"]["all"]["connectivity"] == 1.0
    assert scores["rle"]["all m"]["mape"] == 0.0 and scores["rle"]["all ft"]["mape"] == 0.0


def test_broken_stored_records_are_read_and_their_crashes_counted(tmp_path: Path):
    """Records the published evaluator fails on (no Correct_answer, a Result float() rejects,
    a null road, an Answer that is text) are still read, scored and counted crashed."""
    rle = tmp_path / "RLE" / "m"
    _json(
        rle / "route_1_meters_Simple.json",
        {
            "Response": "?",
            "Result": "625m",
            "Correct_answer": 10.0,
            "Measure": "meters",
            "Difficulty": "Simple",
            "Zoom_level": 17,
        },
    )
    _json(
        rle / "route_2_feet_Complex.json",
        {"Response": "5 ft", "Result": "5", "Measure": "feet", "Difficulty": "Complex"},
    )
    replies = RLE_FORM.read_replies(rle, None)
    assert math.isnan(replies[1].sample.ground_truth.value)
    (ev,) = RLE_FORM.evaluate(replies, 0)
    assert ev.table["all"]["crashed"] == 2
    mml = tmp_path / "MML" / "m"
    _json(
        mml / "3-red.json",
        {
            "road_1": None,
            "road_2": "B",
            "zoom_level": "x",
            "Marker_color": "red",
            "Response": "B",
            "Answer": "B",
        },
    )
    (reply,) = MML_FORM.read_replies(mml, None)
    assert reply.sample.metadata.zoom is None and reply.sample.ground_truth.road_1 == ""
    (ev,) = MML_FORM.evaluate([reply], 0)
    assert ev.table["all"]["crashed"] == 1


def test_a_built_network_written_and_read_back_gives_the_same_published_tables():
    """A cartoqa road network (the route tests' cross-roads) as the release's two tables
    (``road_links``, and ``published_tables``' own road_dict of ids alone), read back: the
    published scorer's tables are the same, and every directed edge is kept."""
    from cartoqa.tasks.release.road_tables import road_links
    from maps.routes import road_network
    from tests.maps.road_fixtures import graph, road

    g = graph({1: (0, 0), 2: (0, 1), 3: (0, 2), 4: (1, 1), 5: (-1, 1), 6: (1, 0)})
    road(g, "North Street", [1, 2, 3])
    road(g, "East Road", [2, 4])
    road(g, "South Lane", [1, 6])
    road(g, "Side Street", [6, 4])
    net = road_network(g, 1, 4, (40.0, 0.0, 50.0, 10.0))
    tables = published_tables(net)
    origin, destination, conj, ids_only = tables
    for road_dict in (road_links(net), ids_only):
        back = network_from_tables(origin, destination, road_dict, conj, Path("x"))
        assert published_tables(back) == tables
        assert release_tables_lost(road_dict, conj, back) == []
    back = network_from_tables(origin, destination, road_links(net), conj, Path("x"))
    assert back.junctions == net.junctions
    edges = lambda n: {(r, e.u, e.v) for r, es in n.roads.items() for e in es}  # noqa: E731
    assert edges(net) <= edges(back)


def test_the_fixture_release_by_mode_original_item_for_item(tmp_path: Path):
    """The shared hostile fixture release (tests/release/fixture_release.py, 42-44 answers a
    task): its questions imported as samples and its raw replies scored by ``score --mode
    original``'s scorers give, item for item and in the table, what the independent
    re-implementation of the published arithmetic (published_reference.py) gives on the
    records the published scripts would have stored, with the release's own road tables."""
    from cartoqa.tasks.release.routes import mml_key, rle_key, srn_key
    from tests.release import fixture_release as fx
    from tests.release import published_reference as ref

    fx.make_release(tmp_path)
    root = fx.release_root(tmp_path)
    records = fx.stored_records()
    srn_truth = fx.TRUTH["SRN"]
    cases = {
        "RLE": (RLE_FORM, rle_key, ref.rle_item, ref.rle_table),
        "MML": (MML_FORM, mml_key, ref.mml_item, ref.mml_table),
        "SRN": (SRN_FORM, srn_key, None, ref.srn_table),
    }
    for label, (form, key_of, ref_item, ref_table) in cases.items():
        by_key = {key_of(s): s for s in form.read_questions(root, load_prompts())}
        answers = fx.ANSWERS[label]
        assert len(answers) >= 40, label
        spec = get_task(form.tasks[0])
        rows, refs = [], []
        for key, reply in answers.items():
            record = records[label][key]
            if label == "SRN":
                tables = srn_truth[key[:-5]]
                want = ref.srn_item(key, record, tables["road_dict"], tables["conjunction"])
            else:
                want = ref_item(key, record)
            got = spec.modes["original"](by_key[key], reply)
            values = {k: v for k, v in got.values.items() if k not in ("crashed", "drawn")}
            assert values == pytest.approx(want.values, nan_ok=True), (label, key, reply)
            assert bool(got.values["crashed"]) == (want.crashed is not None), (label, key, reply)
            rows.append((by_key[key], got))
            refs.append(want)
        table = spec.scores_table(rows, mode="original")
        want_table = ref_table(refs)
        assert table.keys() == want_table.keys(), label
        for group, row in want_table.items():
            assert table[group] == pytest.approx(row, nan_ok=True), (label, group)


def test_the_fixture_release_responses_read_and_evaluated_as_published(tmp_path: Path):
    """The fixture's stored responses (as the published scripts save them) read by the forms
    and evaluated: the independent re-implementation's items and tables."""
    from tests.release import fixture_release as fx
    from tests.release import published_reference as ref

    fx.make_release(tmp_path)
    fx.make_responses(tmp_path)
    root = fx.release_root(tmp_path)
    srn_truth = fx.TRUTH["SRN"]
    for label, form, table in (
        ("RLE", RLE_FORM, ref.rle_table),
        ("MML", MML_FORM, ref.mml_table),
        ("SRN", SRN_FORM, ref.srn_table),
    ):
        folder = fx.model_folder(tmp_path, label)
        assert form.detect(folder)
        replies = form.read_replies(folder, root)
        assert {r.key for r in replies} == set(fx.ANSWERS[label])
        assert all(r.response == fx.ANSWERS[label][r.key] for r in replies)
        (ev,) = form.evaluate(replies, 0)
        refs = []
        for item in ev.items:
            record = next(r.record for r in replies if r.key == item.key)
            if label == "SRN":
                tables = srn_truth[item.key[:-5]]
                want = ref.srn_item(item.key, record, tables["road_dict"], tables["conjunction"])
            else:
                want = (ref.rle_item if label == "RLE" else ref.mml_item)(item.key, record)
            assert item.values == pytest.approx(want.values, nan_ok=True), (label, item.key)
            assert (item.crashed is not None) == (want.crashed is not None), (label, item.key)
            refs.append(want)
        for group, row in table(refs).items():
            assert ev.table[group] == pytest.approx(row, nan_ok=True), (label, group)
