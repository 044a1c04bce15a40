"""Truncated images are refused even when PIL is set to decode them silently.

``lmms_eval`` sets ``PIL.ImageFile.LOAD_TRUNCATED_IMAGES = True`` when imported; in such a
process a decode alone passes a cut-short PNG (the full suite caught it: a legend check passed
after the lmms-eval export tests had run).  These tests set the flag themselves.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageFile

from cartoqa.errors import DatasetError
from cartoqa.stores.cache_files import BadCacheEntry, decoded_png
from cartoqa.stores.dataset import check_image
from cartoqa.stores.image_bytes import cut_short


def _encoded(fmt: str, size: int = 64) -> bytes:
    im = Image.new("RGB", (size, size))
    im.putdata([((x * 7) % 256, (x * 13) % 256, (x * 3) % 256) for x in range(size * size)])
    buf = io.BytesIO()
    im.save(buf, fmt)
    return buf.getvalue()


@pytest.fixture
def lenient_pil(monkeypatch):
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_whole_images_are_whole_and_cut_ones_are_not(fmt):
    data = _encoded(fmt)
    assert cut_short(data) is None
    assert cut_short(data[: len(data) // 2]) is not None
    assert cut_short(data[:-3]) is not None


def test_a_png_with_a_damaged_chunk_fails_its_crc():
    data = bytearray(_encoded("PNG"))
    data[60] ^= 0xFF  # inside the IDAT chunk
    assert "CRC" in cut_short(bytes(data))


def test_cut_pngs_are_refused_by_every_check_even_with_pil_lenient(lenient_pil):
    whole = _encoded("PNG", 120)
    for bad in (whole[:100], whole[: len(whole) // 2], whole[:-12]):
        # the premise: PIL itself now decodes the cut image without a word
        with Image.open(io.BytesIO(bad)) as im:
            im.load()
        with pytest.raises(BadCacheEntry):
            decoded_png(bad, size=(120, 120))
        with pytest.raises(DatasetError, match="map.png"):
            check_image("map.png", bad)
    assert decoded_png(whole, size=(120, 120)) == (120, 120)
    check_image("map.png", whole)


def test_a_cut_legend_image_is_refused_with_pil_lenient(lenient_pil):
    from cartoqa.errors import RenderStackError
    from symbols.legend import checked_png

    whole = _encoded("PNG", 120)
    assert checked_png(whole, 120, "symbol:amenity=bank") == whole
    with pytest.raises(RenderStackError, match="amenity=bank"):
        checked_png(whole[: len(whole) - 40], 120, "symbol:amenity=bank")


def test_a_cut_jpeg_is_refused_with_pil_lenient(lenient_pil):
    whole = _encoded("JPEG")
    check_image("map.jpg", whole)
    with pytest.raises(DatasetError, match="map.jpg"):
        check_image("map.jpg", whole[: len(whole) - 200])
