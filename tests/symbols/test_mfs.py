"""MFS built end to end (``cartoqa.tasks.mfs``, ``symbols.questions``, ``symbols.store``) on a
part of the real catalogue, with random CLIP weights (no pretrained ones exist here; the
code path is the one real weights take).  The distractor rule, the look-alike rule and
the balance of the answer's letter are checked for every question by code of this file:
distances recomputed from the stored vectors, image distances from the PNGs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cartoqa.errors import CartoqaError, RenderStackError
from cartoqa.records import ChoiceTruth
from cartoqa.stores import load_dataset
from symbols.catalogue import build_catalogue

pytest.importorskip("open_clip", reason="open_clip is an extra: pip install -e '.[symbols]'")

#: entries per (category, key class) in the part of the catalogue these tests draw
TAKE = {
    ("symbol", "amenity"): 9,
    ("symbol", "shop"): 9,
    ("symbol", "tourism"): 4,
    ("symbol", "man_made"): 1,
    ("line", "highway"): 20,
    ("line", "railway"): 4,
    ("line", "waterway"): 5,
    ("area", "landuse"): 12,
    ("area", "natural"): 14,
    ("area", "leisure"): 3,
}
#: look-alike pairs the style draws alike (symbols.md), always in the part drawn
PAIRS = [
    ("line:highway=residential", "line:highway=unclassified"),
    ("line:highway=footway", "line:highway=path"),
    ("area:landuse=grass", "area:landuse=meadow"),
    ("area:landuse=forest", "area:natural=wood"),
    ("symbol:railway=crossing", "symbol:railway=level_crossing"),
]
#: near pairs (issue 26, finding 5): lines that differ only by width, fills of a near tint
NEAR = [
    ("line:waterway=stream", "line:waterway=drain"),
    ("line:waterway=stream", "line:waterway=ditch"),
    ("area:landuse=residential", "area:landuse=religious"),
    ("area:landuse=residential", "area:aeroway=apron"),
    ("area:aeroway=apron", "area:landuse=religious"),
    ("area:amenity=motorcycle_parking", "area:amenity=bicycle_parking"),
]
#: groups of identical renders and the member that names each (finding 5)
GROUPS = {
    "area:landuse=grass": ["area:golf=driving_range", "area:golf=fairway"],
    "area:leisure=pitch": ["area:golf=green"],
    "symbol:shop=confectionery": ["symbol:shop=chocolate", "symbol:shop=pastry"],
}
#: names that mean one thing (by the schema's aliases and terms), always in the part drawn
SYNONYMS = [
    ("symbol:shop=charity", "symbol:shop=second_hand"),
    ("symbol:amenity=bar", "symbol:amenity=pub"),
    ("line:waterway=river", "line:waterway=stream"),
]
BACKGROUND = np.array([0xF2, 0xEF, 0xE9], dtype=float)
THRESHOLDS = {"symbol": 2.0, "line": 8.0, "area": 5.0}


def _part() -> list[str]:
    entries, _ = build_catalogue()
    taken: Counter[tuple[str, str]] = Counter()
    out = {key for pair in [*PAIRS, *SYNONYMS, *NEAR] for key in pair}
    out |= {key for typical, others in GROUPS.items() for key in [typical, *others]}
    for e in entries:
        group = (e.category, e.key_class)
        if taken[group] < TAKE.get(group, 0):
            taken[group] += 1
            out.add(f"{e.category}:{e.key}")
    return sorted(out)


def _build(out: Path, cache: Path, carto_files: Path, dsn: str, seed: int, **extra):
    from cartoqa.tasks import build_dataset

    return build_dataset(
        out,
        tasks=["mfs"],
        per_task=500,
        seed=seed,
        cache=cache,
        carto_files=carto_files,
        dsn=dsn,
        progress=False,
        task_options={"clip_random_weights": True, "mfs_only": _part(), **extra},
    )


@pytest.fixture(scope="module")
def built(legend_dsn, cache, carto_files, tmp_path_factory):
    root = tmp_path_factory.mktemp("mfs")
    with pytest.warns(UserWarning, match="RANDOM WEIGHTS"):
        report = _build(root / "a", cache, carto_files, legend_dsn, seed=3)
    manifest = json.loads((root / "a" / "manifest.json").read_text())
    folder = cache / "symbols" / f"legend-{manifest['inputs']['mfs']['legend']['key']}"
    return report, load_dataset(root / "a"), folder, root


def _vectors(folder: Path) -> dict[str, np.ndarray]:
    (npz,) = folder.glob("clip-*.npz")
    with np.load(npz) as data:
        return dict(zip([str(k) for k in data["keys"]], np.asarray(data["vectors"]), strict=True))


def _pixels(folder: Path, key: str) -> np.ndarray:
    images = json.loads((folder / "legend.json").read_text())["images"]
    return np.asarray(Image.open(folder / images[key]).convert("RGB"), dtype=float)


def _seen(a: np.ndarray, category: str) -> np.ndarray:
    """A symbol as the map shows it, in this file's own words: moved so the box of its drawn
    pixels is centred (rounding down), then 3 x 3 pixels averaged into one."""
    if category != "symbol":
        return a
    ys, xs = np.nonzero((np.abs(a - BACKGROUND) > 8).any(axis=2))
    dy = int((a.shape[0] - ys.min() - ys.max() - 1) // 2)
    dx = int((a.shape[1] - xs.min() - xs.max() - 1) // 2)
    moved = np.full_like(a, 0) + BACKGROUND
    for y in range(a.shape[0]):
        if 0 <= y + dy < a.shape[0]:
            for x0, x1 in [(max(0, -dx), min(a.shape[1], a.shape[1] - dx))]:
                moved[y + dy, x0 + dx : x1 + dx] = a[y, x0:x1]
    return moved.reshape(a.shape[0] // 3, 3, a.shape[1] // 3, 3, 3).mean(axis=(1, 3))


def _look_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The look distance in this file's own words: where either image draws (a channel more
    than 8 from the background), the mean of the largest channel difference."""
    drawn = (np.abs(a - BACKGROUND) > 8).any(axis=2) | (np.abs(b - BACKGROUND) > 8).any(axis=2)
    return float(np.abs(a - b).max(axis=2)[drawn].mean()) if drawn.any() else 0.0


