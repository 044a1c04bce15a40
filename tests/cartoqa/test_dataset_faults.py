"""Datasets under kills, races and edits: real processes, as a user's would be.

Each test reproduces a fault an outside campaign found (issue 11, items 1, 2,
4 and 15) and checks that nothing is lost and nothing wrong is accepted.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cartoqa.errors import DatasetError
from cartoqa.stores import DatasetWriter, load_dataset
from tests.cartoqa.model_data import png
from tests.cartoqa.read_only import read_only_mount

WRITER = Path(__file__).with_name("dataset_writer.py")
CARTOQA = Path(sys.executable).with_name("cartoqa")


def start_writer(folder, n, pause, *extra):
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(folder), str(n), str(pause), *extra],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_overwrite_killed_midway_leaves_the_old_dataset_whole(tmp_path):
    folder = tmp_path / "ds"
    proc, first = start_writer(folder, 5, 0.0)
    assert first == "writing" and proc.wait(30) == 0
    old = load_dataset(folder, verify_images=True)
    for delay in (0.0, 0.05, 0.3):
        proc, first = start_writer(folder, 100_000, 0.0001, "--overwrite")
        assert first == "writing"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        again = load_dataset(folder, verify_images=True)  # still the old one, byte for byte
        assert again.manifest == old.manifest and len(again) == 5
    # the next writer clears the dead writers' staging folders and replaces the dataset
    proc, first = start_writer(folder, 7, 0.0, "--overwrite")
    assert proc.wait(30) == 0
    assert len(load_dataset(folder, verify_images=True)) == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ds.lock", "ds"]


def test_a_second_writer_is_refused_at_once_naming_the_first(tmp_path):
    folder = tmp_path / "ds"
    first, said = start_writer(folder, 40, 0.05)
    assert said == "writing"
    t0 = time.monotonic()
    second, said2 = start_writer(folder, 3, 0.0, "--overwrite")
    assert second.wait(30) == 2 and time.monotonic() - t0 < 15
    assert said2.startswith("refused:") and f"process {first.pid}" in said2
    assert "dataset_writer.py" in said2
    assert first.wait(60) == 0
    ds = load_dataset(folder)
    assert len(ds) == 40 and ds.manifest.seeds == [40]


def test_the_lock_of_a_killed_writer_does_not_block(tmp_path):
    folder = tmp_path / "ds"
    proc, _ = start_writer(folder, 100_000, 0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc, said = start_writer(folder, 3, 0.0)
    assert said == "writing" and proc.wait(30) == 0
    assert len(load_dataset(folder)) == 3


def _write(folder, n=4):
    with DatasetWriter(folder, overwrite=True) as w:
        rel = w.add_image("m.png", png(0))
        from tests.cartoqa.test_dataset_store import sample

        for i in range(n):
            w.add(sample(i, images=[rel] if i == 0 else ()))
        return w.finish()


def test_an_edited_samples_file_with_the_same_count_is_refused(tmp_path):
    _write(tmp_path / "ds")
    path = tmp_path / "ds" / "samples.jsonl"
    lines = path.read_text().splitlines()
    edited = json.loads(lines[1])
    edited["ground_truth"]["value"] = 12345.0  # a plausible, valid, different truth
    lines[1] = json.dumps(edited)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"does not match its manifest .*generate it again"):
        load_dataset(tmp_path / "ds")


def test_verify_checks_every_image_against_the_manifest(tmp_path):
    m = _write(tmp_path / "ds")
    assert list(m.images_sha256) == ["images/m.png"]
    (tmp_path / "ds" / "images" / "m.png").write_bytes(b"\x89PNG another map")
    load_dataset(tmp_path / "ds")  # only the samples file is checked by default
    with pytest.raises(DatasetError, match=r"m\.png does not match its manifest"):
        load_dataset(tmp_path / "ds", verify_images=True)
    code = subprocess.run(
        [CARTOQA, "dataset", "info", str(tmp_path / "ds"), "--verify"],
        capture_output=True,
        text=True,
    )
    assert code.returncode == 2 and "does not match its manifest" in code.stderr


def test_overwrite_leaves_no_old_images(tmp_path):
    folder = tmp_path / "ds"
    with DatasetWriter(folder) as w:
        w.add_image("old-map.png", png(1))
        w.finish()
    _write(folder)
    assert sorted(p.name for p in (folder / "images").iterdir()) == ["m.png"]


def test_outputs_that_cannot_be_written_are_refused_before_any_work(tmp_path):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(DatasetError, match="a-file is a file, not a folder"):
        DatasetWriter(tmp_path / "a-file" / "ds")
    with pytest.raises(DatasetError, match="is a file, not a dataset folder"):
        DatasetWriter(tmp_path / "a-file")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match="holds other files .*notes.txt"):
        DatasetWriter(tmp_path / "home", overwrite=True)
    assert (tmp_path / "home" / "notes.txt").read_text() == "mine"  # never deleted


@pytest.fixture
def read_only(tmp_path):
    """A read-only folder, truly: root writes through permission bits, so as root it is a
    read-only bind mount (skipped where mounting is not allowed); otherwise mode 0555."""
    src = tmp_path / "ro-src"
    src.mkdir()
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if os.geteuid() != 0:
        mnt.chmod(0o555)
        yield mnt
        mnt.chmod(0o755)
        return
    with read_only_mount(src, mnt):
        yield mnt


@pytest.mark.parametrize(
    "args",
    [
        ["gps", "generate", "{ro}/gps", "--per-task", "10"],
        ["run", "{ds}", "--model", "oracle", "--runs-dir", "{ro}/runs"],
        ["score", "{ds}", "--runs-dir", "{runs}", "--out", "{ro}/scores"],
        ["run", "{ds}", "--model", "oracle", "--runs-dir", "{file}/runs"],
        ["score", "{ds}", "--runs-dir", "{runs}", "--out", "{file}/scores"],
        ["gps", "generate", "{file}/gps", "--per-task", "10"],
    ],
    ids=["gps-ro", "run-ro", "score-ro", "run-file", "score-file", "gps-file"],
)
def test_cli_outputs_that_cannot_be_written_give_one_clear_line(tmp_path, read_only, args):
    ds = tmp_path / "ds"
    _write(ds)
    runs = tmp_path / "runs"
    subprocess.run(
        [CARTOQA, "run", str(ds), "--model", "oracle", "--runs-dir", str(runs), "--no-progress"],
        check=True,
        capture_output=True,
    )
    (tmp_path / "file").write_text("not a folder")
    words = {"ro": read_only, "ds": ds, "runs": runs, "file": tmp_path / "file"}
    done = subprocess.run(
        [CARTOQA, *(a.format(**words) for a in args)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: cannot write"), done.stderr
    assert "not writable" in done.stderr or "is a file" in done.stderr, done.stderr


def _wait_for_staging(parent: Path, name: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if list(parent.glob(f".{name}.staging-*")):
            return
        time.sleep(0.02)
    raise AssertionError(f"no writer started on {parent / name} in {timeout_s} s")


def test_cli_gps_overwrite_killed_midway_keeps_the_old_set(tmp_path):
    gps = tmp_path / "gps"
    small = [CARTOQA, "gps", "generate", gps, "--per-task", "10", "--tasks", "distance,bearing"]
    subprocess.run(small, check=True, capture_output=True, timeout=120)
    before = load_dataset(gps).manifest
    big = subprocess.Popen(
        [CARTOQA, "gps", "generate", gps, "--per-task", "3400", "--overwrite"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for_staging(tmp_path, "gps")
    time.sleep(2.0)
    big.send_signal(signal.SIGKILL)
    big.wait()
    info = subprocess.run([CARTOQA, "dataset", "info", gps], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    assert load_dataset(gps).manifest == before


def test_cli_two_gps_generate_into_one_folder(tmp_path):
    gps = tmp_path / "gps"
    cmd = [CARTOQA, "gps", "generate", gps, "--per-task", "1000", "--seed", "1"]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_staging(tmp_path, "gps")
    second = subprocess.run(
        [CARTOQA, "gps", "generate", gps, "--per-task", "10", "--seed", "2", "--overwrite"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 2
    assert f"is being written by process {first.pid}" in second.stderr
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    ds = load_dataset(gps)  # checks the sha of every byte against the manifest
    assert ds.manifest.seeds == [1] and ds.manifest.total == 1000 * len(ds.manifest.counts)


@pytest.fixture
def small_disk(tmpfs):
    """A real 2 MB file system (tmpfs), to fill up; root only."""
    return tmpfs("2m")


def test_a_full_disk_fails_the_overwrite_and_keeps_the_old_dataset(small_disk):
    gps = small_disk / "gps"
    subprocess.run(
        [CARTOQA, "gps", "generate", gps, "--per-task", "10", "--tasks", "distance"],
        check=True,
        capture_output=True,
    )
    before = load_dataset(gps).manifest
    done = subprocess.run(
        [CARTOQA, "gps", "generate", gps, "--per-task", "3400", "--overwrite"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert "No space left on device" in done.stderr and "is as it was" in done.stderr
    assert "Traceback" not in done.stderr
    assert load_dataset(gps).manifest == before
    assert sorted(p.name for p in small_disk.iterdir()) == [".gps.lock", "gps"]
