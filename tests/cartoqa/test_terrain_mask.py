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