def _core(name: str) -> str:
    """A name's words, lower case, less a trailing "store", "shop", "area", ... (this file's
    own reading of the rule)."""
    words = name.lower().replace("/", " ").split()
    generic = {"store", "shop", "area", "grounds", "site", "lot", "place", "centre", "center"}
    while len(words) > 1 and (words[-1] in generic or words[-1] == "facility"):
        words = words[:-1]
    return " ".join(w.strip(".,()") for w in words)


def _synonyms(a: dict, b: dict) -> bool:
    """Two catalogue entries (as catalogue.json holds them) whose names may mean one thing."""
    ca, cb = _core(a["name"]), _core(b["name"])
    if set(ca.split()) <= set(cb.split()) or set(cb.split()) <= set(ca.split()):
        return True
    return ca in {_core(t) for t in b["terms"]} or cb in {_core(t) for t in a["terms"]}


def _options(sample) -> tuple[list[str], list[str]]:
    md = sample.metadata.model_extra
    return md["option_features"].split("|"), md["option_roles"].split("|")


def test_every_question_has_five_distinguishable_options_of_its_category(built):
    _, ds, folder, _ = built
    catalogue = json.loads((folder / "catalogue.json").read_text())["entries"]
    names = {f"{e['category']}:{next(iter(e['tags']))}={next(iter(e['tags'].values()))}": e
             for e in catalogue}  # fmt: skip
    pixels: dict[str, np.ndarray] = {}
    for s in ds.samples:
        features, roles = _options(s)
        truth = s.ground_truth
        assert isinstance(truth, ChoiceTruth)
        assert len(features) == len(set(features)) == 5 and sorted(truth.options) == list("ABCDE")
        subject = f"{s.metadata.model_extra['category']}:{s.metadata.model_extra['feature']}"
        assert roles.count("answer") == 1 and features[roles.index("answer")] == subject
        assert truth.answer == "ABCDE"[features.index(subject)]
        assert [truth.options[x] for x in "ABCDE"] == [names[f]["name"] for f in features]
        assert len({n.casefold() for n in truth.options.values()}) == 5
        for i, a in enumerate(features):
            assert not any(_synonyms(names[a], names[b]) for b in features[i + 1 :]), (s.id, a)
        assert all(f.split(":")[0] == subject.split(":")[0] for f in features)
        assert all(names[f]["name_source"] == "id-tagging-schema" for f in features)
        category = subject.split(":")[0]
        for i, a in enumerate(features):
            for b in features[i + 1 :]:
                pa = pixels.setdefault(a, _seen(_pixels(folder, a), category))
                pb = pixels.setdefault(b, _seen(_pixels(folder, b), category))
                assert _look_distance(pa, pb) >= THRESHOLDS[category], (s.id, a, b)


