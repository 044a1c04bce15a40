"""Images kept outside a dataset's images/ folder (an imported release's): linked or copied.

A dataset may name images under a folder of its own that links to where they lie (the
release's root), or hold a copy there; either way load_dataset reads them, the manifest
hashes them, and replacing or deleting the dataset never touches the linked folder.
"""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from cartoqa.errors import DatasetError
from cartoqa.records import NumberTruth, Prompt, Provenance, Sample
from cartoqa.stores import DatasetWriter, load_dataset


def _png(n: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (n, 0, 0)).save(buf, "PNG")
    return buf.getvalue()


def _release(tmp_path):
    root = tmp_path / "Release"
    (root / "maps" / "a").mkdir(parents=True)
    (root / "maps" / "a" / "1.png").write_bytes(_png(1))
    (root / "maps" / "2.png").write_bytes(_png(2))
    return root


def _write(out, root, *, copy, overwrite=False):
    with DatasetWriter(out, overwrite=overwrite) as w:
        for i, rel in enumerate(["maps/a/1.png", "maps/2.png"]):
            name = w.add_image_file(f"release/{rel}", root / rel, copy=copy)
            w.add(
                Sample(
                    id=f"s{i}",
                    task="distance",
                    prompt=Prompt(text="q", images=[name]),
                    ground_truth=NumberTruth(value=1.0, unit="km"),
                    provenance=Provenance(generator="test", seed=0),
                )
            )
        return w.finish()


@pytest.mark.parametrize("copy", [False, True])
def test_linked_or_copied_images_load_and_verify(tmp_path, copy):
    root = _release(tmp_path)
    manifest = _write(tmp_path / "ds", root, copy=copy)
    link = tmp_path / "ds" / "release"
    assert link.is_symlink() is (not copy)
    assert set(manifest.images_sha256) == {"release/maps/a/1.png", "release/maps/2.png"}
    ds = load_dataset(tmp_path / "ds", verify_images=True)
    assert ds.image_path(ds.samples[0].prompt.images[0]).read_bytes() == _png(1)
    if copy:  # the copy stands alone
        shutil.rmtree(root)
        load_dataset(tmp_path / "ds", verify_images=True)


def test_replacing_or_deleting_a_linking_dataset_leaves_the_release_whole(tmp_path):
    root = _release(tmp_path)
    _write(tmp_path / "ds", root, copy=False)
    _write(tmp_path / "ds", root, copy=False, overwrite=True)
    shutil.rmtree(tmp_path / "ds")
    assert (root / "maps" / "a" / "1.png").read_bytes() == _png(1)
    assert (root / "maps" / "2.png").is_file()


def test_a_changed_linked_image_fails_verification(tmp_path):
    root = _release(tmp_path)
    _write(tmp_path / "ds", root, copy=False)
    (root / "maps" / "2.png").write_bytes(_png(9))
    with pytest.raises(DatasetError, match="2.png"):
        load_dataset(tmp_path / "ds", verify_images=True)


def test_an_image_path_under_images_or_without_a_folder_is_refused(tmp_path):
    root = _release(tmp_path)
    with DatasetWriter(tmp_path / "ds") as w:
        for bad in ("images/x.png", "x.png"):
            with pytest.raises(DatasetError, match="must be '<folder>/<path>'"):
                w.add_image_file(bad, root / "maps" / "2.png", copy=False)
        w.abandon()
