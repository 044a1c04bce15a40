"""A small dataset with paired variants, made by hand for the export tests: base samples of
two map tasks and a GPS task, and their variants as the build writes them
(``cartoqa.tasks.variants``): ``@text`` (no image), ``@greyscale`` (an image of its own),
``@nolabels`` (answerable for STMF count, ``answerable: false`` for STMF names)."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from cartoqa.models.baselines import oracle_answer
from cartoqa.records import (
    CountTruth,
    Metadata,
    NamesTruth,
    NumberTruth,
    Prompt,
    Provenance,
    Sample,
)
from cartoqa.stores import Dataset, DatasetWriter, load_dataset

OSM = Provenance(generator="tests", seed=3, extract_hash="cd" * 32, style_version="5.7.0")
GEO = Provenance(generator="tests", seed=3, source="GeoNames cities15000, CC BY 4.0")
#: what a model that cannot answer writes
NO_ANSWER = "I cannot tell from this."


def _png(colour: tuple[int, int, int], *, grey: bool = False) -> bytes:
    im = Image.new("RGB", (24, 16), colour)
    if grey:
        im = im.convert("L")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def _variant(base: Sample, tag: str, name: str, **changes: object) -> Sample:
    extra = dict(changes.pop("metadata", {}))  # type: ignore[arg-type]
    metadata = Metadata(
        **base.metadata.model_dump(exclude_none=True), variant=name, base=base.id, **extra
    )
    return base.model_copy(update={"id": f"{base.id}@{tag}", "metadata": metadata, **changes})


def variant_dataset(folder: Path) -> Dataset:
    """Two STMF count views (base, @text, @greyscale, @nolabels), one STMF names view (base,
    @nolabels flagged unanswerable) and two GPS distance questions (no variants)."""
    with DatasetWriter(folder, name="variants", overwrite=True) as w:
        samples: list[Sample] = []
        for i in (1, 2):
            view = f"stmf_count-{i:04d}"
            image = w.add_image(f"{view}.png", _png((200, 40 * i, 30)))
            grey = w.add_image(f"{view}@greyscale.png", _png((200, 40 * i, 30), grey=True))
            bare = w.add_image(f"{view}@nolabels.png", _png((190, 40 * i, 30)))
            base = Sample(
                id=view,
                task="stmf_count",
                prompt=Prompt(text=f"[{view}] How many banks are on the map?", images=[image]),
                ground_truth=CountTruth(value=i + 1, feature_type="bank"),
                metadata=Metadata(zoom=17, difficulty="easy"),
                provenance=OSM,
            )
            text = Prompt(
                text=f"The map, as text: banks at (0.2, 0.4) and (0.6, 0.1).\n[{view}] "
                "How many banks are on the map?"
            )
            samples += [
                base,
                _variant(base, "text", "text", prompt=text),
                _variant(
                    base,
                    "greyscale",
                    "greyscale",
                    prompt=base.prompt.model_copy(update={"images": [grey]}),
                ),
                _variant(
                    base,
                    "nolabels",
                    "nolabels",
                    prompt=base.prompt.model_copy(update={"images": [bare]}),
                ),
            ]
        view = "stmf_names-0001"
        image = w.add_image(f"{view}.png", _png((20, 90, 200)))
        bare = w.add_image(f"{view}@nolabels.png", _png((20, 80, 200)))
        base = Sample(
            id=view,
            task="stmf_names",
            prompt=Prompt(text=f"[{view}] Name the cafes on the map.", images=[image]),
            ground_truth=NamesTruth(names=["Café Noir", "Main Street Cafe"]),
            metadata=Metadata(zoom=18),
            provenance=OSM,
        )
        samples += [
            base,
            _variant(
                base,
                "nolabels",
                "nolabels",
                prompt=base.prompt.model_copy(update={"images": [bare]}),
                metadata={"answerable": False},
            ),
        ]
        for i in (1, 2):
            samples.append(
                Sample(
                    id=f"dist-{i}",
                    task="distance",
                    prompt=Prompt(text=f"How far is A{i} from B{i}?"),
                    ground_truth=NumberTruth(value=10.0 * i, unit="km"),
                    metadata=Metadata(difficulty="easy", track="pure"),
                    provenance=GEO,
                )
            )
        for s in samples:
            w.add(s)
        w.finish(seeds=[3])
    return load_dataset(folder)


def variant_answers(ds: Dataset) -> dict[str, str]:
    """Right answers to the base questions and to the greyscale and nolabels copies, no
    answer to the text copies and the unanswerable ones: a number that mixed a base and
    its variant would lie between the two."""
    out: dict[str, str] = {}
    for s in ds:
        variant = (s.metadata.model_extra or {}).get("variant")
        wrong = variant == "text" or (s.metadata.model_extra or {}).get("answerable") is False
        out[s.id] = NO_ANSWER if wrong else oracle_answer(s)
    return out
