"""A dataset never holds an image it has not decoded (issue 27, item 1's last clause):
``DatasetWriter.add_image`` refuses bytes that are not the image their name claims."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from cartoqa.errors import DatasetError
from cartoqa.stores import DatasetWriter, load_dataset
from tests.cartoqa.model_data import png


def _jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (20, 10), (10, 200, 30)).save(buf, "JPEG")
    return buf.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [
        ("empty.png", b"", "empty"),
        ("truncated.png", png(3)[:60], "decode"),
        ("half.png", png(3, (300, 200))[:-200], "decode"),
        ("garbage.png", b"\x89PNG fake bytes", "decode"),
        ("jpeg-as.png", _jpeg(), "JPEG"),
    ],
)
def test_bytes_that_are_not_the_image_named_are_refused_naming_the_file(tmp_path, name, data, why):
    with DatasetWriter(tmp_path / "ds") as w:
        with pytest.raises(DatasetError, match=rf"{name}.*{why}"):
            w.add_image(name, data)
        assert not w.image_path(name).exists()
        rel = w.add_image("good.png", png(1))
        assert rel == "images/good.png"
        jpg = w.add_image("photo.jpg", _jpeg())
        w.finish()
    ds = load_dataset(tmp_path / "ds", verify_images=True)
    assert sorted(ds.manifest.images_sha256) == ["images/good.png", jpg]
