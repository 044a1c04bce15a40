"""``cartoqa audit``: one PNG per sample asked, a seeded random subset, one-line errors."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from annotations import HEADER_PX, PANEL_PX
from cartoqa.cli import app
from cartoqa.records import (
    LabelBox,
    NumberTruth,
    Prompt,
    Provenance,
    RoadPairTruth,
    RouteLeg,
    RouteTruth,
    Sample,
)
from cartoqa.stores import DatasetWriter

runner = CliRunner()
W, H = 320, 200


def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (W, H), colour).save(buf, format="PNG")
    return buf.getvalue()


def _samples() -> list[tuple[Sample, bytes | None]]:
    meta = {"zoom": 18, "center_lat": 43.7384, "center_lon": 7.4246, "blank_share": 0.1}
    out: list[tuple[Sample, bytes | None]] = []
    for i in range(1, 4):
        leg = RouteLeg(
            action="turn left",
            road=f"Rue {i}",
            nodes=[1, 2],
            length_m=40,
            length_px=90,
            points_px=[(40.0, 150.0), (130.0, 150.0)],
            label=LabelBox(road=f"Rue {i}", osm_id=i, box=(60, 100, 140, 120)),
        )
        truth = RouteTruth(steps=["blue", "turn left", f"Rue {i}", "red"], legs=[leg])
        out.append((_sample(f"srn-000{i}", "srn", truth, meta), _png((240, 238, 230))))
    for i in range(1, 3):
        truth = RoadPairTruth(road_1="A", road_2="B")
        out.append(
            (_sample(f"mml-000{i}", "mml", truth, {**meta, "colour": "red"}), _png((230, 230, 250)))
        )
    for unit in ("m", "ft"):
        truth = NumberTruth(value=100.0 if unit == "m" else 328.08, unit=unit)
        out.append((_sample(f"rle-0001-{unit}", "rle", truth, meta), _png((250, 240, 240))))
    text_only = _sample("gps-0001", "distance", NumberTruth(value=3.0, unit="km"), {}, image=False)
    out.append((text_only, None))
    return out


def _sample(sid: str, task: str, truth, meta: dict, *, image: bool = True) -> Sample:
    return Sample(
        id=sid,
        task=task,
        prompt=Prompt(text=f"question {sid}", images=[f"images/{sid}.png"] if image else []),
        ground_truth=truth,
        metadata=meta,
        provenance=Provenance(generator="test"),
    )


def _dataset(folder: Path, *, broken: str | None = None) -> Path:
    with DatasetWriter(folder, name="audit-test") as w:
        for sample, png in _samples():
            if png is not None:
                w.add_image(f"{sample.id}.png", png)
            w.add(sample)
        w.finish(seeds=[1])
    if broken:  # broken after it was made (a writer refuses an image that does not decode)
        (folder / "images" / f"{broken}.png").write_bytes(b"\x89PNG broken")
    return folder


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    return _dataset(tmp_path / "ds")


def audit(*args):
    result = runner.invoke(app, ["audit", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def _pngs(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_one_png_per_sample_asked_with_the_drawing(ds, tmp_path):
    out = tmp_path / "audit"
    code, stdout, stderr = audit(ds, "--sample", "srn-0002", "-s", "mml-0001", "--out", out)
    assert (code, stderr) == (0, "")
    assert _pngs(out) == ["mml-0001.png", "srn-0002.png"]
    assert stdout.splitlines() == [
        str(out / "srn-0002.png"),
        str(out / "mml-0001.png"),
        f"2 audit images of audit-test in {out}",
    ]
    with Image.open(out / "srn-0002.png") as im:
        assert im.format == "PNG"
        assert im.width == W + PANEL_PX and im.height >= H + HEADER_PX
        # the map is there, under its header, and the leg is drawn on it
        assert im.convert("RGB").getpixel((10, HEADER_PX + 10)) == (240, 238, 230)
        assert im.convert("RGB").getpixel((100, HEADER_PX + 150)) != (240, 238, 230)
    # asking again replaces the file, adds nothing
    assert audit(ds, "-s", "srn-0002", "--out", out)[0] == 0
    assert _pngs(out) == ["mml-0001.png", "srn-0002.png"]


def test_the_default_folder_is_name_audit_beside_the_dataset(ds):
    code, stdout, _ = audit(ds, "-s", "rle-0001-ft")
    assert code == 0
    assert _pngs(ds.parent / "ds-audit") == ["rle-0001-ft.png"]
    assert stdout.splitlines()[0] == str(ds.parent / "ds-audit" / "rle-0001-ft.png")


def test_a_random_subset_is_seeded_drawn_among_map_samples_and_in_dataset_order(ds, tmp_path):
    picks = {}
    for seed in range(6):
        out = tmp_path / f"s{seed}"
        code, stdout, _ = audit(ds, "--n", 3, "--seed", seed, "--out", out)
        assert code == 0
        picks[seed] = _pngs(out)
        assert len(picks[seed]) == 3
        order = [Path(line).stem for line in stdout.splitlines()[:-1]]
        ids = [s.id for s, _ in _samples()]
        assert order == sorted(order, key=ids.index)
    again = tmp_path / "again"
    assert audit(ds, "--n", 3, "--seed", 4, "--out", again)[0] == 0
    assert _pngs(again) == picks[4]
    assert len({tuple(p) for p in picks.values()}) > 1, "every seed drew the same samples"
    # more than there are: every sample with a map, never the text-only one
    every = tmp_path / "every"
    code, stdout, _ = audit(ds, "--n", 100, "--out", every)
    assert code == 0
    assert _pngs(every) == sorted(f"{s.id}.png" for s, png in _samples() if png is not None)
    assert stdout.splitlines()[-1] == f"7 audit images of audit-test in {every}"
    # without --n or --sample: a default subset
    assert audit(ds, "--out", tmp_path / "default")[0] == 0
    assert len(_pngs(tmp_path / "default")) == 7


def test_tasks_narrow_the_subset(ds, tmp_path):
    out = tmp_path / "mml"
    assert audit(ds, "--tasks", "mml", "--n", 5, "--out", out)[0] == 0
    assert _pngs(out) == ["mml-0001.png", "mml-0002.png"]
    out2 = tmp_path / "two"
    assert audit(ds, "--tasks", "rle, srn", "--n", 50, "--out", out2)[0] == 0
    assert [n.split("-")[0] for n in _pngs(out2)] == ["rle"] * 2 + ["srn"] * 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-s", "srn-0009"], "sample 'srn-0009' is not in"),
        (["--tasks", "srn,nope"], "--tasks nope: no such task; known tasks: "),
        (["--tasks", "stmf_count"], "--tasks stmf_count: audit-test has no sample of that task"),
        (["-s", "mml-0001", "--tasks", "srn"], "sample 'mml-0001' is of task mml, not among"),
        (["-s", "gps-0001"], "sample 'gps-0001' (distance) has no map image"),
        (["-s", "srn-0001", "--n", "2"], "give --sample or --n, not both"),
        (["--n", "0"], "--n 0 must be at least 1"),
        (["--tasks", "distance"], "audit-test has no sample with a map image among tasks distance"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(ds, tmp_path, args, message):
    out = tmp_path / "out"
    code, stdout, stderr = audit(ds, *args, "--out", out)
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith("error: ")
    assert message in stderr
    assert stdout == ""
    assert not out.exists()


def test_an_out_folder_that_cannot_be_written_is_one_line_and_exit_2(ds, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, stdout, stderr = audit(ds, "-s", "srn-0001", "--out", blocker / "audit")
    assert code == 2
    assert stderr.count("\n") == 1
    assert f"cannot write audit images in {blocker / 'audit'}: {blocker} is a file" in stderr
    assert stdout == ""


def test_a_dataset_that_cannot_be_read_is_one_line_and_exit_2(tmp_path):
    code, _, stderr = audit(tmp_path / "missing", "--out", tmp_path / "o")
    assert code == 2 and stderr.count("\n") == 1
    assert "dataset folder" in stderr and "does not exist" in stderr


def test_a_broken_map_is_reported_the_others_are_written_and_exit_is_1(tmp_path):
    ds = _dataset(tmp_path / "ds", broken="srn-0002")
    out = tmp_path / "out"
    code, stdout, stderr = audit(
        ds, "-s", "srn-0001", "-s", "srn-0002", "-s", "srn-0003", "--out", out
    )
    assert code == 1
    assert _pngs(out) == ["srn-0001.png", "srn-0003.png"]
    assert stderr.count("\n") == 1
    assert stderr.startswith("error: sample srn-0002: image ") and "cannot be read" in stderr
    assert stdout.splitlines()[-1] == f"2 audit images of audit-test in {out}"
