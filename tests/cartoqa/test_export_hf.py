"""The Hugging Face export, read back with the real ``datasets`` library, offline."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

# datasets reads these when first imported; the fixture below covers an earlier import
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

datasets = pytest.importorskip("datasets", reason="the dev extra installs datasets")
pytest.importorskip("pyarrow", reason="the export extra installs pyarrow")
yaml = pytest.importorskip("yaml", reason="datasets installs PyYAML")

from PIL import Image  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from cartoqa.cli import app  # noqa: E402
from cartoqa.errors import CartoqaError, DatasetError, MissingDependencyError  # noqa: E402
from cartoqa.exports.hf import CARD_FILE, EXPORT_MARKER, RELOAD, export_hf  # noqa: E402
from cartoqa.models.baselines import oracle_answer  # noqa: E402
from cartoqa.records import (  # noqa: E402
    OSM_ATTRIBUTION,
    ChoiceTruth,
    CountTruth,
    GroundTruth,
    Metadata,
    NumberTruth,
    Prompt,
    Provenance,
    Sample,
    TextTruth,
)
from cartoqa.scoring import score_run  # noqa: E402
from cartoqa.stores import Dataset, DatasetWriter, load_dataset  # noqa: E402
from cartoqa.tasks.spec import get_task  # noqa: E402
from tests.cartoqa.export_data import GEO, GEONAMES, OSM, distance_sample, snapshot  # noqa: E402
from tests.cartoqa.model_data import kinds_dataset, png, text_dataset  # noqa: E402

TRUTH = TypeAdapter(GroundTruth)
runner = CliRunner()


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """No hub: datasets reads only the files given to it (even if imported earlier)."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    datasets.disable_progress_bars()


def split_dataset(folder: Path) -> Dataset:
    """Dev and test samples, interleaved: two GeoNames-sourced text tasks (place
    association's answer format is its own: city, province, country) and a map task whose
    last sample has no image."""
    with DatasetWriter(folder, name="two-splits") as w:
        for i in range(5):
            w.add(distance_sample(i))
            images = [] if i == 4 else [w.add_image(f"count-{i}.png", png(10 + i))]
            w.add(
                Sample(
                    id=f"count-{i}",
                    task="stmf_count",
                    split="test" if i < 3 else "dev",
                    prompt=Prompt(text=f"How many banks? ({i})", images=images),
                    ground_truth=CountTruth(value=i, optional=1, feature_type="bank"),
                    metadata=Metadata(city="Monaco", zoom=17),
                    provenance=OSM,
                )
            )
        for i, (city, province, country) in enumerate(
            [("Zürich", "Zurich", "Switzerland"), ("Lyon", "Auvergne-Rhône-Alpes", "France")]
        ):
            w.add(
                Sample(
                    id=f"place-{i}",
                    task="place_association",
                    split=("dev", "test")[i],
                    prompt=Prompt(text=f"Which city is this? ({i})", system="Be brief."),
                    ground_truth=TextTruth(answer=city),
                    metadata=Metadata(region="Europe", province=province, country=country),
                    provenance=GEO,
                )
            )
        w.finish(seeds=[7], attribution=[OSM_ATTRIBUTION, GEONAMES])
    return load_dataset(folder)


def parquet_files(out: Path, task: str, split: str) -> list[str]:
    return sorted(str(p) for p in (out / "data" / task).glob(f"{split}-*.parquet"))


def load_both(out: Path, task: str, splits, cache: Path):
    """The config read twice: parquet files named directly, and the folder through its
    card's configs."""
    direct = datasets.load_dataset(
        "parquet",
        data_files={split: parquet_files(out, task, split) for split in splits},
        cache_dir=str(cache),
    )
    by_card = datasets.load_dataset(str(out), name=task, cache_dir=str(cache))
    return direct, by_card


def by_task_split(ds: Dataset) -> dict[str, dict[str, list[Sample]]]:
    out: dict[str, dict[str, list[Sample]]] = {}
    for s in ds.samples:
        out.setdefault(s.task, {}).setdefault(s.split, []).append(s)
    return out


