"""The ``ocr`` baseline: Tesseract reads a drawn map's labels and answers the name questions
in their formats; chrome text is dropped, other kinds declined, failures reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from cartoqa.errors import ModelError
from cartoqa.models import Request, load_model
from cartoqa.models import ocr as ocr_module
from cartoqa.models.ocr import DECLINE, OcrModel, read_labels
from cartoqa.records import (
    BooleanTruth,
    FeatureCount,
    FeatureTableTruth,
    Metadata,
    NamesTruth,
    Prompt,
    Provenance,
    Sample,
)

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="tesseract not installed (apt-get install tesseract-ocr tesseract-ocr-eng)",
)

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
#: (text, top-left, colour): the map's label colours on its fills
LABELS = [
    ("Café Noir", (60, 60), (172, 57, 172)),
    ("Main Street", (330, 70), (60, 60, 60)),
    ("Bakery", (560, 150), (115, 74, 8)),
    ("Hermitage", (90, 220), (0, 146, 218)),
    ("Pharmacy", (420, 260), (40, 40, 40)),
]
WANT = [text for text, _, _ in LABELS]
REAL_MAP = Path("/tmp/poi/view.png")


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if FONT.exists():
        return ImageFont.truetype(str(FONT), size)
    return ImageFont.load_default(size)


def _map_image(path: Path) -> Path:
    """A map-like picture: fills, a road, icons, labels, the attribution and scale bar."""
    im = Image.new("RGB", (760, 420), (242, 239, 233))
    d = ImageDraw.Draw(im)
    d.rectangle((20, 20, 300, 140), fill=(217, 208, 201))  # a building
    d.rectangle((380, 200, 700, 330), fill=(200, 250, 204))  # a park
    d.line((0, 185, 760, 170), fill=(252, 214, 164), width=18)  # a road
    for text, (x, y), colour in LABELS:
        d.ellipse((x + 20, y - 22, x + 34, y - 8), fill=colour)  # its icon
        d.text((x, y), text, fill=colour, font=_font(15))
    d.text((450, 398), "Leaflet | © OpenStreetMap contributors", fill=(30, 30, 30), font=_font(13))
    d.rectangle((6, 390, 96, 410), outline=(50, 50, 50))
    d.text((10, 392), "20 m", fill=(30, 30, 30), font=_font(13))
    im.save(path)
    return path


#: a task of each truth kind used (the model never reads the task, only the truth's kind)
TASKS = {"names": "stmf_names", "feature_table": "mtmf", "boolean": "stmf_presence"}


def _request(truth, images: tuple[Path, ...], rid: str = "s1") -> Request:
    sample = Sample(
        id=rid,
        task=TASKS[truth.kind],
        prompt=Prompt(text="Which names does the map show?"),
        ground_truth=truth,
        metadata=Metadata(),
        provenance=Provenance(generator="tests", seed=0),
    )
    return Request(id=rid, text=sample.prompt.text, images=images, sample=sample)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> Path:
    return _map_image(tmp_path_factory.mktemp("ocr") / "map.png")


@needs_tesseract
def test_it_reads_most_labels_and_drops_the_chrome(drawn):
    labels = read_labels(drawn)
    got = {x.casefold() for x in labels}
    hits = [w for w in WANT if w.casefold() in got]
    assert len(hits) >= 4, labels
    assert "Main Street" in labels, labels  # two words, one label
    assert "Café Noir" in labels, labels  # an accent
    text = " ".join(labels).lower()
    for chrome in ("leaflet", "openstreetmap", "contributors", "20 m"):
        assert chrome not in text, labels


@needs_tesseract
def test_names_answer_one_a_line_and_none_when_nothing_is_read(drawn, tmp_path):
    model = load_model("ocr")
    assert model.spec == "ocr"
    blank = tmp_path / "blank.png"
    Image.new("RGB", (300, 200), (242, 239, 233)).save(blank)
    truth = NamesTruth(names=["Café Noir"])
    out = model.generate([_request(truth, (drawn,)), _request(truth, (blank,), "s2")])
    assert all(r.ok for r in out), out
    lines = out[0].text.splitlines()
    assert sum(w in lines for w in WANT) >= 4, lines
    assert out[1].text == "None"
    model.close()


@needs_tesseract
def test_a_feature_table_gets_every_key_count_0_and_the_names_under_the_first(drawn):
    truth = FeatureTableTruth(
        features={"cafe": FeatureCount(count=1, names=["Café Noir"]), "bank": FeatureCount(count=0)}
    )
    [r] = OcrModel().generate([_request(truth, (drawn,))])
    table = json.loads(r.text)
    assert list(table) == ["cafe", "bank"]
    assert all(v["count"] == 0 for v in table.values())
    assert table["bank"]["names"] == []
    assert sum(w in table["cafe"]["names"] for w in WANT) >= 4, table


@needs_tesseract
def test_other_kinds_are_declined_without_reading(tmp_path):
    missing = tmp_path / "not-there.png"  # never opened
    [r] = OcrModel().generate([_request(BooleanTruth(value=True), (missing,))])
    assert r.ok and r.text == DECLINE


@needs_tesseract
def test_a_corrupt_image_is_an_error_response_not_a_crash(drawn, tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really a png")
    truth = NamesTruth(names=["Bakery"])
    out = OcrModel().generate([_request(truth, (bad,), "bad"), _request(truth, (drawn,), "good")])
    assert not out[0].ok and out[0].text is None and "bad.png" in out[0].error
    assert out[1].ok


def test_missing_tesseract_names_the_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ModelError, match="apt-get install tesseract-ocr tesseract-ocr-eng"):
        OcrModel()
    monkeypatch.setattr(ocr_module, "TESSERACT", "no-such-tesseract")
    with pytest.raises(ModelError, match=r"scripts/setup\.sh test"):
        load_model("ocr")


@needs_tesseract
@pytest.mark.skipif(not REAL_MAP.exists(), reason=f"no rendered map at {REAL_MAP}")
def test_a_real_zoom_19_map(capsys):
    """Reads a rendered Monaco view (present only where one was rendered): prints what."""
    labels = read_labels(REAL_MAP)
    with capsys.disabled():
        print(f"\nocr read {len(labels)} labels on {REAL_MAP}: {labels}")
    assert len(labels) >= 5