def test_look_alikes_never_share_a_question_and_are_asked_once(built):
    _, ds, _, _ = built
    subjects = set()
    for s in ds.samples:
        features, _ = _options(s)
        for a, b in [*PAIRS, *SYNONYMS]:
            assert not (a in features and b in features), (s.id, a, b)
        subjects.add(f"{s.metadata.model_extra['category']}:{s.metadata.model_extra['feature']}")
    for a, b in PAIRS:
        assert not (a in subjects and b in subjects), (a, b)


def test_width_only_and_near_tint_features_never_share_a_question(built):
    _, ds, _, _ = built
    for s in ds.samples:
        features, _ = _options(s)
        for a, b in NEAR:
            assert not (a in features and b in features), (s.id, a, b)


def test_groups_of_identical_renders_are_asked_and_offered_by_their_typical_member(built):
    _, ds, _, _ = built
    shown = set()
    for s in ds.samples:
        features, _ = _options(s)
        shown |= set(features)
        for others in GROUPS.values():
            assert not set(others) & set(features), (s.id, others)
    assert set(GROUPS) <= shown
    names = {
        f"{s.metadata.model_extra['category']}:{s.metadata.model_extra['feature']}": s
        for s in ds.samples
    }
    for typical, name in [
        ("area:landuse=grass", "Grass"),
        ("area:leisure=pitch", "Sport Pitch"),
        ("symbol:shop=confectionery", "Candy Store"),
    ]:
        truth = names[typical].ground_truth
        assert truth.options[truth.answer] == name


def test_the_distractors_follow_the_papers_rule_for_every_question(built):
    """Two nearest of the answer's key class, the nearest of another, one at random; nearest
    by Euclidean distance of the stored embeddings, among candidates that look different
    from the answer and from the options chosen before them."""
    _, ds, folder, _ = built
    vectors = _vectors(folder)
    meta = json.loads((folder / "legend.json").read_text())
    cat = json.loads((folder / "catalogue.json").read_text())["entries"]
    info = {}
    for e in cat:
        (k, v), *_ = e["tags"].items()
        info[f"{e['category']}:{k}={v}"] = e
    classes = [set(c) for c in meta["classes"]]
    near = [tuple(p) for p in meta["near"]]

    def group(k: str) -> set[str]:
        return next((c for c in classes if k in c), {k})

    def alike(a: str, b: str) -> bool:
        if a == b or _synonyms(info[a], info[b]) or b in group(a):
            return True
        # a near pair (width only, a near tint) keeps both their groups apart
        return any((x in group(a) and y in group(b)) or (y in group(a) and x in group(b))
                   for x, y in near)  # fmt: skip

    # one feature per group, the one that names it (legend.json's "typical")
    in_group = {k for c in classes for k in c}
    typical = set(meta["typical"])

    shorts = 0
    for s in ds.samples:
        features, roles = _options(s)
        subject = features[roles.index("answer")]
        same = [f for f, r in zip(features, roles, strict=True) if r == "same_class"]
        other = [f for f, r in zip(features, roles, strict=True) if r == "other_class"]
        rand = [f for f, r in zip(features, roles, strict=True) if r == "random"]
        short = int(s.metadata.model_extra["same_class_short"])
        shorts += short
        assert len(same) == 2 - short and len(other) == 1 + short and len(rand) == 1, s.id
        category = subject.split(":")[0]
        pool = [
            k
            for k in meta["images"]
            if k.startswith(category + ":") and k != subject
            and info[k]["name_source"] == "id-tagging-schema"
            and (k not in in_group or k in typical)
        ]  # fmt: skip
        dist = {k: float(np.sqrt(((vectors[k] - vectors[subject]) ** 2).sum())) for k in pool}
        ranked = sorted(pool, key=lambda k: (dist[k], k))
        klass = info[subject]["key_class"]
        chosen = [subject]
        # the same-class places, nearest first, then the other-class one(s)
        expect_same = []
        for k in ranked:
            if len(expect_same) == 2:
                break
            if info[k]["key_class"] == klass and not any(alike(k, c) for c in chosen):
                expect_same.append(k)
                chosen.append(k)
        assert sorted(same) == sorted(expect_same), (s.id, same, expect_same)
        assert len(expect_same) == 2 - short
        expect_other = []
        for k in ranked:
            if len(expect_other) == 1 + short:
                break
            if info[k]["key_class"] != klass and not any(alike(k, c) for c in chosen):
                expect_other.append(k)
                chosen.append(k)
        assert sorted(other) == sorted(expect_other), (s.id, other, expect_other)
        assert not any(alike(rand[0], c) for c in chosen), s.id
    assert shorts < len(ds.samples)  # most classes here have two others


