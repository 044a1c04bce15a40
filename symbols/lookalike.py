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

Two further rules catch what a mean over the drawn pixels misses
(``near_pairs``); they pair features, not classes, since a chain of small
steps would join fills anyone can tell apart:

- **near tints** (areas): two flat fills (no pattern in the middle third of
  the image, which lies inside the square) whose colours are under
  ``TINT_DELTA_E`` apart in CIELAB (CIE76): residential ``#e0dfdf``, apron
  ``#dadae0`` and religious ``#d0d0d0`` are 3.6-5.4 apart; without anything
  beside it to compare with, a grey square is any of them;
- **width only** (lines): two lines of one colour each (under
  ``TINT_DELTA_E`` apart: a faint tint counts as the same colour) on the same
  path, whose widths differ by at most ``WIDTH_PX`` pixel on the map in
  nearly every column (stream and drain: 1 px; the legend draws every line in
  a frame of one size, so no scale tells the widths apart).

A look-alike class is named by its most typical member (``class_medoids``:
the members whose image is closest to the rest; then ``symbols.typical``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "BACKGROUND",
    "DRAWN",
    "LINE_SCALE",
    "MAP_SCALE",
    "THRESHOLDS",
    "TINT_DELTA_E",
    "WIDTH_PX",
    "as_seen",
    "class_medoids",
    "close_pairs",
    "delta_e",
    "flat_fill",
    "image_distance",
    "line_look",
    "lookalike_classes",
    "near_fills",
    "near_lines",
    "near_pairs",
]

#: the map's background colour (openstreetmap-carto's land)
BACKGROUND = (0xF2, 0xEF, 0xE9)
#: a pixel more than this (in some channel) from the background is drawn
DRAWN = 8
#: category -> the distance under which two images are look-alikes
THRESHOLDS = {"symbol": 2.0, "line": 8.0, "area": 5.0}
#: category -> the legend's scale factor, undone before comparing (``symbols.legend``)
MAP_SCALE = {"symbol": 3}
#: CIE76 colour difference under which two flat fills (or two lines' inks) look alike
TINT_DELTA_E = 6.0
#: the largest difference of width, in map pixels, of two lines that look alike
WIDTH_PX = 1.0
#: the legend's scale factor for lines (``symbols.legend``): legend pixels per map pixel
LINE_SCALE = 2
#: a fill is flat when no channel of its middle third varies more than this (std, 0-255)
FLAT_STD = 2.0
#: members of a class whose mean distance to the others is within this of the least are
#: equally typical of its look (identical renders differ by 0-0.1: sub-pixel placement)
MEDOID_SLACK = 0.5


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


def delta_e(a: np.ndarray, b: np.ndarray) -> float:
    """The CIE76 colour difference of two sRGB colours (0-255 channels)."""
    return float(np.linalg.norm(_lab(np.asarray(a, dtype=np.float64)) - _lab(np.asarray(b))))


def _lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB (0-255, last axis) to CIELAB (D65)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    )
    xyz = c @ m.T / np.array([0.95047, 1.0, 1.08883])
    e = 6 / 29
    f = np.where(xyz > e**3, np.cbrt(xyz), xyz / (3 * e**2) + 4 / 29)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])],
        axis=-1,
    )


