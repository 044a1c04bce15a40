"""The release's map-feature folders: what MFS, STMF and MTMF share (paths, type names, the
helpers); the forms are ``features_mfs.MFS``, ``features_stmf.STMF`` and ``features_mtmf.MTMF``.

Layout (``MapFeatureUnderstanding/`` under the release root):

- MFS: ``MFS_task/mfs.json``, question id -> {``ID`` (the symbol image in ``_Symbols/``),
  ``Question``, ``A`` .. ``E``, ``Correct answer``}; responses ``Responses/MFS/<model>/
  <model>.json``, the same object with ``Response`` and ``Answer`` added to each question;
- STMF: ``STMF_task/{presence,counting,name_listing}.json``, ``q_<n>`` -> {``Image``,
  ``City``, ``MF type``, ``Correct answer``}, the map at ``_Maps/<City>/<Image>``; responses
  ``Responses/STMF/<model>/<request>/<City>_<image stem>_q<n>_<request>.json``;
- MTMF: every map in ``_Maps/<area>/`` that has a truth ``MTMF_task/Groundtruth/<area>/
  <map stem>.json`` (published type name -> {``count``, ``names``}); responses
  ``Responses/MTMF/<model>/<area>_<map stem>.json`` (``[normalised, raw]``) or ``.txt``
  (a reply the published code could not read as JSON).

The published type names ("drug store/pharmacy", "park area", "car parking lot", ...) are
cartoqa's 22 feature types (``cartoqa.records.feature_types``) one for one; ``RELEASE_TYPES``
pairs them.  A question file's ``MF type`` is read in the singular (``RELEASE_TYPES``) or the
plural the published prompts list ("drug stores/pharmacies"), and written in the singular.

Samples read from the release get ids ``mfs-<question id>``, ``stmf-<request>-<n>`` and
``mtmf-<area>_<map stem>`` (characters an id may not hold become "-"), metadata naming where
they came from (``release_key``, ``city``, ``feature_type`` as cartoqa's key,
``release_type`` as the release writes it, ``request``), and the prompt of the templates
``map.release.<task>``.  Exported question records carry the sample itself under the key
"cartoqa" (the published scripts ignore it), so a dataset exported and imported again gives
back the same samples.  Name-listing truths are written without ``""`` (the published parser
drops every ``""`` an answer writes, and its substring recall would count a ``""`` in the
truth as always found).

cartoqa's own MTMF question asks with cartoqa's type keys ("pharmacy", "car_parking"); where
the published parser knows no such spelling, a reply's keys are given the release's names
before it reads them (as if the question had named the types as the release does), and the
truths of cartoqa's own questions are written names only, as for STMF.

The "original" mode of these tasks on a cartoqa dataset (``mfs_original``, ...) builds the
record the published ``get_response_*.py`` would have stored for the reply (the same
function ``write_replies`` uses, with the same key and so the same seeded draws) and scores
it with ``evaluators.published``; its tables rebuild the published items and call the
published ``table``.  A missing reply is stored as the empty response.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.errors import DatasetError
from cartoqa.records import (
    Prompt,
    Provenance,
    Sample,
    SampleScore,
)
from cartoqa.records.feature_types import FEATURE_TYPES
from cartoqa.tasks.templates import PromptSet
from evaluators.published import Item, mtmf

from .form import RELEASE_IMAGES

__all__ = [
    "CARTOQA_KEY",
    "FEATURES",
    "GENERATOR",
    "IMAGE_SUFFIXES",
    "LETTERS",
    "MAPS",
    "MFS_FILE",
    "ORIGINAL_SEED",
    "RELEASE_TYPES",
    "SOURCE",
    "STMF_DIR",
    "SYMBOLS",
    "TRUTHS",
    "TYPE_NAMES",
]

FEATURES = "MapFeatureUnderstanding"
SYMBOLS = f"{FEATURES}/_Symbols"
MAPS = f"{FEATURES}/_Maps"
MFS_FILE = f"{FEATURES}/MFS_task/mfs.json"
STMF_DIR = f"{FEATURES}/STMF_task"
TRUTHS = f"{FEATURES}/MTMF_task/Groundtruth"
LETTERS = ("A", "B", "C", "D", "E")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
SOURCE = "CartoMapQA release (Ung et al.), © OpenStreetMap contributors"
GENERATOR = f"cartoqa {__version__} tasks.release.features"
#: the seed of the original mode's random fall-backs (``score-release``'s default too)
ORIGINAL_SEED = 0
#: the key a question record keeps its cartoqa sample under
CARTOQA_KEY = "cartoqa"

#: the release's type names, in the published order, -> cartoqa's feature types
RELEASE_TYPES: dict[str, str] = dict(zip(mtmf.TYPES, FEATURE_TYPES, strict=True))
#: cartoqa's feature type -> the release's name
TYPE_NAMES = {v: k for k, v in RELEASE_TYPES.items()}
#: the plurals the published prompts name the types by
_PLURALS = dict(
    zip(
        (
            "convenience stores",
            "supermarkets",
            "drug stores/pharmacies",
            "general health clinics",
            "hospitals",
            "restaurants",
            "fast food stores",
            "coffee shops",
            "ATMs or cash points",
            "banks",
            "playgrounds",
            "park areas",
            "fitness centers",
            "clothes shops",
            "beauty shops",
            "water streams",
            "rivers",
            "bus stops",
            "gas/fuel stations",
            "primary roads",
            "car parking places",
            "public toilets",
        ),
        FEATURE_TYPES,
        strict=True,
    )
)
_TYPE_LOOKUP = {
    name.lower().replace("_", " "): key for name, key in (*RELEASE_TYPES.items(), *_PLURALS.items())
}

_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9._:-]+")


# ------------------------------------------------------------------ shared helpers


def _load_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DatasetError(
            f"the release has no {what}: expected {path}; is a folder of the release missing "
            "or renamed? (give the unzipped release's Dataset/CartoMapQA/ folder)"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path} is not JSON ({exc}); restore the release's file") from None


def _need_dir(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise DatasetError(
            f"the release has no {what}: expected the folder {path}; is it missing or renamed?"
        )
    return path


def _id_part(text: str) -> str:
    return _BAD_ID_CHARS.sub("-", str(text)).strip("-") or "x"


def _unique(samples: list[Sample], where: str) -> list[Sample]:
    seen: dict[str, Sample] = {}
    for s in samples:
        if s.id in seen:
            raise DatasetError(
                f"{where}: two questions become the sample id {s.id!r} (their keys differ only "
                "in characters a sample id may not hold); rename one"
            )
        seen[s.id] = s
    return samples


def _type_key(name: Any, where: str) -> str:
    key = _TYPE_LOOKUP.get(str(name).strip().lower().replace("_", " "))
    if key is None:
        raise DatasetError(
            f"{where}: MF type {name!r} is none of the release's 22 types "
            f"({', '.join(RELEASE_TYPES)})"
        )
    return key


def _provenance(prompts: PromptSet) -> Provenance:
    return Provenance(generator=GENERATOR, source=SOURCE, prompts_sha256=prompts.sha256)


def _prompt(prompts: PromptSet, task: str, image: str, **fields: Any) -> Prompt:
    return Prompt(
        text=prompts.text(f"map.release.{task}", **fields),
        system=prompts.text("map.release.system"),
        images=[f"{RELEASE_IMAGES}/{image}"],
    )


def _embedded(record: Mapping[str, Any], where: str) -> Sample | None:
    """The cartoqa sample a question record written by ``write_questions`` carries."""
    data = record.get(CARTOQA_KEY) if isinstance(record, Mapping) else None
    if data is None:
        return None
    try:
        return Sample.model_validate(data)
    except ValueError as exc:
        raise DatasetError(
            f"{where}: its {CARTOQA_KEY!r} record is no cartoqa sample: {exc}"
        ) from None


def _repointed(sample: Sample, image: str) -> Sample:
    prompt = sample.prompt.model_copy(update={"images": [f"{RELEASE_IMAGES}/{image}"]})
    return sample.model_copy(update={"prompt": prompt})


def _sample_json(sample: Sample) -> dict[str, Any]:
    return sample.model_dump(mode="json")


def _meta(sample: Sample, key: str) -> Any:
    md = sample.metadata
    value = vars(md).get(key)
    return value if value is not None else (md.model_extra or {}).get(key)


def _release_image(sample: Sample) -> str | None:
    """The path in the release of an imported sample's image ("release/<path>")."""
    if not sample.prompt.images:
        return None
    head, _, rest = sample.prompt.images[0].partition("/")
    return rest if head == RELEASE_IMAGES and rest else None


