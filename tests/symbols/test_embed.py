"""CLIP embeddings (``symbols.embed``): weights only as given, random ones only when asked and
loudly, the same seed the same vectors (issue 16, item 4).  Random weights here: no
pretrained ones exist on this machine; the code path is the one real weights take."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from cartoqa.errors import ModelError
from symbols.embed import RANDOM_WEIGHTS_WARNING, ClipWeights, embed_images

pytest.importorskip("open_clip", reason="open_clip is an extra: pip install -e '.[symbols]'")


def _images(folder: Path) -> list[Path]:
    out = []
    for n, colour in enumerate(("#734a08", "#0092da", "#c77400")):
        im = Image.new("RGB", (120, 120), (0xF2, 0xEF, 0xE9))
        ImageDraw.Draw(im).ellipse((30 + n * 5, 30, 90, 90), fill=colour)
        p = folder / f"{n}.png"
        im.save(p)
        out.append(p)
    return out


def test_no_weights_given_is_an_error_that_names_the_choices(tmp_path):
    with pytest.raises(ModelError, match="random_weights=True"):
        embed_images(_images(tmp_path), ClipWeights())


def test_a_missing_checkpoint_names_the_path(tmp_path):
    missing = tmp_path / "nowhere" / "ViT-B-32.pt"
    with pytest.raises(ModelError, match="does not exist") as exc:
        embed_images(_images(tmp_path), ClipWeights(checkpoint=missing))
    assert str(missing) in str(exc.value)


def test_random_weights_warn_loudly_are_recorded_and_are_seeded(tmp_path, capsys):
    paths = _images(tmp_path)
    with pytest.warns(UserWarning, match="RANDOM WEIGHTS"):
        a, info = embed_images(paths, ClipWeights(random_weights=True, seed=3))
    assert RANDOM_WEIGHTS_WARNING in capsys.readouterr().err
    assert info["random_weights"] is True and info["seed"] == 3 and info["model"] == "ViT-B-32"
    assert a.shape[0] == 3 and np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    with pytest.warns(UserWarning):
        b, _ = embed_images(paths, ClipWeights(random_weights=True, seed=3))
    assert np.allclose(a, b, atol=1e-6)  # the same seed, the same embeddings