def test_the_answers_letter_is_balanced_within_each_category(built):
    _, ds, _, _ = built
    by: dict[str, Counter[str]] = {}
    for s in ds.samples:
        by.setdefault(s.metadata.model_extra["category"], Counter())[s.ground_truth.answer] += 1
    assert set(by) == {"symbol", "line", "area"}
    for category, counts in by.items():
        full = Counter({x: counts.get(x, 0) for x in "ABCDE"})
        assert max(full.values()) - min(full.values()) <= 1, (category, full)


def test_random_weights_are_flagged_in_the_manifest_and_in_every_sample(built):
    _, ds, _, _ = built
    m = ds.manifest
    assert any("random CLIP weights" in w for w in m.warnings)
    assert m.inputs["mfs"]["clip"]["random_weights"] is True
    assert m.inputs["mfs"]["legend"]["schema"].startswith("@openstreetmap/id-tagging-schema")
    assert all(s.metadata.model_extra["random_weights"] is True for s in ds.samples)
    assert {s.prompt.images[0] for s in ds.samples} == {f"images/{s.id}.png" for s in ds.samples}


def test_the_same_seed_gives_the_same_questions_from_the_cache(
    built, legend_dsn, cache, carto_files
):
    _, ds, folder, root = built
    npz = next(folder.glob("clip-*.npz"))
    before = (folder.stat().st_ino, npz.stat().st_mtime_ns, (folder / "legend.json").stat())
    with pytest.warns(UserWarning, match="RANDOM WEIGHTS"):  # loud from the cache too
        _build(root / "b", cache, carto_files, legend_dsn, seed=3)
    again = load_dataset(root / "b")
    assert again.manifest.samples_sha256 == ds.manifest.samples_sha256
    after = (folder.stat().st_ino, npz.stat().st_mtime_ns, (folder / "legend.json").stat())
    assert after == before  # read back, not drawn or embedded again
    with pytest.warns(UserWarning):
        _build(root / "c", cache, carto_files, legend_dsn, seed=4)
    other = load_dataset(root / "c")
    assert [s.metadata.model_extra["feature"] for s in other.samples] != [
        s.metadata.model_extra["feature"] for s in ds.samples
    ]


def test_weights_are_refused_before_any_work_unless_given_exactly_once(tmp_path, monkeypatch):
    from cartoqa.tasks import build_dataset

    monkeypatch.delenv("CARTOQA_CLIP_CHECKPOINT", raising=False)
    cases = [
        ({}, "--clip-checkpoint FILE"),
        ({"clip_checkpoint": tmp_path / "nope.pt"}, "nope.pt does not exist"),
        ({"clip_hub": "laion2b", "clip_random_weights": True}, "not hub and random weights"),
    ]
    for options, message in cases:
        with pytest.raises(CartoqaError, match=message):
            build_dataset(
                tmp_path / "out", tasks=["mfs"], per_task=5, progress=False, task_options=options
            )
        assert not (tmp_path / "out" / "manifest.json").exists()
    monkeypatch.setenv("CARTOQA_CLIP_CHECKPOINT", str(tmp_path / "env.pt"))
    with pytest.raises(CartoqaError, match="env.pt does not exist"):
        build_dataset(tmp_path / "out", tasks=["mfs"], per_task=5, progress=False)


