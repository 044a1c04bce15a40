"""Datasets for the model and runner tests: one sample of every ground-truth kind, with images."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw

from cartoqa.records import (
    BooleanTruth,
    ChoiceTruth,
    CoordinateTruth,
    CountTruth,
    FeatureCount,
    FeatureTableTruth,
    GroupingTruth,
    IndicesTruth,
    Metadata,
    NamesTruth,
    NumberTruth,
    Prompt,
    Provenance,
    RoadPairTruth,
    RouteTruth,
    Sample,
    TextTruth,
    ValuesTruth,
)
from cartoqa.stores import DatasetWriter, load_dataset

PROV = Provenance(generator="tests", seed=0)

# (task, ground truth, question) covering every kind, and tasks with their own answer layout
CASES = [
    ("distance", NumberTruth(value=1234.567, unit="km", equivalents={"mi": 767.123}), "How far?"),
    ("stmf_count", CountTruth(value=3, feature_type="bank"), "How many banks are on the map?"),
    ("rle", NumberTruth(value=412.5, unit="m"), "How long is the blue path, in metres?"),
    ("stmf_presence", BooleanTruth(value=False), "Is there a hospital on the map?"),
    (
        "mfs",
        ChoiceTruth(answer="C", options={"A": "bank", "B": "school", "C": "cafe", "D": "atm"}),
        "Which feature is the symbol?",
    ),
    (
        "place_association",
        TextTruth(answer="Zürich", accepted=["Zurich"]),
        "Which city is at 47.37, 8.54?",
    ),
    ("interpolation", CoordinateTruth(lat=-33.868, lon=151.2093), "Where is the midpoint?"),
    (
        "coordinate_transformation",
        ValuesTruth(
            values={"easting": 448251.9, "northing": 5411932.7},
            tolerances={"easting": 10, "northing": 10},
        ),
        "UTM of the point?",
    ),
    (
        "stmf_names",
        NamesTruth(names=["Main Street Cafe", "", "Café Noir"]),
        "Name the cafes on the map.",
    ),
    (
        "mtmf",
        FeatureTableTruth(
            features={
                "bank": FeatureCount(count=2, names=["Nordea", ""]),
                "atm": FeatureCount(count=0),
            }
        ),
        "Count every type.",
    ),
    (
        "mml",
        RoadPairTruth(road_1="Rue Grimaldi", road_2="Boulevard Albert 1er"),
        "Which roads meet at the red marker?",
    ),
    (
        "srn",
        RouteTruth(
            steps=["blue", "turn left", "Rue Grimaldi", "turn right", "Quai Antoine 1er", "red"]
        ),
        "Route from blue to red?",
    ),
    ("route_geometry_indices", IndicesTruth(indices=[0, 2, 5]), "Which points does RDP keep?"),
    (
        "boundary_analysis",
        GroupingTruth(groups={"Europe": ["Paris", "Oslo"], "Asia": ["Tokyo"]}),
        "Group Paris, Oslo and Tokyo by continent.",
    ),
]


def png(seed: int, size: tuple[int, int] = (96, 64)) -> bytes:
    """A small PNG that differs by seed."""
    im = Image.new("RGB", size, (240, 240, 230))
    d = ImageDraw.Draw(im)
    d.rectangle((seed % 50, 5, seed % 50 + 30, 40), fill=(30, 60, 200))
    d.line((0, 60, 95, seed % 64), fill=(200, 30, 30), width=3)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def kinds_dataset(folder: Path, *, copies: int = 1, images: bool = True):
    """Every case ``copies`` times; map tasks get an image each."""
    with DatasetWriter(folder, name="kinds", overwrite=True) as w:
        n = 0
        for c in range(copies):
            for task, truth, question in CASES:
                sid = f"{task}-{c:03d}"
                imgs = []
                if images and task in (
                    "stmf_count",
                    "rle",
                    "stmf_presence",
                    "mfs",
                    "stmf_names",
                    "mtmf",
                    "mml",
                    "srn",
                ):
                    imgs = [w.add_image(f"{sid}.png", png(n))]
                w.add(
                    Sample(
                        id=sid,
                        task=task,
                        prompt=Prompt(
                            text=f"[{sid}] {question}", system="Answer briefly.", images=imgs
                        ),
                        ground_truth=truth,
                        metadata=Metadata(difficulty="easy"),
                        provenance=PROV,
                    )
                )
                n += 1
        w.finish(seeds=[0])
    return load_dataset(folder)


def text_dataset(folder: Path, n: int, *, name: str = "text"):
    """``n`` distance questions with no images."""
    with DatasetWriter(folder, name=name, overwrite=True) as w:
        for i in range(n):
            w.add(
                Sample(
                    id=f"q-{i:04d}",
                    task="distance",
                    prompt=Prompt(text=f"[q-{i:04d}] How far apart are A{i} and B{i}?"),
                    ground_truth=NumberTruth(value=100.0 + i, unit="km"),
                    provenance=PROV,
                )
            )
        w.finish(seeds=[0])
    return load_dataset(folder)
