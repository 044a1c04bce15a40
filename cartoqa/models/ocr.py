"""An OCR baseline, ``ocr``: it reads the map's text with Tesseract and answers from that.

It answers only the questions that ask for names: a names truth gets every label read,
one a line (``None`` when nothing was read); a feature table gets every type the truth
asks about with count 0 and every label read under the first type (the table's names are
pooled over types when scored, so this measures reading alone).  Anything else gets
``DECLINE``, which scores as unreadable.  OCR is a baseline, never ground truth: the truths
come from the renderer.

Tesseract is the Debian binary (``apt-get install tesseract-ocr tesseract-ocr-eng``, or
``bash scripts/setup.sh test``), run once per image by subprocess.  Each image is read as
its darkest channel (the map's coloured labels turn dark, its pale fills stay light),
upscaled ``SCALE`` times, each pixel made black where it is darker than ``CONTRAST`` of
its surrounding fill (so a label on a road, a park or a building reads alike), and read
in sparse-text mode (``--psm 11``).  The words are grouped into lines by Tesseract's
block, paragraph and line numbers and by their gaps, stacked lines of one label
(``Palais`` / ``de la`` / ``Scala``) are joined, and junk is dropped: words under
``MIN_CONFIDENCE``, strings with too few letters (a lone letter, an icon read as one),
the map's own chrome (the attribution, the scale bar's ``20 m`` and ``50 ft``).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageChops, ImageFilter

from cartoqa.errors import ModelError
from cartoqa.records import FeatureTableTruth, NamesTruth

from ._types import Request
from .baselines import _Baseline, _sample

__all__ = ["DECLINE", "INSTALL_HINT", "OcrModel", "read_labels"]

#: the answer to a question that does not ask for names
DECLINE = "OCR reads names only; it cannot answer this question."
INSTALL_HINT = (
    "apt-get install tesseract-ocr tesseract-ocr-eng (or bash scripts/setup.sh test, "
    "which installs it)"
)
#: the Tesseract binary: a name looked up on PATH, or a path
TESSERACT = "tesseract"
#: how many times each image is enlarged before reading (map labels are ~11 px high)
SCALE = 3
#: a pixel darker than this share of its surrounding fill is text
CONTRAST = 0.68
#: the width in pixels of the neighbourhood whose lightest pixel is the fill
BACKGROUND_PX = 9
#: Tesseract's page segmentation mode: 11, sparse text in no particular order
PSM = 11
#: words Tesseract is less sure of than this (0-100) are dropped
MIN_CONFIDENCE = 60.0
#: seconds one image may take
TIMEOUT_S = 120.0

#: the map page's own text: the attribution line and the scale bar
_CHROME_WORDS = {"leaflet", "openstreetmap", "contributors", "©"}
_SCALE_BAR = re.compile(r"^\W*\d+\s*(?:m|km|ft|mi|yd)\W*$", re.IGNORECASE)
_LETTER = re.compile(r"[^\W\d_]")
_EDGE_JUNK = re.compile(r"^[^\w(]+|[^\w).]+$")
_LABEL_EDGES = re.compile(r"^[^\w(]+|[^\w)]+$")


@dataclass
class _Word:
    text: str
    left: int
    top: int
    width: int
    height: int

    @property
    def right(self) -> int:
        return self.left + self.width

    @property
    def bottom(self) -> int:
        return self.top + self.height


@dataclass
class _Line:
    words: list[_Word]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def left(self) -> int:
        return min(w.left for w in self.words)

    @property
    def right(self) -> int:
        return max(w.right for w in self.words)

    @property
    def top(self) -> int:
        return min(w.top for w in self.words)

    @property
    def bottom(self) -> int:
        return max(w.bottom for w in self.words)

    @property
    def height(self) -> int:
        return max(w.height for w in self.words)


def _prepared(path: Path) -> bytes:
    """The image as Tesseract reads it best (measured on a zoom-19 map): the darkest of its
    channels, enlarged ``SCALE`` times, black text on white."""
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    r, g, b = rgb.split()
    dark = ImageChops.darker(ImageChops.darker(r, g), b)
    # the fill around each pixel: its lightest neighbour (map text strokes are 1-2 px)
    fill = dark.filter(ImageFilter.MaxFilter(BACKGROUND_PX))
    if SCALE != 1:
        size = (dark.width * SCALE, dark.height * SCALE)
        dark = dark.resize(size, Image.Resampling.LANCZOS)
        fill = fill.resize(size, Image.Resampling.BILINEAR)
    text = np.asarray(dark, dtype=np.float32) < CONTRAST * np.asarray(fill, dtype=np.float32)
    bw = Image.fromarray(np.where(text, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    bw.save(buf, "PNG")
    return buf.getvalue()


def _words(tsv: str) -> list[tuple[tuple[int, int, int], _Word]]:
    """(block, paragraph, line) and word for each confident word of Tesseract's TSV."""
    out = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) != 12 or cols[0] != "5":
            continue
        text = _EDGE_JUNK.sub("", cols[11].strip()).replace("[", "(").replace("]", ")")
        try:
            conf = float(cols[10])
            left, top, width, height = (int(c) for c in cols[6:10])
        except ValueError:
            continue
        if conf < MIN_CONFIDENCE or not text or not any(c.isalnum() for c in text):
            continue
        key = (int(cols[2]), int(cols[3]), int(cols[4]))
        out.append((key, _Word(text, left, top, width, height)))
    return out


