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


def rle_pair_dataset(folder: Path):
    """One RLE map asked in metres and in feet (the generator's ``-m`` / ``-ft`` twins), and
    a third RLE map asked in metres only."""
    from cartoqa.records import NumberTruth
    from tests.cartoqa.model_data import png

    with DatasetWriter(folder, name="rle pair", overwrite=True) as w:
        image = w.add_image("rle-0000.png", png(1, (320, 200)))
        other = w.add_image("rle-0001.png", png(2, (320, 200)))
        truths = {
            "rle-0000-m": (image, NumberTruth(value=500.0, unit="m", equivalents={"ft": 1640.42})),
            "rle-0000-ft": (image, NumberTruth(value=1640.42, unit="ft", equivalents={"m": 500.0})),
            "rle-0001-m": (other, NumberTruth(value=80.0, unit="m", equivalents={"ft": 262.47})),
        }
        for sid, (img, truth) in truths.items():
            w.add(
                Sample(
                    id=sid,
                    task="rle",
                    prompt=Prompt(text=f"[{sid}] How long is the blue path?", images=[img]),
                    ground_truth=truth,
                    metadata=Metadata(zoom=17),
                    provenance=PROV,
                )
            )
        w.finish(seeds=[0])
    return load_dataset(folder)


#: a route's map: Rue Est runs east from the blue marker (node 1) to node 2, where Rue Nord
#: goes north to the red marker (node 3) and Rue Sud south to node 4
NETWORK_NODES = {
    "1": (43.7300, 7.4200),
    "2": (43.7300, 7.4220),
    "3": (43.7310, 7.4220),
    "4": (43.7290, 7.4220),
}


def _edges(a: str, b: str, heading: float) -> list[dict]:
    back = (heading + 180) % 360
    return [
        {
            "u": int(a),
            "v": int(b),
            "length_m": 160.0,
            "heading_start": heading,
            "heading_end": heading,
        },
        {"u": int(b), "v": int(a), "length_m": 160.0, "heading_start": back, "heading_end": back},
    ]


def network_route_dataset(folder: Path):
    """One SRN sample whose truth carries its map's road network (as the generator writes
    it), its view recorded so the drawing can place the network's nodes."""
    from cartoqa.records import RoadNetwork
    from tests.cartoqa.model_data import png

    network = RoadNetwork(
        origin=1,
        destination=3,
        nodes=NETWORK_NODES,
        roads={
            "Rue Est": _edges("1", "2", 90.0),
            "Rue Nord": _edges("2", "3", 0.0),
            "Rue Sud": _edges("2", "4", 180.0),
        },
        junctions={"Rue Est|Rue Nord": [2], "Rue Est|Rue Sud": [2], "Rue Nord|Rue Sud": [2]},
    )
    truth = RouteTruth(
        steps=["blue", "turn right", "Rue Est", "turn left", "Rue Nord", "red"],
        network=network,
    )
    with DatasetWriter(folder, name="route", overwrite=True) as w:
        image = w.add_image("srn-0000.png", png(3, (640, 400)))
        w.add(
            Sample(
                id="srn-0000",
                task="srn",
                prompt=Prompt(text="Route from blue to red?", images=[image]),
                ground_truth=truth,
                metadata=Metadata(
                    zoom=17,
                    center_lat=43.7300,
                    center_lon=7.4210,
                    markers="blue@43.73,7.42;red@43.731,7.422",
                ),
                provenance=PROV,
            )
        )
        w.finish(seeds=[0])
    return load_dataset(folder)


def table_dataset(folder: Path):
    """One MTMF sample whose table is long: ten types, three long names each."""
    from cartoqa.records import FeatureCount, FeatureTableTruth
    from tests.cartoqa.model_data import png

    types = ["atm", "bank", "cafe", "clinic", "dentist", "fuel", "hotel", "pharmacy",
             "restaurant", "veterinary"]  # fmt: skip
    table = FeatureTableTruth(
        features={
            t: FeatureCount(
                count=1, names=[f"The Long Named {t.title()} Number {i}" for i in range(3)]
            )
            for t in types
        }
    )
    with DatasetWriter(folder, name="table", overwrite=True) as w:
        image = w.add_image("mtmf-0000.png", png(4, (320, 200)))
        w.add(
            Sample(
                id="mtmf-0000",
                task="mtmf",
                prompt=Prompt(text="Count every type.", images=[image]),
                ground_truth=table,
                metadata=Metadata(zoom=17),
                provenance=PROV,
            )
        )
        w.finish(seeds=[0])
    return load_dataset(folder)
