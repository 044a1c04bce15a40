"""Datasets for the review tool's tests: the kinds dataset of the model tests, and one whose
OSM names, question and city are hostile HTML."""

from __future__ import annotations

from pathlib import Path

from cartoqa.records import (
    Metadata,
    NamesTruth,
    Prompt,
    RoadPairTruth,
    RouteTruth,
    Sample,
)
from cartoqa.stores import DatasetWriter, load_dataset
from tests.cartoqa.model_data import PROV, png

XSS = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>window.__pwned = 1; alert(2)</script>"
ATTR = '"><svg onload=alert(3)>'


def hostile_dataset(folder: Path):
    """Three map samples whose names, question and city are markup."""
    with DatasetWriter(folder, name=f"hostile {XSS}", overwrite=True) as w:
        truths = {
            "mml-000": RoadPairTruth(road_1=XSS, road_2=f"Rue {ATTR}"),
            "srn-000": RouteTruth(steps=["blue", "turn left", XSS, "turn right", SCRIPT, "red"]),
            "stmf_names-000": NamesTruth(names=[XSS, SCRIPT]),
        }
        for n, (sid, truth) in enumerate(truths.items()):
            image = w.add_image(f"{sid}.png", png(n, (320, 200)))
            w.add(
                Sample(
                    id=sid,
                    task=sid.split("-")[0],
                    prompt=Prompt(text=f"Which roads? {SCRIPT} {XSS}", images=[image]),
                    ground_truth=truth,
                    metadata=Metadata(city=f"Nice {ATTR}", zoom=17),
                    provenance=PROV,
                )
            )
        w.finish(seeds=[0])
    return load_dataset(folder)
