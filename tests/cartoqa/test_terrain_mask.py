"""The GLOBE mask is packed as it is read, a band of rows at a time (``_packed_mask``): the
bits must be those ``np.packbits`` gives the whole array, and a damaged file must say so."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cartoqa.errors import CartoqaError
from cartoqa.tasks.gps import _terrain
from cartoqa.tasks.gps._terrain import _packed_mask


def _npz(path: Path, mask: np.ndarray) -> Path:
    np.savez_compressed(path, mask=mask)
    return path


@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (1100, 45), (513, 8)])
def test_packed_as_read_equals_packbits_of_the_whole(tmp_path, monkeypatch, shape):
    monkeypatch.setattr(_terrain, "_MASK_ROWS", 512)  # several bands for the larger shapes
    rng = np.random.default_rng(sum(shape))
    mask = rng.random(shape) < 0.3
    got = _packed_mask(_npz(tmp_path / "m.npz", mask))
    assert np.array_equal(got, np.packbits(mask, axis=1))
    # and a cell read back from the packed bits is the cell
    y, x = shape[0] - 1, shape[1] - 1
    assert bool((got[y, x >> 3] >> (7 - (x & 7))) & 1) == bool(mask[y, x])


def test_a_mask_of_another_type_is_refused_with_the_fix(tmp_path):
    path = _npz(tmp_path / "m.npz", np.zeros((4, 4), dtype=np.int16))
    with pytest.raises(CartoqaError, match=r"int16.*reinstall global-land-mask"):
        _packed_mask(path)


def test_a_cut_short_mask_is_refused_with_the_fix(tmp_path):
    mask = np.ones((600, 16), dtype=bool)
    buf = io.BytesIO()
    np.save(buf, mask)
    whole = buf.getvalue()
    path = tmp_path / "m.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mask.npy", whole[: len(whole) - 16 * 100])  # the last 100 rows gone
    with pytest.raises(CartoqaError, match=r"ends after row 500 of 600.*reinstall"):
        _packed_mask(path)


def test_the_packed_mask_is_cached_checked_and_made_again_when_damaged(
    tmp_path, monkeypatch, caplog
):
    monkeypatch.setenv("CARTOQA_CACHE", str(tmp_path / "cache"))
    mask = np.random.default_rng(3).random((40, 21)) < 0.5
    src = _npz(tmp_path / "m.npz", mask)
    want = np.packbits(mask, axis=1)
    assert np.array_equal(_terrain.packed_sea_bits(src), want)
    (entry,) = (tmp_path / "cache" / "gps").glob("sea-bits-*.npy")

    def not_again(path):
        raise AssertionError("packed again although the cache holds it")

    with monkeypatch.context() as m:
        m.setattr(_terrain, "_packed_mask", not_again)
        assert np.array_equal(_terrain.packed_sea_bits(src), want)
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0xFF  # one bit of the packed grid flipped on disk
    entry.write_bytes(bytes(data))
    with caplog.at_level("WARNING"):
        assert np.array_equal(_terrain.packed_sea_bits(src), want)
    assert "packed land/sea mask" in caplog.text and "SHA-256" in caplog.text
    assert np.array_equal(np.load(entry), want)  # made again, whole


def test_a_cache_that_cannot_be_written_still_gives_the_bits(tmp_path, monkeypatch, caplog):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "gps").write_text("a file where the folder would go")
    monkeypatch.setenv("CARTOQA_CACHE", str(tmp_path / "cache"))
    mask = np.random.default_rng(4).random((9, 30)) < 0.5
    with caplog.at_level("WARNING"):
        got = _terrain.packed_sea_bits(_npz(tmp_path / "m.npz", mask))
    assert np.array_equal(got, np.packbits(mask, axis=1))
    assert "could not be cached" in caplog.text