def test_the_oracle_scores_one_in_both_modes_and_random_answers_are_letters(built):
    from cartoqa.models.baselines import RandomModel, oracle_answer
    from cartoqa.tasks.spec import get_task

    _, ds, _, _ = built
    spec = get_task("mfs")
    for mode in ("cartoqa", "original"):
        score = spec.scorer(mode)
        assert all(score(s, oracle_answer(s)).correct for s in ds.samples), mode
    from cartoqa.models import Request

    rnd = RandomModel(5)
    answers = rnd.generate([Request(id=s.id, text=s.prompt.text, sample=s) for s in ds.samples])
    assert {a.text.split()[-1] for a in answers} <= set("ABCDE")


def test_nearest_clip_answers_a_letter_of_the_options_and_declines_other_questions(built):
    from cartoqa.errors import ModelError
    from cartoqa.models import Request, load_model
    from cartoqa.records import Metadata, NumberTruth, Prompt, Provenance, Sample

    _, ds, _, root = built
    model = load_model("nearest-clip:random:1")
    requests = [
        Request(id=s.id, text=s.prompt.text, images=(root / "a" / s.prompt.images[0],), sample=s)
        for s in ds.samples[:12]
    ]
    with pytest.warns(UserWarning, match="RANDOM WEIGHTS"):
        first = [r.text for r in model.generate(requests)]
    assert all(t in "ABCDE" and len(t) == 1 for t in first)
    assert [r.text for r in model.generate(requests)] == first  # deterministic
    other = Sample(
        id="x",
        task="rle",
        prompt=Prompt(text="How long?", images=["images/x.png"]),
        ground_truth=NumberTruth(value=3.0, unit="m"),
        metadata=Metadata(),
        provenance=Provenance(generator="test"),
    )
    (declined,) = model.generate([Request(id="x", text="How long?", sample=other)])
    assert "multiple-choice" in declined.text
    with pytest.raises(ModelError, match="nope.pt does not exist"):
        load_model(f"nearest-clip:{root / 'nope.pt'}")


def test_the_build_command_says_which_weights_to_give(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from cartoqa.cli import app

    monkeypatch.delenv("CARTOQA_CLIP_CHECKPOINT", raising=False)
    result = CliRunner().invoke(app, ["build", str(tmp_path / "out"), "--tasks", "mfs"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "--clip-checkpoint FILE" in text and "--clip-random-weights" in text
    result = CliRunner().invoke(
        app,
        ["build", str(tmp_path / "out"), "--tasks", "mfs", "--clip-checkpoint", "/nope/w.pt"],
    )
    assert result.exit_code == 2 and "/nope/w.pt does not exist" in " ".join(result.output.split())


def test_names_that_mean_one_thing_are_told_by_the_schemas_own_terms():
    from symbols.questions import confusable, name_core

    try:
        entries, _ = build_catalogue()
    except RenderStackError as exc:
        pytest.skip(str(exc))
    by = {f"{e.category}:{e.key}": e for e in entries}
    assert name_core("Thrift Store") == "thrift" and name_core("Shop") == "shop"
    for a, b in [
        *SYNONYMS,
        ("symbol:amenity=cafe", "symbol:shop=coffee"),
        ("symbol:tourism=picnic_site", "symbol:leisure=picnic_table"),
        ("symbol:barrier=gate", "symbol:barrier=kissing_gate"),
    ]:
        assert confusable(by[a], by[b]) and confusable(by[b], by[a]), (a, b)
    for a, b in [
        ("symbol:amenity=bank", "symbol:amenity=cafe"),
        ("symbol:shop=bakery", "symbol:shop=butcher"),
        ("line:highway=motorway", "line:highway=residential"),
    ]:
        assert not confusable(by[a], by[b]), (a, b)


def test_the_release_layout_round_trip_of_a_built_dataset(built, tmp_path):
    """export --to cartomapqa of MFS legend questions, then import-release: the same samples;
    the published arithmetic the same both ways, for the oracle and random runs."""
    from cartoqa.models import GenerationSettings, load_model
    from cartoqa.runner import open_run_store, run_model
    from tests.release.roundtrip import check_round_trip

    _, ds, _, _ = built
    for spec in ("oracle", "random"):
        with open_run_store(tmp_path / "runs", ds, spec, GenerationSettings()) as store:
            run_model(ds, load_model(spec), store)
    check_round_trip(ds, tmp_path / "runs", tmp_path)
