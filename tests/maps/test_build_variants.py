"""``cartoqa build --variants``: the paired copies of every map-view question (issue 32).

One Monaco build of the seven view tasks with every variant but ``lang:XX`` (Monaco's names
are hardly translated: tests/maps/test_build_language.py builds one); its base samples
must be the reference build's bytes (tests/maps/golden), each copy must keep its base's truth
where the variant changes nothing the truth depends on, the oracle must score 1.0 on every
copy whose answer can be seen, and ``nolabels`` must flag the questions that need names.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cartoqa.errors import CartoqaError
from cartoqa.stores import load_dataset
from cartoqa.tasks.variants import base_id, is_unanswerable, parse_variants, variant_of

from .conftest import extract_path

GOLDEN = json.loads((Path(__file__).parent / "golden" / "golden.json").read_text())["builds"]
REF = GOLDEN["monaco-all"]
VARIANTS = ["text", "image+text", "coords", "greyscale", "nolabels", "zoom"]
#: tasks whose every question needs road or place names read
NEEDS_NAMES = {"srn", "mml", "stmf_names", "mtmf"}
#: types the map-feature tasks count one per written name (a line's stretches are one road
#: only by its name)
COUNTED_BY_NAME = {"stream", "river", "primary_road"}


def _needs_names(sample) -> bool:
    ftype = getattr(sample.ground_truth, "feature_type", None)
    return sample.task in NEEDS_NAMES or ftype in COUNTED_BY_NAME


@pytest.fixture(scope="module")
def built(tmp_path_factory, engine_for, cache, carto_files):
    from cartoqa.tasks import build_dataset

    out = tmp_path_factory.mktemp("variants") / "ds"
    report = build_dataset(
        out,
        engine=engine_for(REF["extract"]),
        cache=cache,
        carto_files=carto_files,
        tasks=REF["tasks"],
        per_task=REF["per_task"],
        seed=REF["seed"],
        variants=VARIANTS,
        progress=False,
    )
    return out, report, load_dataset(out)


def _lines(folder: Path) -> dict[str, bytes]:
    return {
        json.loads(line)["id"]: line
        for line in (folder / "samples.jsonl").read_bytes().splitlines()
    }


def test_base_samples_are_the_reference_builds_bytes(built):
    out, _, ds = built
    lines = _lines(out)
    base = {k: hashlib.sha256(v).hexdigest() for k, v in lines.items() if "@" not in k}
    assert base == REF["samples"]
    # every base sample has one copy under each variant, or is counted as left out
    variants = {variant_of(s) for s in ds.samples} - {None}
    assert variants == set(VARIANTS)


def test_each_copy_names_its_base_and_keeps_its_truth_where_the_variant_changes_none(built):
    _, _, ds = built
    by_id = {s.id: s for s in ds.samples}
    for s in ds.samples:
        variant = variant_of(s)
        if variant is None:
            continue
        base = by_id[base_id(s)]
        assert s.id == f"{base.id}@{variant.replace('+', '-')}"
        assert s.task == base.task
        if (
            variant in ("text", "image+text", "coords", "greyscale")
            or (
                variant == "nolabels"
                and (base.task not in ("stmf_presence", "stmf_count") or is_unanswerable(s))
            )
            or (variant == "zoom" and base.task == "rle")
        ):
            # the truth does not depend on what changed: the same bytes
            assert s.ground_truth.model_dump_json() == base.ground_truth.model_dump_json(), s.id
        if variant in ("text", "image+text"):
            assert base.prompt.text in s.prompt.text and len(s.prompt.text) > len(base.prompt.text)
        assert (s.prompt.images == []) == (variant == "text"), s.id
        if variant in ("image+text", "coords"):
            assert s.prompt.images == base.prompt.images


def test_coords_gives_the_markers_and_bounds(built):
    _, _, ds = built
    by_id = {s.id: s for s in ds.samples}
    for s in ds.samples:
        if variant_of(s) != "coords":
            continue
        md = by_id[base_id(s)].metadata.model_extra or {}
        for marker in filter(None, str(md.get("markers", "")).split(";")):
            colour, at = marker.split("@")
            lat, lon = (float(v) for v in at.split(","))
            assert f"{colour} marker: {lat:.6f}, {lon:.6f}" in s.prompt.text


def test_greyscale_is_the_base_image_in_luma(built):
    out, _, ds = built
    by_id = {s.id: s for s in ds.samples}
    seen = 0
    for s in ds.samples:
        if variant_of(s) != "greyscale":
            continue
        grey = np.asarray(Image.open(out / s.prompt.images[0]).convert("RGB")).astype(int)
        assert (grey[..., 0] == grey[..., 1]).all() and (grey[..., 1] == grey[..., 2]).all()
        colour = Image.open(out / by_id[base_id(s)].prompt.images[0]).convert("RGB")
        # ITU-R 601-2 luma, computed here without PIL's own conversion
        rgb = np.asarray(colour).astype(float)
        luma = rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114
        assert np.abs(grey[..., 0] - luma).max() <= 1.0
        # blue and red markers (an origin and a destination) cannot be told apart in grey
        colours = str((by_id[base_id(s)].metadata.model_extra or {}).get("markers", ""))
        two = {m.split("@")[0] for m in colours.split(";") if m} >= {"blue", "red"}
        assert is_unanswerable(s) == two, s.id
        seen += 1
    assert seen >= 7


def test_nolabels_flags_the_questions_that_need_names(built):
    out, report, ds = built
    by_id = {s.id: s for s in ds.samples}
    copies = [s for s in ds.samples if variant_of(s) == "nolabels"]
    assert {s.task for s in copies} >= {"srn", "rle", "mml", "stmf_names", "mtmf"}
    for s in copies:
        assert is_unanswerable(s) == _needs_names(by_id[base_id(s)]), s.id
        base_png = (out / by_id[base_id(s)].prompt.images[0]).read_bytes()
        assert (out / s.prompt.images[0]).read_bytes() != base_png
    made = report.variants["made"]["nolabels"]
    left = report.variants["left_out"].get("nolabels", {})
    for task in REF["tasks"]:
        n_base = sum(1 for s in ds.samples if s.task == task and variant_of(s) is None)
        assert made.get(task, 0) + sum(left.get(task, {}).values()) == n_base


def test_zoom_asks_the_same_place_at_a_second_zoom(built):
    """The same route, junction and path at zoom +- 1: SRN's steps and MML's roads stay, each
    leg is drawn 2^(change) as long, the image is another drawing of the same size; the feature
    truths are recomputed (the oracle test checks them) and every base question is either
    copied or counted as left out."""
    out, report, ds = built
    by_id = {s.id: s for s in ds.samples}
    copies = [s for s in ds.samples if variant_of(s) == "zoom"]
    # (Monaco's two MML junctions lose a name at the lower zoom: left out, counted below)
    assert {s.task for s in copies} >= {"srn", "rle"}
    for s in copies:
        base = by_id[base_id(s)]
        step = s.metadata.zoom - base.metadata.zoom
        assert step in (-1, 1) and 15 <= s.metadata.zoom <= 19, s.id
        image = Image.open(out / s.prompt.images[0])
        assert image.size == Image.open(out / base.prompt.images[0]).size
        assert (out / s.prompt.images[0]).read_bytes() != (out / base.prompt.images[0]).read_bytes()
        t, b = s.ground_truth, base.ground_truth
        if s.task == "srn":
            assert t.steps == b.steps and t.nodes == b.nodes, s.id
            for leg, old in zip(t.legs, b.legs, strict=True):
                assert leg.length_m == old.length_m
                assert leg.length_px == pytest.approx(old.length_px * 2.0**step, abs=0.2)
                assert leg.label is not None and leg.label.road == leg.road
        elif s.task == "mml":
            assert (t.road_1, t.road_2, t.junction) == (b.road_1, b.road_2, b.junction)
            assert {lb.road for lb in t.labels} == {t.road_1, t.road_2}
    made = report.variants["made"]["zoom"]
    left = report.variants["left_out"].get("zoom", {})
    for task in REF["tasks"]:
        n_base = sum(1 for s in ds.samples if s.task == task and variant_of(s) is None)
        assert made.get(task, 0) + sum(left.get(task, {}).values()) == n_base, task
    assert sum(made.values()) >= len(REF["tasks"])


def test_the_oracle_scores_one_on_every_copy_whose_answer_is_visible(built):
    from cartoqa.models.baselines import oracle_answer
    from cartoqa.scoring import by_variant, score_samples

    _, _, ds = built
    scored = by_variant(score_samples(ds.samples, {s.id: oracle_answer(s) for s in ds.samples}))
    keys = set(scored)
    assert {"srn@text", "rle@image+text", "mml@coords", "stmf_count@greyscale"} <= keys
    assert "srn@nolabels/unanswerable" in keys and "srn@nolabels" not in keys
    for key, rows in scored.items():
        if key.endswith("/unanswerable"):
            continue
        wrong = [s.id for s, sc in rows if not sc.correct]
        assert not wrong, f"{key}: the oracle is wrong on {wrong}"


def test_the_manifest_records_the_variants(built):
    _, report, ds = built
    m = ds.manifest.variants
    assert m["asked"] == VARIANTS
    assert m == report.variants
    for variant in ("nolabels", "greyscale"):
        assert sum(m["unanswerable"][variant].values()) == sum(
            1 for s in ds.samples if is_unanswerable(s) and variant_of(s) == variant
        )


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("textonly", "not a variant"),
        ("lang:", "a language is a code"),
        ("text,GREYSCALE,text", None),
    ],
)
def test_variants_asked_are_checked_before_any_work(tmp_path, asked, said):
    from cartoqa.tasks import build_dataset

    if said is None:
        assert parse_variants(asked) == ["text", "greyscale"]
        return
    out = tmp_path / "ds"
    with pytest.raises(CartoqaError, match=said):
        build_dataset(
            out, extract=extract_path("monaco.osm.pbf"), tasks=["rle"], per_task=2, variants=[asked]
        )
    assert not out.exists()


def test_a_dataset_without_variants_has_no_variants_in_its_manifest(tmp_path):
    from cartoqa.records import NumberTruth, Prompt, Provenance, Sample
    from cartoqa.stores import DatasetWriter

    w = DatasetWriter(tmp_path / "ds", name="plain")
    png = io.BytesIO()
    Image.new("RGB", (4, 4)).save(png, format="PNG")
    image = w.add_image("a.png", png.getvalue())
    w.add(
        Sample(
            id="rle-0001-m",
            task="rle",
            prompt=Prompt(text="How long?", images=[image]),
            ground_truth=NumberTruth(value=10.0, unit="m"),
            provenance=Provenance(generator="test"),
        )
    )
    w.finish()
    assert "variants" not in json.loads((tmp_path / "ds" / "manifest.json").read_text())


def test_second_zooms_keep_the_place_and_move_the_centre_only_as_much_as_the_markers_need(
    engine_for,
):
    from cartoqa.tasks.variants.apply import second_zooms
    from cartoqa.tasks.views import MARGIN_PX
    from maps import HEIGHT_PX, WIDTH_PX, Marker, View
    from maps.projection import pixel_to_lat_lon, world_pixel
    from maps.roads import load_road_graph

    engine = engine_for(REF["extract"])
    roads = load_road_graph(engine.extract)
    centre = (43.7384, 7.4246)  # Monte Carlo, well inside the extract
    cx, cy = world_pixel(*centre, 18)
    off = pixel_to_lat_lon(cx + 450, cy, 18)  # 450 px east of the centre at 18: 900 at 19
    view = View.make(centre, 18, markers=[Marker(*off, "blue")], id="v")
    got = {v.zoom: v for v in second_zooms(view, roads, engine.extract)}
    assert set(got) == {17, 19}
    assert got[17].center == centre  # the marker is 225 px off at 17: the centre stays
    moved = got[19]
    assert moved.center != centre and moved.id == "v@zoom" and moved.markers == view.markers
    # the marker is inside the margin, and the centre moved east only as far as it needed
    mx = world_pixel(*off, 19)[0] - world_pixel(*moved.center, 19)[0] + WIDTH_PX / 2
    my = world_pixel(*off, 19)[1] - world_pixel(*moved.center, 19)[1] + HEIGHT_PX / 2
    assert mx == pytest.approx(WIDTH_PX - MARGIN_PX, abs=0.01) and my == pytest.approx(
        HEIGHT_PX / 2, abs=0.01
    )
    # at the ends of the zoom range only one side is tried
    ends = second_zooms(View.make(centre, 19, id="a"), roads, engine.extract)
    assert [v.zoom for v in ends] == [18] and ends[0].center == centre
    # markers 1,000 px apart at 18 are 2,000 px apart at 19: no view holds them there
    far = [Marker(*pixel_to_lat_lon(cx + dx, cy, 18), "blue") for dx in (-500, 500)]
    wide = second_zooms(View.make(centre, 18, markers=far, id="c"), roads, engine.extract)
    assert [v.zoom for v in wide] == [17]