def check_rows(ds: Dataset, loaded, samples: list[Sample]) -> None:
    """Every exported row equals its sample: text, truth, metadata, provenance, image."""
    assert loaded.num_rows == len(samples)
    assert loaded["id"] == [s.id for s in samples]  # file order kept
    has_image = "image" in loaded.features
    assert has_image == any(s.prompt.images for s in samples)
    if has_image:
        assert isinstance(loaded.features["image"], datasets.Image)
        raw = loaded.cast_column("image", datasets.Image(decode=False))
    for i, s in enumerate(samples):
        row = loaded[i]
        assert (row["task"], row["split"]) == (s.task, s.split)
        assert row["question"] == s.prompt.text
        assert row["system"] == s.prompt.system
        assert row["answer"] == oracle_answer(s)
        spec = get_task(s.task)
        if spec is not None and spec.answer_format is None:
            assert row["answer"] == s.ground_truth.answer_text()
        truth = TRUTH.validate_json(row["ground_truth"])
        assert type(truth) is type(s.ground_truth)
        assert truth == s.ground_truth
        assert Metadata.model_validate_json(row["metadata"]) == s.metadata
        assert Provenance.model_validate_json(row["provenance"]) == s.provenance
        images: list[str] = []
        if has_image and s.prompt.images:
            rel = s.prompt.images[0]
            got = row["image"]
            assert isinstance(got, Image.Image)
            with Image.open(ds.image_path(rel)) as want:
                assert (got.mode, got.size) == (want.mode, want.size)
                assert got.tobytes() == want.tobytes()  # pixel-equal
            stored = raw[i]["image"]
            assert stored["path"] == rel
            assert stored["bytes"] == ds.image_path(rel).read_bytes()
            images = [stored["path"]]
        elif has_image:
            assert row["image"] is None
        rebuilt = Sample(
            id=row["id"],
            task=row["task"],
            split=row["split"],
            prompt=Prompt(text=row["question"], system=row["system"], images=images),
            ground_truth=truth,
            metadata=Metadata.model_validate_json(row["metadata"]),
            provenance=Provenance.model_validate_json(row["provenance"]),
        )
        assert rebuilt == s


def front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    head, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_every_config_of_every_kind_loads_with_datasets(tmp_path):
    ds = kinds_dataset(tmp_path / "kinds", copies=2)
    out = tmp_path / "hf"
    result = export_hf(ds, out)
    groups = by_task_split(ds)
    assert result.rows == {t: {s: len(v) for s, v in sp.items()} for t, sp in groups.items()}
    assert result.rows == ds.manifest.counts
    assert set(result.files) == {p for p in snapshot(out)}
    for task, splits in groups.items():
        direct, by_card = load_both(out, task, splits, tmp_path / "cache")
        for loaded in (direct, by_card):
            assert set(loaded) == set(splits)
            for split, samples in splits.items():
                check_rows(ds, loaded[split], samples)
    # map tasks carry their images, text tasks have no image column
    assert result.licenses["rle"] == ("odbl",)
    assert result.licenses["distance"] == ("unknown",)  # these samples name no source


@pytest.mark.parametrize("make", ["kinds", "splits"])
def test_exported_answers_score_exactly_as_the_oracle(tmp_path, make):
    if make == "kinds":
        ds = kinds_dataset(tmp_path / "kinds", copies=2)
    else:
        ds = split_dataset(tmp_path / "two")
    out = tmp_path / "hf"
    export_hf(ds, out)
    responses: dict[str, str | None] = {}
    for task, splits in by_task_split(ds).items():
        loaded = datasets.load_dataset(str(out), name=task, cache_dir=str(tmp_path / "cache"))
        for split in splits:
            responses.update(zip(loaded[split]["id"], loaded[split]["answer"], strict=True))
    assert set(responses) == {s.id for s in ds.samples}
    exported = score_run(ds.samples, responses)
    oracle = score_run(ds.samples, {s.id: oracle_answer(s) for s in ds.samples})
    # NaN (SRN connectivity without a network) compares equal only as text
    assert json.dumps(exported, sort_keys=True) == json.dumps(oracle, sort_keys=True)
    assert set(exported) == {s.task for s in ds.samples} | {"gps"}
    if make == "splits":  # the province and country count: answer_text() alone scores 0
        place = exported["place_association"]["all"]
        assert place["province accuracy"] == place["country accuracy"] == 1.0


