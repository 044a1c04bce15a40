"""Dataset folders: writing, loading, and the errors for bad ones."""

import json

import pytest

from cartoqa.errors import DatasetError
from cartoqa.records import BooleanTruth, NumberTruth, Prompt, Provenance, Sample
from cartoqa.stores import DatasetWriter, load_dataset
from tests.cartoqa.model_data import png

PROV = Provenance(generator="test", seed=7, extract_hash="ab" * 32)


def sample(i, task="distance", split="test", images=()):
    truth = (
        NumberTruth(value=float(i), unit="km") if task == "distance" else BooleanTruth(value=True)
    )
    return Sample(
        id=f"s-{i}",
        task=task,
        split=split,
        prompt=Prompt(text=f"q{i}", images=list(images)),
        ground_truth=truth,
        provenance=PROV,
    )


def write(folder, n=5):
    with DatasetWriter(folder, name="t") as w:
        rel = w.add_image("map-0.png", png(0))  # a dataset holds only images that decode
        for i in range(n):
            w.add(sample(i, split="dev" if i % 2 else "test", images=[rel] if i == 0 else ()))
        w.add(sample(99, task="stmf_presence"))
        return w.finish(seeds=[7, 7, 3], extract_hashes={"monaco": "ab" * 32})


def test_round_trip_and_manifest(tmp_path):
    m = write(tmp_path / "ds")
    assert m.counts == {"distance": {"dev": 2, "test": 3}, "stmf_presence": {"test": 1}}
    assert m.total == 6 and m.seeds == [3, 7]
    assert m.versions["cartoqa"] and "mapnik" in m.versions and "osmnx" in m.versions
    assert m.attribution == ["© OpenStreetMap contributors"]
    ds = load_dataset(tmp_path / "ds")
    assert [s.id for s in ds] == ["s-0", "s-1", "s-2", "s-3", "s-4", "s-99"]
    assert ds.image_path(ds.samples[0].prompt.images[0]).read_bytes() == png(0)
    assert ds.manifest == m


def test_bad_line_is_reported_by_number(tmp_path):
    write(tmp_path / "ds")
    path = tmp_path / "ds" / "samples.jsonl"
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["ground_truth"]["value"] = "far"
    lines[2] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"samples\.jsonl:3: ground_truth\.number\.value"):
        load_dataset(tmp_path / "ds")
    lines[2] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"samples\.jsonl:3: not valid JSON"):
        load_dataset(tmp_path / "ds")


def test_repeated_id_and_missing_image(tmp_path):
    write(tmp_path / "ds")
    path = tmp_path / "ds" / "samples.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[1]]) + "\n")
    with pytest.raises(DatasetError, match=r":7: sample id 's-1' repeats line 2"):
        load_dataset(tmp_path / "ds")
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "ds" / "images" / "map-0.png").unlink()
    with pytest.raises(
        DatasetError, match=r":1: sample 's-0' names image 'images/map-0.png', which is missing"
    ):
        load_dataset(tmp_path / "ds")


def test_manifest_count_mismatch(tmp_path):
    write(tmp_path / "ds")
    path = tmp_path / "ds" / "samples.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(DatasetError, match="says 6 samples but .* has 5"):
        load_dataset(tmp_path / "ds")


def test_writer_refuses_duplicates_missing_images_and_existing_datasets(tmp_path):
    write(tmp_path / "ds")
    with pytest.raises(DatasetError, match="already holds a dataset"):
        DatasetWriter(tmp_path / "ds")
    with DatasetWriter(tmp_path / "ds2") as w:
        w.add(sample(1))
        with pytest.raises(DatasetError, match="'s-1' is already in this dataset"):
            w.add(sample(1))
        with pytest.raises(DatasetError, match="names image 'images/nope.png'"):
            w.add(sample(2, images=["images/nope.png"]))
        with pytest.raises(DatasetError, match="plain file name"):
            w.image_path("../x.png")


def test_unfinished_dataset_leaves_nothing_and_an_old_one_stays(tmp_path):
    with pytest.raises(RuntimeError), DatasetWriter(tmp_path / "ds") as w:
        w.add(sample(1))
        raise RuntimeError("generator crashed")
    assert not (tmp_path / "ds").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ds.lock"]  # no staging left
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "nowhere")
    old = write(tmp_path / "ds")
    with pytest.raises(RuntimeError), DatasetWriter(tmp_path / "ds", overwrite=True) as w:
        w.add(sample(1))
        raise RuntimeError("generator crashed")
    assert load_dataset(tmp_path / "ds").manifest == old


def test_an_old_folder_layout_that_did_not_finish_is_refused(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "samples.jsonl.partial").write_text("")
    with pytest.raises(DatasetError, match="did not finish"):
        load_dataset(tmp_path / "ds")