def flat_fill(a: np.ndarray) -> np.ndarray | None:
    """The colour of an area image's fill when it is flat (no pattern in the middle third
    of the image, inside the square), else None."""
    h, w = a.shape[:2]
    middle = a[h // 3 : h - h // 3, w // 3 : w - w // 3].reshape(-1, 3).astype(np.float64)
    if middle.size == 0 or float(middle.std(axis=0).max()) > FLAT_STD:
        return None
    return middle.mean(axis=0)


_LineLook = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(ink colour, drawn mask, drawn pixels per column) of a one-colour line."""


def _grow(mask: np.ndarray, k: int = 1) -> np.ndarray:
    """``mask`` dilated by ``k`` pixels (a square neighbourhood)."""
    padded = np.pad(mask, k)
    h, w = mask.shape
    out = np.zeros_like(mask)
    for dy in range(2 * k + 1):
        for dx in range(2 * k + 1):
            out |= padded[dy : dy + h, dx : dx + w]
    return out


def line_look(a: np.ndarray) -> _LineLook | None:
    """(ink colour, drawn mask, drawn pixels per column) of a line image drawn in one
    colour (its pixels a pixel away from its edge all within ``DRAWN`` of their median),
    else None (a cased road, a dashed track with ties...)."""
    bg = np.asarray(BACKGROUND, dtype=np.float32)
    mask = np.abs(a - bg).max(axis=2) > DRAWN
    if not mask.any():
        return None
    core = ~_grow(~mask, 1)
    if not core.any():
        core = mask
    ink = np.median(a[core], axis=0)
    if float(np.percentile(np.abs(a[core] - ink).max(axis=1), 90)) > DRAWN:
        return None
    return ink, mask, mask.sum(axis=0)


def near_fills(fa: np.ndarray | None, fb: np.ndarray | None) -> bool:
    """Whether two flat fills (``flat_fill``) are near tints (under ``TINT_DELTA_E``)."""
    return fa is not None and fb is not None and delta_e(fa, fb) < TINT_DELTA_E


def near_lines(la: _LineLook | None, lb: _LineLook | None, *, scale: int = LINE_SCALE) -> bool:
    """Whether two one-colour lines (``line_look``) differ only by width (at most
    ``WIDTH_PX`` map pixels, in 97 % of the columns either draws) or a faint tint: one
    colour within ``TINT_DELTA_E``, the thinner inside the thicker grown by a pixel."""
    if la is None or lb is None or delta_e(la[0], lb[0]) >= TINT_DELTA_E:
        return False
    (_, thin, t_thin), (_, thick, t_thick) = sorted((la, lb), key=lambda look: look[1].sum())
    if (thin & _grow(thick, 1)).sum() < 0.97 * thin.sum():
        return False  # not the same path
    columns = (t_thin > 0) | (t_thick > 0)
    wider = (t_thick - t_thin)[columns].astype(np.int64)
    slack = WIDTH_PX * scale + 1  # a pixel of anti-aliasing
    return float(((wider >= -1) & (wider <= slack)).mean()) >= 0.97


def near_pairs(images: Mapping[str, Path]) -> list[tuple[str, str]]:
    """The sorted pairs (a < b) of ``images`` ("category:key" -> PNG) that are near tints
    (areas) or differ only by width or a faint tint (lines); symbols have no such pairs."""
    keys = sorted(images)
    areas = [k for k in keys if k.startswith("area:")]
    lines = [k for k in keys if k.startswith("line:")]
    fills = {k: flat_fill(_load(images[k])) for k in areas}
    looks = {k: line_look(_load(images[k])) for k in lines}
    out = [
        (a, b)
        for i, a in enumerate(areas)
        for b in areas[i + 1 :]
        if near_fills(fills[a], fills[b])
    ]
    out += [
        (a, b)
        for i, a in enumerate(lines)
        for b in lines[i + 1 :]
        if near_lines(looks[a], looks[b])
    ]
    return sorted(out)


def class_medoids(
    images: Mapping[str, Path], classes: Sequence[set[str] | frozenset[str]]
) -> list[set[str]]:
    """For each class, the members whose image is, on mean, closest to the other members'
    (within ``MEDOID_SLACK``): the ones that show the class's look best (a grass fill,
    not the garden whose dots are faint enough to join it)."""
    out: list[set[str]] = []
    for members in classes:
        keys = sorted(members)
        category = keys[0].split(":", 1)[0]
        arrays = [as_seen(_load(images[k]), category) for k in keys]
        n = len(keys)
        d = np.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                d[i, j] = d[j, i] = image_distance(arrays[i], arrays[j])
        mean = list(d.sum(axis=1) / max(n - 1, 1))
        best = min(mean)
        out.append({k for k, d in zip(keys, mean, strict=True) if d <= best + MEDOID_SLACK})
    return out