class _Images:
    """Images copied into a release being written: one source per target path."""

    def __init__(self, dataset: Path, root: Path) -> None:
        self.dataset, self.root = Path(dataset), Path(root)
        self.taken: dict[str, Path] = {}

    def put(self, sample: Sample, target: str) -> None:
        if not sample.prompt.images:
            raise DatasetError(f"sample {sample.id!r} has no image to write into the release")
        source = (self.dataset / sample.prompt.images[0]).resolve()
        if self.taken.get(target, source) != source:
            raise DatasetError(
                f"sample {sample.id!r}: its image {sample.prompt.images[0]!r} and "
                f"{self.taken[target]} would both be the release's {target}; give the "
                "images distinct names (or the samples distinct cities)"
            )
        if target in self.taken:
            return
        if not source.is_file():
            raise DatasetError(
                f"sample {sample.id!r}: its image {source} is missing; export from a complete "
                "dataset folder"
            )
        self.taken[target] = source
        out = self.root / target
        out.parent.mkdir(parents=True, exist_ok=True)
        if not (out.exists() and out.resolve() == source):
            shutil.copyfile(source, out)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")


def _score(
    item: Item, parsed: str | None, correct: bool | None, drawn: bool = False
) -> SampleScore:
    """The SampleScore of a published item (``drawn``: the published parser drew the stored
    answer, before the evaluator saw it)."""
    drawn = drawn or item.drawn
    return SampleScore(
        correct=correct,
        values=dict(item.values)
        | {"crashed": 1.0 if item.crashed else 0.0, "drawn": 1.0 if drawn else 0.0},
        parsed=parsed,
        why=item.crashed or (None if correct else item.why),
    )


def _items(
    rows: Sequence[tuple[Sample, SampleScore]], key: Callable[[Sample, SampleScore], str]
) -> list[Item]:
    """The published items a mode's scored rows stand for."""
    out = []
    for sample, score in rows:
        values = {k: v for k, v in score.values.items() if k not in ("crashed", "drawn")}
        out.append(
            Item(
                key=key(sample, score),
                values=values,
                crashed=(score.why or "crashed") if score.values.get("crashed") else None,
                drawn=bool(score.values.get("drawn")),
                why=score.why,
            )
        )
    return out


def _response(text: str | None) -> str:
    return text if text is not None else ""


def _root_for(folder: Path, root: Path | None) -> Path | None:
    """The release root a response folder is read with: the one given, else the
    ``Dataset/CartoMapQA/`` beside ``Responses/`` where the published layout has it."""
    if root is not None:
        return Path(root)
    near = Path(folder).resolve().parent.parent.parent / "Dataset" / "CartoMapQA"
    return near if (near / FEATURES).is_dir() else None


def _from_release(sample: Sample) -> bool:
    """Whether the sample is a question of the release (read by ``read_questions``)."""
    return _meta(sample, "release_key") is not None