def _lines(words: list[tuple[tuple[int, int, int], _Word]]) -> list[_Line]:
    """Words of one Tesseract line, split where a gap is wider than the line is high."""
    by_key: dict[tuple[int, int, int], list[_Word]] = {}
    for key, word in words:
        by_key.setdefault(key, []).append(word)
    lines = []
    for group in by_key.values():
        group.sort(key=lambda w: w.left)
        current = [group[0]]
        for word in group[1:]:
            height = max(w.height for w in current)
            if word.left - current[-1].right > 1.2 * height:
                lines.append(_Line(current))
                current = []
            current.append(word)
        lines.append(_Line(current))
    return lines


def _stacked(upper: _Line, lower: _Line) -> bool:
    """Whether ``lower`` continues ``upper``'s label: just below it, of about its height,
    and centred under it (the map centres a wrapped name's lines)."""
    h = max(upper.height, lower.height)
    if not 0.6 < upper.height / lower.height < 1.6:
        return False
    gap = lower.top - upper.bottom
    if not -0.3 * h <= gap <= 1.0 * h:
        return False
    centre_gap = abs((upper.left + upper.right) - (lower.left + lower.right)) / 2
    return centre_gap <= max(
        1.5 * h, 0.25 * max(upper.right - upper.left, lower.right - lower.left)
    )


def _labels(lines: list[_Line]) -> list[str]:
    """Lines joined into labels, top to bottom: each line goes under the nearest label it
    continues."""
    labels: list[list[_Line]] = []
    # a line of lone characters is a symbol read as a letter, not part of a name
    kept = (
        ln
        for ln in lines
        if not _chrome(ln.text) and max(len(_LETTER.findall(w.text)) for w in ln.words) >= 2
    )
    for line in sorted(kept, key=lambda ln: (ln.top, ln.left)):
        for label in labels:
            if _stacked(label[-1], line):
                label.append(line)
                break
        else:
            labels.append([line])
    out = []
    for label in labels:
        text = _LABEL_EDGES.sub("", " ".join(ln.text for ln in label))
        if _junk(text):
            continue
        out.append(text)
    return out


def _chrome(text: str) -> bool:
    """The attribution line or a scale-bar text (a word that is the start or end, five
    letters or more, of an attribution word counts: ``ontributors``; ``Street`` does not)."""
    for word in text.lower().split():
        word = word.strip(".,|")
        if word in _CHROME_WORDS or (
            len(word) >= 5 and any(c.startswith(word) or c.endswith(word) for c in _CHROME_WORDS)
        ):
            return True
    return bool(_SCALE_BAR.match(text))


def _junk(text: str) -> bool:
    """Too little to be a name: a single word of under three letters, no word of two, or
    a short lowercase scrap (map names start with a capital; a piece of a rotated label
    rarely does)."""
    words = text.split()
    letters = _LETTER.findall(text)
    if len(letters) < (3 if len(words) == 1 else 2):
        return True
    if max(len(_LETTER.findall(w)) for w in words) < 2:
        return True
    return len(letters) < 4 and not letters[0].isupper()


def read_labels(path: Path, *, binary: str = TESSERACT, timeout_s: float = TIMEOUT_S) -> list[str]:
    """The labels Tesseract reads on one image, top to bottom.

    Raises ``OSError`` when the image cannot be read and ``RuntimeError`` when Tesseract
    fails on it.
    """
    try:
        data = _prepared(path)
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise OSError(f"cannot read image {path}: {exc}") from None
    # one thread per Tesseract: the runner already reads several images at once
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            [binary, "stdin", "stdout", "--psm", str(PSM), "-l", "eng", "tsv"],
            input=data,
            capture_output=True,
            timeout=timeout_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"tesseract took over {timeout_s:g} s on {path}") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(
            f"tesseract failed on {path} (exit {done.returncode}): {' '.join(err[-3:])}"
        )
    return _labels(_lines(_words(done.stdout.decode("utf-8", "replace"))))


class OcrModel(_Baseline):
    """Answers name questions with the labels Tesseract reads on the map (module docstring).

    ``binary`` is the Tesseract executable (``TESSERACT`` by default); a missing one
    raises ``ModelError`` naming the install.
    """

    spec = "ocr"
    batch_size = 8
    thread_safe = True
    failures = (OSError, RuntimeError)

    def __init__(self, *, binary: str | None = None, timeout_s: float = TIMEOUT_S) -> None:
        name = binary or TESSERACT
        found = shutil.which(name)
        if found is None:
            raise ModelError(
                f"the ocr baseline needs Tesseract ({name!r} not found): {INSTALL_HINT}"
            )
        self.binary = found
        self.timeout_s = timeout_s
        self._cache: dict[tuple[str, int, int], list[str]] = {}
        self._lock = threading.Lock()

    def _read(self, path: Path) -> list[str]:
        """An image's labels, remembered by path, size and time (samples share views)."""
        st = Path(path).stat()
        key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        labels = read_labels(Path(path), binary=self.binary, timeout_s=self.timeout_s)
        with self._lock:
            self._cache[key] = labels
        return labels

    def _answer(self, request: Request) -> str:
        truth = _sample(request, self.spec).ground_truth
        if not isinstance(truth, NamesTruth | FeatureTableTruth):
            return DECLINE
        labels = [label for path in request.images for label in self._read(path)]
        if isinstance(truth, NamesTruth):
            return "\n".join(labels) if labels else "None"
        table = {
            key: {"count": 0, "names": labels if i == 0 else []}
            for i, key in enumerate(truth.features)
        }
        return json.dumps(table, ensure_ascii=False)

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
