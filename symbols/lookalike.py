"""Look-alike classes of legend images: features the style draws identically or too close to
tell apart, never two options of one MFS question (issue 16, item 3).

    classes = lookalike_classes(legend.images)      # [{"line:highway=residential", ...}, ...]

The distance of two legend images of one category is the mean, over the
pixels either draws (those more than ``DRAWN`` from the map's background in
some channel), of the largest channel difference between them, 0-255: a
flat measure of how different they look where they draw anything (a mean
over the whole image would make a thin line look like the background).
Two images closer than their category's threshold are look-alikes, and
look-alikes join into classes (transitively). The thresholds were read off
the whole catalogue's distances (one run, 372 images): identical renders
are at 0-0.01; symbols next differ at 60 and more, so 2; lines have tram,
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
    "THRESHOLDS",
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
    stack = np.stack([a.reshape(-1, 3) for a in arrays]).astype(np.int16)  # (n, pixels, 3)
    bg = np.asarray(BACKGROUND, dtype=np.int16)
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
        for i, j in close_pairs([_load(images[k]) for k in mine], limit):
            parent[find(mine[i])] = find(mine[j])
    groups: dict[str, set[str]] = {}
    for k in keys:
        groups.setdefault(find(k), set()).add(k)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: sorted(g))
