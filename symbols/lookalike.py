"""Look-alike classes of legend images: features the style draws identically or too close to
tell apart, never two options of one MFS question (issue 16, item 3).

    classes = lookalike_classes(legend.images)      # [{"line:highway=residential", ...}, ...]

The distance of two legend images of one category is the mean, over the
pixels either draws (those more than ``DRAWN`` from the map's background in
some channel), of the largest channel difference between them, 0-255: a
flat measure of how different they look where they draw anything (a mean
over the whole image would make a thin line look like the background).
Symbols are compared as a map shows them: each centred on the box of the
pixels it draws (two icon files can draw one glyph a pixel apart, as
``railway=crossing`` and ``level_crossing`` do) and averaged down by the
legend's scale factor, 3, to the map's own pixels (where details too small
to see there, ``shop=kiosk`` against ``newsagent``, vanish). Lines and areas
fill their cell and are compared as drawn.
Two images closer than their category's threshold are look-alikes, and
look-alikes join into classes (transitively). The thresholds were read off
the whole catalogue's distances (one run, 372 images): identical renders
are at 0-0.01; symbols, as seen on the map, next differ at 27 (mast and
tower), so 2; lines have tram,
light rail and narrow gauge at 6.5 and the next pair (living street and
residential) at 15, so 8; area fills run on a continuum (forest and wood at
2.1, grass and garden at 2.2, cemetery and grave yard at 2.5, water and salt
pond at 3.1), so 5, which a person reading a small patch of colour cannot
tell apart either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "BACKGROUND",
    "DRAWN",
    "MAP_SCALE",
    "THRESHOLDS",
    "as_seen",
    "close_pairs",
    "image_distance",
    "lookalike_classes",
]

#: the map's background colour (openstreetmap-carto's land)
BACKGROUND = (0xF2, 0xEF, 0xE9)
#: a pixel more than this (in some channel) from the background is drawn
DRAWN = 8
#: category -> the distance under which two images are look-alikes
THRESHOLDS = {"symbol": 2.0, "line": 8.0, "area": 5.0}
#: category -> the legend's scale factor, undone before comparing (``symbols.legend``)
MAP_SCALE = {"symbol": 3}


def as_seen(a: np.ndarray, category: str) -> np.ndarray:
    """An image (RGB array) as it is compared: a symbol centred on the box of its drawn
    pixels and averaged down by ``MAP_SCALE``; lines and areas unchanged."""
    factor = MAP_SCALE.get(category)
    if factor is None:
        return a
    bg = np.asarray(BACKGROUND, dtype=a.dtype)
    drawn = np.abs(a - bg).max(axis=2) > DRAWN
    out = np.empty_like(a)
    out[:] = bg
    if drawn.any():
        ys, xs = np.nonzero(drawn)
        h, w = drawn.shape
        dy = int(np.floor(h / 2 - (ys.min() + ys.max() + 1) / 2))
        dx = int(np.floor(w / 2 - (xs.min() + xs.max() + 1) / 2))
        src = a[max(0, -dy) : h - max(0, dy), max(0, -dx) : w - max(0, dx)]
        out[max(0, dy) : max(0, dy) + src.shape[0], max(0, dx) : max(0, dx) + src.shape[1]] = src
    h, w = (d - d % factor for d in out.shape[:2])
    blocks = out[:h, :w].reshape(h // factor, factor, w // factor, factor, 3)
    return blocks.mean(axis=(1, 3))


def _load(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float32)


def image_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The look distance of two legend images (RGB arrays of one size), 0-255."""
    bg = np.asarray(BACKGROUND, dtype=np.float32)
    drawn = (np.abs(a - bg).max(axis=2) > DRAWN) | (np.abs(b - bg).max(axis=2) > DRAWN)
    if not drawn.any():
        return 0.0
    return float(np.abs(a - b).max(axis=2)[drawn].mean())


def close_pairs(arrays: Sequence[np.ndarray], limit: float) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, of ``arrays`` (RGB images of one size) whose
    ``image_distance`` is under ``limit``: one image against all later ones at a time."""
    if not arrays:
        return []
    stack = np.stack([a.reshape(-1, 3) for a in arrays]).astype(np.float32)  # (n, pixels, 3)
    bg = np.asarray(BACKGROUND, dtype=np.float32)
    drawn = np.abs(stack - bg).max(axis=2) > DRAWN  # (n, pixels)
    pairs = []
    for i in range(len(arrays) - 1):
        union = drawn[i] | drawn[i + 1 :]  # (n - i - 1, pixels)
        diff = np.abs(stack[i + 1 :] - stack[i]).max(axis=2)
        counts = union.sum(axis=1)
        sums = np.where(union, diff, 0).sum(axis=1)
        distance = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        pairs += [(i, i + 1 + int(j)) for j in np.flatnonzero(distance < limit)]
    return pairs


def lookalike_classes(
    images: Mapping[str, Path], thresholds: Mapping[str, float] = THRESHOLDS
) -> list[set[str]]:
    """The look-alike classes (of two or more) among ``images`` ("category:key" -> PNG),
    sorted; a feature alone in its look is in no class."""
    keys = sorted(images)
    parent = {k: k for k in keys}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for category in sorted({k.split(":", 1)[0] for k in keys}):
        mine = [k for k in keys if k.split(":", 1)[0] == category]
        limit = thresholds[category]
        for i, j in close_pairs([as_seen(_load(images[k]), category) for k in mine], limit):
            parent[find(mine[i])] = find(mine[j])
    groups: dict[str, set[str]] = {}
    for k in keys:
        groups.setdefault(find(k), set()).add(k)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: sorted(g))
