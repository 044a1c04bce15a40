"""Corrupt legend caches (issue 27, items 1 and 7): a legend PNG or index cut short, empty or of
the wrong bytes is never handed out (the legend is drawn again, with a warning, and its images
decode), and CLIP embeddings cut short, empty or of the wrong bytes are computed again with a
warning instead of ending in ``BadZipFile``.  The real style and database for the legend; random
CLIP weights (no pretrained ones exist here; the cache path is the one real weights take)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from tests.corrupt_bytes import CORRUPT, png_size

ONLY = ["symbol:amenity=bank", "line:highway=residential", "area:landuse=grass"]
SIZES = {"symbol": 120, "line": 240, "area": 240}


@pytest.fixture(scope="module")
def legend_cache(tmp_path_factory, carto_files, legend_dsn) -> Path:
    """A cache holding the legend of ``ONLY``, drawn once for the module."""
    from symbols.store import load_legend

    cache = tmp_path_factory.mktemp("legend-faults")
    load_legend(cache=cache, carto_files=carto_files, dsn=legend_dsn, only=ONLY)
    return cache


def _good_bytes(legend) -> dict[str, bytes]:
    return {k: p.read_bytes() for k, p in legend.images.items()}


@pytest.mark.parametrize("kind", [*CORRUPT, "another image"])
def test_a_bad_legend_image_is_drawn_again_with_a_warning(
    legend_cache, carto_files, legend_dsn, kind, caplog
):
    from symbols.store import load_legend

    first = load_legend(cache=legend_cache, carto_files=carto_files, dsn=legend_dsn, only=ONLY)
    good = _good_bytes(first)
    bad = first.images["area:landuse=grass"]
    if kind == "another image":  # a whole PNG of the right size, of another feature
        bad.write_bytes(good["line:highway=residential"])
    else:
        bad.write_bytes(CORRUPT[kind](good["area:landuse=grass"]))
    caplog.set_level(logging.WARNING)
    again = load_legend(cache=legend_cache, carto_files=carto_files, dsn=legend_dsn, only=ONLY)
    assert again.built
    for key, p in again.images.items():
        data = p.read_bytes()
        size = SIZES[key.split(":")[0]]
        assert png_size(data) == (size, size)
        assert data == good[key]
    assert str(bad) in caplog.text and "drawn again" in caplog.text


@pytest.mark.parametrize(
    ("name", "kind"),
    [*(("legend.json", kind) for kind in CORRUPT), ("catalogue.json", "truncated")],
)
def test_a_bad_legend_index_is_drawn_again_with_a_warning(
    legend_cache, carto_files, legend_dsn, name, kind, caplog
):
    from symbols.store import load_legend

    first = load_legend(cache=legend_cache, carto_files=carto_files, dsn=legend_dsn, only=ONLY)
    good = _good_bytes(first)
    index = first.folder / name
    index.write_bytes(CORRUPT[kind](index.read_bytes()))
    caplog.set_level(logging.WARNING)
    again = load_legend(cache=legend_cache, carto_files=carto_files, dsn=legend_dsn, only=ONLY)
    assert again.built and _good_bytes(again) == good
    assert str(first.folder) in caplog.text


def test_a_legend_image_that_does_not_decode_is_never_written(tmp_path):
    from cartoqa.errors import RenderStackError
    from symbols.legend import checked_png

    im = Image.new("RGB", (120, 120), "white")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    assert checked_png(buf.getvalue(), 120, "symbol:amenity=bank") == buf.getvalue()
    for bad in (b"", buf.getvalue()[:100]):
        with pytest.raises(RenderStackError, match="amenity=bank"):
            checked_png(bad, 120, "symbol:amenity=bank")
    with pytest.raises(RenderStackError, match="120x120"):
        checked_png(buf.getvalue(), 240, "line:highway=residential")


def _hand_legend(folder: Path):
    """A LegendSet of three drawn images (no Mapnik needed to test the embeddings' cache)."""
    from symbols.store import LegendSet

    images = {}
    for n, colour in enumerate(("#734a08", "#0092da", "#c77400")):
        im = Image.new("RGB", (120, 120), (0xF2, 0xEF, 0xE9))
        ImageDraw.Draw(im).ellipse((30 + n * 5, 30, 90, 90), fill=colour)
        p = folder / f"{n}.png"
        im.save(p)
        images[f"symbol:k=v{n}"] = p
    return LegendSet(
        folder=folder,
        key="hand",
        style_version="5.7.0",
        schema_version="0",
        entries={},
        images=images,
        dropped={},
        classes=[],
    )


@pytest.mark.filterwarnings("ignore:CLIP IS RUNNING WITH RANDOM WEIGHTS")
@pytest.mark.parametrize("kind", CORRUPT)
def test_bad_clip_embeddings_are_computed_again_with_a_warning(tmp_path, kind, caplog):
    pytest.importorskip("open_clip", reason="open_clip is an extra: pip install -e '.[symbols]'")
    from symbols.embed import ClipWeights
    from symbols.store import load_embeddings

    legend = _hand_legend(tmp_path)
    weights = ClipWeights(random_weights=True, seed=1)
    good, info = load_embeddings(legend, weights)
    assert info["cached"] is False
    (npz,) = tmp_path.glob("clip-*.npz")
    npz.write_bytes(CORRUPT[kind](npz.read_bytes()))
    caplog.set_level(logging.WARNING)
    again, info = load_embeddings(legend, weights)
    assert info["cached"] is False
    assert sorted(again) == sorted(good)
    assert all(np.allclose(again[k], good[k], atol=1e-6) for k in good)
    assert str(npz) in caplog.text
    _, info = load_embeddings(legend, weights)
    assert info["cached"] is True