def test_two_splits_shards_licences_and_card(tmp_path):
    ds = split_dataset(tmp_path / "two")
    out = tmp_path / "hf"
    result = export_hf(ds, out, max_shard_rows=2)
    assert result.rows == {
        "distance": {"dev": 2, "test": 3},
        "place_association": {"dev": 1, "test": 1},
        "stmf_count": {"dev": 2, "test": 3},
    }
    assert result.licenses == {
        "distance": ("cc-by-4.0",),
        "place_association": ("cc-by-4.0",),
        "stmf_count": ("odbl",),
    }
    names = sorted(p.name for p in (out / "data" / "distance").iterdir())
    assert names == [
        "dev-00000-of-00001.parquet",
        "test-00000-of-00002.parquet",
        "test-00001-of-00002.parquet",
    ]
    groups = by_task_split(ds)
    for task, splits in groups.items():
        direct, by_card = load_both(out, task, splits, tmp_path / "cache")
        for loaded in (direct, by_card):
            assert set(loaded) == {"dev", "test"}
            for split, samples in splits.items():
                check_rows(ds, loaded[split], samples)
    card = (out / CARD_FILE).read_text(encoding="utf-8")
    meta = front_matter(card)
    assert meta["license"] == ["odbl", "cc-by-4.0"]
    assert meta["task_categories"] == ["visual-question-answering", "question-answering"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["pretty_name"] == "cartoqa: two-splits"
    configs = {c["config_name"]: c["data_files"] for c in meta["configs"]}
    assert set(configs) == {"distance", "place_association", "stmf_count"}
    for task, files in configs.items():
        assert {f["split"] for f in files} == set(groups[task])
        for f in files:
            matched = sorted(str(p) for p in out.glob(f["path"]))
            assert matched == parquet_files(out, task, f["split"]) and matched
    assert OSM_ATTRIBUTION in card and GEONAMES in card
    credits = card.split("## Attribution")[1].split("## ")[0]
    bullets = [line for line in credits.splitlines() if line.startswith("- ")]
    assert bullets == [f"- {OSM_ATTRIBUTION}", f"- {GEONAMES}"]  # each credit once
    assert ds.manifest.samples_sha256 in card and "ab" * 32 not in card  # no extracts listed
    assert "| distance | test | 3 | 2 | no |" in card
    assert "| stmf_count | dev | 2 | 1 | yes |" in card
    marker = json.loads((out / EXPORT_MARKER).read_text(encoding="utf-8"))
    assert marker["format"] == "hf" and marker["samples_sha256"] == ds.manifest.samples_sha256
    # the same dataset exports to the same bytes
    again = tmp_path / "hf-again"
    export_hf(ds, again, max_shard_rows=2)
    assert snapshot(again) == snapshot(out)


def test_the_cards_reload_advice_gets_a_replaced_exports_rows(tmp_path):
    """datasets caches a folder's configs by file pattern: the card says how to reload."""
    small = text_dataset(tmp_path / "small", 3, name="small")
    big = text_dataset(tmp_path / "big", 5, name="big")  # the same config and split
    out, cache = tmp_path / "hf", str(tmp_path / "cache")
    export_hf(small, out)
    first = datasets.load_dataset(str(out), name="distance", cache_dir=cache)
    assert first["test"].num_rows == 3
    export_hf(big, out, overwrite=True)
    # (datasets 5.2 loads the 3 old rows here without the card's advice)
    card = (out / CARD_FILE).read_text(encoding="utf-8")
    assert RELOAD in card
    kwargs = dict(item.split("=") for item in RELOAD.replace('"', "").split(", "))
    again = datasets.load_dataset(str(out), name="distance", cache_dir=cache, **kwargs)
    check_rows(big, again["test"], big.samples)


def test_shards_split_by_size(tmp_path):
    ds = split_dataset(tmp_path / "two")
    out = tmp_path / "hf"
    result = export_hf(ds, out, max_shard_bytes=1)  # every row is over it: one per file
    assert sum(f.endswith(".parquet") for f in result.files) == len(ds.samples)
    loaded = datasets.load_dataset(str(out), name="stmf_count", cache_dir=str(tmp_path / "c"))
    check_rows(ds, loaded["dev"], by_task_split(ds)["stmf_count"]["dev"])


def test_card_of_the_kinds_dataset_names_every_config(tmp_path):
    ds = kinds_dataset(tmp_path / "kinds", copies=1)
    out = tmp_path / "hf"
    export_hf(ds, out)
    card = (out / CARD_FILE).read_text(encoding="utf-8")
    meta = front_matter(card)
    assert {c["config_name"] for c in meta["configs"]} == {s.task for s in ds.samples}
    assert all([f["split"] for f in c["data_files"]] == ["test"] for c in meta["configs"])
    assert meta["license"] == ["odbl", "unknown"]
    assert "© OpenStreetMap contributors" in card


def legend_and_map_dataset(folder: Path, legend_task: str) -> Dataset:
    """Legend images made as ``cartoqa.tasks.mfs`` makes them (provenance and manifest
    credit as it writes them: the openstreetmap-carto style, iD tagging schema names, no
    extract) under ``legend_task``, and a map rendered from an OSM extract."""
    from cartoqa.tasks.build import OSM_SOURCE
    from cartoqa.tasks.mfs import LEGEND_CREDIT, LEGEND_SOURCE

    legend = Provenance(generator="tests", seed=1, style_version="5.9.0", source=LEGEND_SOURCE)
    extract = Provenance(
        generator="tests", seed=1, extract_hash="cd" * 32, style_version="5.9.0", source=OSM_SOURCE
    )
    with DatasetWriter(folder, name="legend") as w:
        for i in range(2):
            w.add(
                Sample(
                    id=f"legend-{i}",
                    task=legend_task,
                    prompt=Prompt(text="Which feature?", images=[w.add_image(f"l{i}.png", png(i))]),
                    ground_truth=(
                        ChoiceTruth(answer="A", options={"A": "Bank", "B": "Cafe"})
                        if legend_task == "mfs"
                        else CountTruth(value=1, feature_type="bank")
                    ),
                    provenance=legend,
                )
            )
            w.add(
                Sample(
                    id=f"route-{i}",
                    task="rle",
                    prompt=Prompt(text="How long?", images=[w.add_image(f"r{i}.png", png(9 + i))]),
                    ground_truth=NumberTruth(value=400.0 + i, unit="m"),
                    metadata=Metadata(unit="m", difficulty="simple"),
                    provenance=extract,
                )
            )
        w.finish(seeds=[1], attribution=[OSM_ATTRIBUTION, LEGEND_CREDIT])
    return load_dataset(folder)


@pytest.mark.parametrize("legend_task", ["mfs", "stmf_count"])
def test_each_config_is_labelled_by_what_its_samples_are_made_of(tmp_path, legend_task):
    """Legend images drawn in the openstreetmap-carto style (CC0) on a synthetic grid, named
    from the iD tagging schema (ISC), are not ODbL nor rendered from OSM data; a map from an
    extract is.  The labels come from the samples' provenance, whatever the task (issue 26,
    finding 5)."""
    ds = legend_and_map_dataset(tmp_path / "ds", legend_task)
    result = export_hf(ds, tmp_path / "hf")
    assert result.licenses == {legend_task: ("cc0-1.0", "isc"), "rle": ("odbl",)}
    card = (tmp_path / "hf" / CARD_FILE).read_text(encoding="utf-8")
    assert front_matter(card)["license"] == ["odbl", "cc0-1.0", "isc"]
    assert "every map image here is rendered" not in card
    assert "the map images of `rle` are rendered from it" in card
    legend_row = next(x for x in card.splitlines() if x.startswith(f"| {legend_task} | "))
    assert "odbl" not in legend_row and "openstreetmap-carto legend" in legend_row
    assert "- `cc0-1.0`: CC0 1.0" in card and "- `isc`: ISC" in card
    credits = card.split("## Attribution")[1].split("## ")[0]
    assert "- Legend drawn with the openstreetmap-carto style (CC0)" in credits
    assert "- feature names from the iD tagging schema (ISC)" in credits
    assert f"- {OSM_ATTRIBUTION}" in credits
    marker = json.loads((tmp_path / "hf" / EXPORT_MARKER).read_text(encoding="utf-8"))
    assert marker["licenses"][legend_task] == ["cc0-1.0", "isc"]


def test_existing_export_kept_without_overwrite(tmp_path):
    first = split_dataset(tmp_path / "two")
    out = tmp_path / "hf"
    export_hf(first, out)
    before = snapshot(out)
    beside = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(CartoqaError, match="--overwrite"):
        export_hf(first, out)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == beside
    # with overwrite, the new export replaces the old one whole
    other = kinds_dataset(tmp_path / "kinds", copies=1)
    result = export_hf(other, out, overwrite=True)
    assert result.replaced
    marker = json.loads((out / EXPORT_MARKER).read_text(encoding="utf-8"))
    assert marker["dataset"] == "kinds"
    assert not (out / "data" / "distance" / "dev-00000-of-00001.parquet").exists()
    assert set(snapshot(out)) == set(result.files)
    assert not list(tmp_path.glob(".hf.staging-*")) and not list(tmp_path.glob(".hf.old-*"))


def test_other_folders_are_never_replaced(tmp_path):
    ds = split_dataset(tmp_path / "two")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    (notes / CARD_FILE).write_text("a card, but no export marker")
    for overwrite in (False, True):
        with pytest.raises(CartoqaError, match="not a cartoqa Hugging Face export"):
            export_hf(ds, notes, overwrite=overwrite)
    assert (notes / "todo.txt").read_text() == "mine"
    with pytest.raises(CartoqaError, match="overlap"):
        export_hf(ds, ds.path, overwrite=True)
    with pytest.raises(CartoqaError, match="overlap"):
        export_hf(ds, ds.path / "hf")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(CartoqaError, match="is a file"):
        export_hf(ds, a_file, overwrite=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert export_hf(ds, empty).total == len(ds.samples)  # an empty folder holds nothing to lose


def test_missing_image_writes_nothing(tmp_path):
    ds = kinds_dataset(tmp_path / "kinds", copies=1)
    (ds.path / "images" / "srn-000.png").unlink()
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(DatasetError, match=r"'srn-000'.*images/srn-000\.png.*missing"):
        export_hf(ds, work / "hf")
    assert list(work.iterdir()) == []  # no export, no staging, no lock file


def test_failure_while_writing_leaves_the_old_export_and_no_staging(tmp_path):
    ds = kinds_dataset(tmp_path / "kinds", copies=1)
    out = tmp_path / "hf"
    export_hf(ds, out)
    before = snapshot(out)
    # an image changed after the dataset was made: found while its shard is written
    (ds.path / "images" / "srn-000.png").write_bytes(png(999))
    for target, overwrite in ((out, True), (tmp_path / "new", False)):
        with pytest.raises(DatasetError, match="changed after"):
            export_hf(ds, target, overwrite=overwrite)
        assert not list(tmp_path.glob(f".{target.name}.staging-*"))
    assert snapshot(out) == before
    assert not (tmp_path / "new").exists()


def test_without_pyarrow_the_error_names_the_extra(tmp_path, monkeypatch):
    ds = split_dataset(tmp_path / "two")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'cartoqa\[export\]'"):
        export_hf(ds, tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_cli_export(tmp_path):
    split_dataset(tmp_path / "two")
    out = tmp_path / "hf"
    args = ["export", str(tmp_path / "two"), "--to", "hf", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "distance: dev 2, test 3  [cc-by-4.0]" in result.output
    assert "stmf_count: dev 2, test 3  [odbl]" in result.output
    assert "© OpenStreetMap contributors" in result.output
    assert (out / CARD_FILE).is_file()
    before = snapshot(out)
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "--overwrite" in result.output
    assert snapshot(out) == before
    result = runner.invoke(app, [*args, "--overwrite"])
    assert result.exit_code == 0, result.output
    assert "an earlier export was replaced" in result.output


def test_cli_unknown_format_names_the_formats(tmp_path):
    split_dataset(tmp_path / "two")
    out = tmp_path / "out"
    result = runner.invoke(app, ["export", str(tmp_path / "two"), "--to", "nonsense", str(out)])
    assert result.exit_code == 2
    assert "'nonsense'" in result.output and "hf (Hugging Face" in result.output
    assert not out.exists()
