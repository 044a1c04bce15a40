"""The release's map-feature folders as ``ReleaseForm``s: MFS, STMF and MTMF.

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
    BooleanTruth,
    ChoiceTruth,
    CountTruth,
    FeatureCount,
    FeatureTableTruth,
    Metadata,
    NamesTruth,
    Prompt,
    Provenance,
    Sample,
    SampleScore,
)
from cartoqa.records.feature_types import FEATURE_TYPES
from cartoqa.tasks.templates import PromptSet, load_prompts
from evaluators.published import Evaluation, Item, mfs, mtmf, rng_for, stmf

from .form import RELEASE_IMAGES, ReleaseForm, Reply

__all__ = [
    "MFS",
    "MTMF",
    "RELEASE_TYPES",
    "STMF",
    "mfs_original",
    "mfs_original_table",
    "mtmf_answer",
    "mtmf_original",
    "mtmf_original_table",
    "stmf_count_original",
    "stmf_count_table",
    "stmf_names_original",
    "stmf_names_table",
    "stmf_presence_original",
    "stmf_presence_table",
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

#: the release's STMF requests (folder and file names) -> cartoqa's tasks
REQUESTS = {"presence": "stmf_presence", "counting": "stmf_count", "name_listing": "stmf_names"}
_REQUEST_OF = {v: k for k, v in REQUESTS.items()}
#: what cartoqa's own samples call the request (``metadata.request``)
_REQUEST_WORD = {"presence": "presence", "counting": "count", "name_listing": "names"}
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


# ------------------------------------------------------------------ MFS


def _mfs_sample(qid: str, q: Mapping[str, Any], prompts: PromptSet, where: str) -> Sample:
    own = _embedded(q, where)
    missing = [k for k in ("ID", "Question", *LETTERS, "Correct answer") if k not in q]
    if missing:
        raise DatasetError(f"{where}: question {qid!r} has no {', '.join(missing)}")
    image = f"{SYMBOLS}/{q['ID']}"
    if own is not None:
        return _repointed(own, image)
    answer = str(q["Correct answer"]).strip()
    if answer not in LETTERS:
        raise DatasetError(f"{where}: question {qid!r} has Correct answer {answer!r}, not A-E")
    options = {k: str(q[k]) for k in LETTERS}
    return Sample(
        id=f"mfs-{_id_part(qid)}",
        task="mfs",
        prompt=_prompt(prompts, "mfs", image, question=str(q["Question"]), **options),
        ground_truth=ChoiceTruth(answer=answer, options=options),
        metadata=Metadata(release_key=str(qid), symbol=str(q["ID"]), question=str(q["Question"])),
        provenance=_provenance(prompts),
    )


def _mfs_questions(root: Path, prompts: PromptSet) -> list[Sample]:
    root = Path(root)
    data = _load_json(root / MFS_FILE, "MFS question file")
    if not isinstance(data, dict):
        raise DatasetError(f"{root / MFS_FILE}: an object keyed by question id was expected")
    symbols = _need_dir(root / SYMBOLS, "MFS symbol images")
    out = []
    for qid, q in data.items():
        if not isinstance(q, dict):
            raise DatasetError(f"{root / MFS_FILE}: question {qid!r} is not an object")
        if "ID" in q and not (symbols / str(q["ID"])).is_file():
            raise DatasetError(
                f"{root / MFS_FILE}: question {qid!r} shows {q['ID']!r}, which is not in {symbols}"
            )
        out.append(_mfs_sample(str(qid), q, prompts, str(root / MFS_FILE)))
    return _unique(out, str(root / MFS_FILE))


def _mfs_key(sample: Sample) -> str:
    return str(_meta(sample, "release_key") or sample.id)


def _mfs_question(sample: Sample, *, embed: bool = True) -> dict[str, Any]:
    truth = sample.ground_truth
    if not isinstance(truth, ChoiceTruth):
        raise DatasetError(f"sample {sample.id!r} has no multiple-choice truth")
    image = _release_image(sample)
    symbol = image.rsplit("/", 1)[-1] if image else None
    if symbol is None:
        suffix = Path(sample.prompt.images[0]).suffix if sample.prompt.images else ".png"
        symbol = f"{_id_part(_mfs_key(sample))}{suffix}"
    record: dict[str, Any] = {
        "ID": symbol,
        # cartoqa's own questions name the options in the prompt; the question alone:
        "Question": str(_meta(sample, "question") or "Which map feature does this symbol show?"),
    }
    record |= {k: truth.options.get(k, "") for k in LETTERS}
    record["Correct answer"] = truth.answer
    if embed:
        record[CARTOQA_KEY] = _sample_json(sample)
    return record


def _mfs_record(
    sample: Sample, response: str | None, *, embed: bool = False
) -> tuple[str, dict[str, Any]]:
    text = _response(response)
    record = _mfs_question(sample, embed=embed) | {"Response": text, "Answer": mfs.parse(text)[0]}
    return _mfs_key(sample), record


def _mfs_write_questions(samples: Sequence[Sample], dataset: Path, root: Path) -> None:
    images = _Images(dataset, root)
    data: dict[str, Any] = {}
    for s in samples:
        record = _mfs_question(s)
        key = _mfs_key(s)
        if key in data:
            raise DatasetError(f"two MFS samples have the question id {key!r}")
        images.put(s, f"{SYMBOLS}/{record['ID']}")
        data[key] = record
    _write_json(Path(root) / MFS_FILE, data)


def _mfs_write_replies(
    samples: Sequence[Sample], replies: Mapping[str, str | None], folder: Path
) -> None:
    folder = Path(folder)
    data = dict(_mfs_record(s, replies.get(s.id), embed=True) for s in samples)
    _write_json(folder / f"{folder.name}.json", data)


def _mfs_file(folder: Path) -> Path | None:
    named = folder / f"{folder.name}.json"
    if named.is_file():
        return named
    files = sorted(folder.glob("*.json"))
    return files[0] if len(files) == 1 and not any(folder.glob("*.txt")) else None


def _mfs_detect(folder: Path) -> bool:
    path = _mfs_file(Path(folder))
    if path is None:
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and any(
        isinstance(v, dict) and "Correct answer" in v and "ID" in v for v in data.values()
    )


def _mfs_replies(folder: Path, root: Path | None) -> list[Reply]:
    folder = Path(folder)
    path = _mfs_file(folder)
    if path is None:
        raise DatasetError(
            f"{folder} holds no MFS response file: expected {folder / (folder.name + '.json')}"
        )
    data = _load_json(path, "MFS response file")
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: an object keyed by question id was expected")
    prompts = load_prompts()
    out = []
    for qid, record in data.items():
        if not isinstance(record, dict):
            raise DatasetError(f"{path}: question {qid!r} is not an object")
        sample = _mfs_sample(str(qid), record, prompts, str(path))
        response = record.get("Response")
        out.append(Reply(str(qid), record, sample, response if isinstance(response, str) else None))
    return sorted(out, key=lambda r: r.key)


def _mfs_evaluate(replies: Sequence[Reply], seed: int) -> list[Evaluation]:
    return [mfs.evaluate([(r.key, r.record) for r in replies], seed=seed)]


def mfs_original(sample: Sample, response: str | None) -> SampleScore:
    """MFS by the published arithmetic: the letter the published parser stores, an empty one
    drawn at random (seeded by the question's key), compared with the truth's letter."""
    key, record = _mfs_record(sample, response)
    item = mfs.item(key, record, rng_for(ORIGINAL_SEED, key))
    score = _score(item, record["Answer"] or None, item.values.get("correct") == 1.0)
    crash = mfs.parse(record["Response"])[1]
    if crash and not score.correct:
        # the published get_response_mfs.py stops here; the record is stored as no letter
        score = score.model_copy(
            update={"why": f"{score.why}; the published parser raises {crash}"}
        )
    return score


def mfs_original_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    """MFS's published table over scored rows."""
    return mfs.table(_items(rows, lambda s, _: _mfs_key(s)))


MFS = ReleaseForm(
    folder="MFS",
    top="MapFeatureUnderstanding/MFS_task",
    tasks=("mfs",),
    read_questions=_mfs_questions,
    read_replies=_mfs_replies,
    detect=_mfs_detect,
    evaluate=_mfs_evaluate,
    write_questions=_mfs_write_questions,
    write_replies=_mfs_write_replies,
)


# ------------------------------------------------------------------ STMF


def _stmf_number(key: str) -> str:
    """The question's number as the published code takes it from ``q_<n>``."""
    parts = key.split("_")
    return parts[1] if len(parts) > 1 else key


def _stmf_truth(request: str, answer: Any, feature: str, where: str) -> Any:
    if request == "presence":
        text = str(answer).strip().lower()
        if text not in ("yes", "no"):
            raise DatasetError(f"{where}: Correct answer {answer!r} is not Yes or No")
        return BooleanTruth(value=text == "yes", feature_type=feature)
    if request == "counting":
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        if isinstance(answer, bool) or not isinstance(answer, int | str):
            raise DatasetError(f"{where}: Correct answer {answer!r} is not a count")
        try:
            value = int(answer)
        except ValueError:
            raise DatasetError(f"{where}: Correct answer {answer!r} is not a count") from None
        if value < 0:
            raise DatasetError(f"{where}: Correct answer {answer!r} is a negative count")
        return CountTruth(value=value, feature_type=feature)
    if not isinstance(answer, list) or not all(isinstance(n, str) for n in answer):
        raise DatasetError(f"{where}: Correct answer {answer!r} is not a list of names")
    return NamesTruth(names=list(answer), feature_type=feature)


def _stmf_sample(
    request: str, key: str, q: Mapping[str, Any], prompts: PromptSet, where: str
) -> Sample:
    missing = [k for k in ("Image", "City", "MF type", "Correct answer") if k not in q]
    if missing:
        raise DatasetError(f"{where}: question {key!r} has no {', '.join(missing)}")
    image = f"{MAPS}/{q['City']}/{q['Image']}"
    own = _embedded(q, where)
    if own is not None:
        return _repointed(own, image)
    feature = _type_key(q["MF type"], f"{where}, question {key!r}")
    task = REQUESTS[request]
    return Sample(
        id=f"stmf-{request.replace('_', '-')}-{_id_part(_stmf_number(key))}",
        task=task,
        prompt=_prompt(prompts, task, image, feature_type=str(q["MF type"])),
        ground_truth=_stmf_truth(request, q["Correct answer"], feature, f"{where}, {key!r}"),
        metadata=Metadata(
            city=str(q["City"]),
            release_key=key,
            feature_type=feature,
            release_type=str(q["MF type"]),
            request=_REQUEST_WORD[request],
        ),
        provenance=_provenance(prompts),
    )


def _stmf_questions(root: Path, prompts: PromptSet) -> list[Sample]:
    root = Path(root)
    _need_dir(root / STMF_DIR, "STMF question folder")
    maps = _need_dir(root / MAPS, "map folder of STMF and MTMF")
    out = []
    for request in REQUESTS:
        path = root / STMF_DIR / f"{request}.json"
        data = _load_json(path, f"STMF {request} question file")
        if not isinstance(data, dict):
            raise DatasetError(f"{path}: an object keyed q_<n> was expected")
        for key, q in data.items():
            if not isinstance(q, dict):
                raise DatasetError(f"{path}: question {key!r} is not an object")
            if (
                "City" in q
                and "Image" in q
                and not (maps / str(q["City"]) / str(q["Image"])).is_file()
            ):
                raise DatasetError(
                    f"{path}: question {key!r} shows {q['City']}/{q['Image']}, which is not "
                    f"in {maps}"
                )
            out.append(_stmf_sample(request, str(key), q, prompts, str(path)))
    return _unique(out, str(root / STMF_DIR))


def _stmf_request(sample: Sample) -> str:
    request = _REQUEST_OF.get(sample.task)
    if request is None:
        raise DatasetError(f"sample {sample.id!r} of task {sample.task!r} is no STMF question")
    return request


def _stmf_key(sample: Sample) -> str:
    """The question's key in its file (``q_<n>``)."""
    own = _meta(sample, "release_key")
    return str(own) if own else "q_" + sample.id.replace("_", "-")


def _stmf_place(sample: Sample) -> tuple[str, str]:
    """(City, Image) of the sample's map in the release."""
    image = _release_image(sample)
    if image and image.startswith(MAPS + "/") and image.count("/") >= 3:
        city, name = image[len(MAPS) + 1 :].split("/", 1)
        return city, name
    city = _id_part(_meta(sample, "city") or "cartoqa")
    return city, Path(sample.prompt.images[0]).name if sample.prompt.images else f"{sample.id}.png"


def _stmf_question(sample: Sample, *, embed: bool = True) -> dict[str, Any]:
    """The question's record in its file (``embed``: with the sample under "cartoqa"); a
    release question's names as the release has them, cartoqa's own names only."""
    request = _stmf_request(sample)
    truth = sample.ground_truth
    feature = getattr(truth, "feature_type", None) or _meta(sample, "feature_type")
    # the published scripts only put the type into the prompt: one of no known type is kept
    # as it is (the sample, under "cartoqa", says the rest)
    mf_type = _meta(sample, "release_type") or TYPE_NAMES.get(feature) or str(feature or "")
    city, image = _stmf_place(sample)
    if request == "presence":
        answer: Any = "Yes" if truth.value else "No"  # type: ignore[union-attr]
    elif request == "counting":
        answer = truth.value  # type: ignore[union-attr]
    else:
        names = list(truth.names)  # type: ignore[union-attr]
        answer = names if _from_release(sample) else [n for n in names if n]
    record = {"Image": image, "City": city, "MF type": str(mf_type), "Correct answer": answer}
    return record | ({CARTOQA_KEY: _sample_json(sample)} if embed else {})


def _stmf_file(sample: Sample, question: Mapping[str, Any]) -> str:
    request = _stmf_request(sample)
    stem = str(question["Image"])[:-4]  # as the published script cuts the extension
    return f"{question['City']}_{stem}_q{_stmf_number(_stmf_key(sample))}_{request}.json"


def _stmf_answer(request: str, text: str, key: str) -> tuple[Any, bool]:
    rng = rng_for(ORIGINAL_SEED, key)
    if request == "presence":
        return stmf.parse_presence(text, rng)
    if request == "counting":
        return stmf.parse_count(text, rng)
    return stmf.parse_names(text), False


def _stmf_parsed(
    sample: Sample, response: str | None, *, embed: bool = False
) -> tuple[str, dict[str, Any], bool, str | None]:
    """(file name, the record the published script stores, whether its parser drew the
    answer at random: seeded by the file name, what its parser raises or None).  A reply the
    published parser raises on (a count of 5,000 digits, "²") stops the published script;
    here its record holds the answer of the empty reply, as MFS's does."""
    request = _stmf_request(sample)
    question = _stmf_question(sample, embed=embed)
    key = _stmf_file(sample, question)
    text = _response(response)
    crash = None
    try:
        answer, drawn = _stmf_answer(request, text, key)
    except (ValueError, OverflowError) as exc:
        crash = f"{type(exc).__name__}: {exc}"
        answer, drawn = _stmf_answer(request, "", key)
    return key, question | {"Response": text, "Answer": answer}, bool(drawn), crash


def _stmf_record(
    sample: Sample, response: str | None, *, embed: bool = False
) -> tuple[str, dict[str, Any]]:
    key, record, _, _ = _stmf_parsed(sample, response, embed=embed)
    return key, record


def _with_crash(score: SampleScore, crash: str | None) -> SampleScore:
    if not crash:
        return score
    why = f"{score.why or 'right'}; the published parser raises {crash[:200]}"
    return score.model_copy(update={"why": why})


def _stmf_write_questions(samples: Sequence[Sample], dataset: Path, root: Path) -> None:
    images = _Images(dataset, root)
    files: dict[str, dict[str, Any]] = {r: {} for r in REQUESTS}
    for s in samples:
        request = _stmf_request(s)
        record = _stmf_question(s)
        key = _stmf_key(s)
        if key in files[request]:
            raise DatasetError(f"two STMF {request} samples have the key {key!r}")
        images.put(s, f"{MAPS}/{record['City']}/{record['Image']}")
        files[request][key] = record
    for request, data in files.items():
        _write_json(Path(root) / STMF_DIR / f"{request}.json", data)


def _stmf_write_replies(
    samples: Sequence[Sample], replies: Mapping[str, str | None], folder: Path
) -> None:
    for s in samples:
        key, record = _stmf_record(s, replies.get(s.id), embed=True)
        _write_json(Path(folder) / _stmf_request(s) / key, record)


def _stmf_detect(folder: Path) -> bool:
    return any((Path(folder) / r).is_dir() for r in REQUESTS)


def _stmf_replies(folder: Path, root: Path | None) -> list[Reply]:
    folder = Path(folder)
    found = [r for r in REQUESTS if (folder / r).is_dir()]
    if not found:
        raise DatasetError(
            f"{folder} holds no STMF response folder: expected one or more of "
            f"{', '.join(str(folder / r) for r in REQUESTS)}"
        )
    prompts = load_prompts()
    pattern = re.compile(r"_q([^_]+)_(?:presence|counting|name_listing)\.json$")
    out = []
    for request in found:
        for path in sorted((folder / request).glob("*.json")):
            record = _load_json(path, "STMF response")
            if not isinstance(record, dict):
                raise DatasetError(f"{path}: a response object was expected")
            m = pattern.search(path.name)
            key = f"q_{m.group(1)}" if m else path.stem
            sample = _stmf_sample(request, key, record, prompts, str(path))
            response = record.get("Response")
            out.append(
                Reply(path.name, record, sample, response if isinstance(response, str) else None)
            )
    return sorted(out, key=lambda r: r.key)


_STMF_EVALUATE = {
    "presence": lambda records, seed: stmf.evaluate_presence(records, seed=seed),
    "counting": lambda records, seed: stmf.evaluate_count(records, seed=seed),
    "name_listing": lambda records, seed: stmf.evaluate_names(records, seed=seed),
}


def _stmf_evaluate(replies: Sequence[Reply], seed: int) -> list[Evaluation]:
    out = []
    for request, evaluate in _STMF_EVALUATE.items():
        mine = [(r.key, r.record) for r in replies if r.sample.task == REQUESTS[request]]
        if mine:
            out.append(evaluate(mine, seed))
    return out


def _stmf_key_of(sample: Sample, _: SampleScore) -> str:
    return _stmf_file(sample, _stmf_question(sample, embed=False))


def stmf_presence_original(sample: Sample, response: str | None) -> SampleScore:
    """STMF presence by the published arithmetic (the stored yes/no, a seeded draw where the
    published parser draws)."""
    key, record, drawn, _ = _stmf_parsed(sample, response)
    item = stmf.presence_item(key, record)
    return _score(item, record["Answer"], item.values.get("correct") == 1.0, drawn)


def stmf_count_original(sample: Sample, response: str | None) -> SampleScore:
    """STMF counting by the published arithmetic (the stored count; right when equal)."""
    key, record, drawn, crash = _stmf_parsed(sample, response)
    item = stmf.count_item(key, record)
    pred = item.values.get("pred")
    ok = pred is not None and pred == item.values.get("true")
    return _with_crash(_score(item, str(record["Answer"]), ok, drawn), crash)


def stmf_names_original(sample: Sample, response: str | None) -> SampleScore:
    """STMF name listing by the published arithmetic (right when its F1 is 1)."""
    key, record = _stmf_record(sample, response)
    item = stmf.names_item(key, record)
    return _score(
        item, json.dumps(record["Answer"], ensure_ascii=False), item.values.get("f1") == 1.0
    )


def stmf_presence_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    """STMF presence's published table over scored rows."""
    return stmf.presence_table(_items(rows, _stmf_key_of))


def stmf_count_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    """STMF counting's published table over scored rows."""
    return stmf.count_table(_items(rows, _stmf_key_of))


def stmf_names_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    """STMF name listing's published table over scored rows."""
    return stmf.names_table(_items(rows, _stmf_key_of))


STMF = ReleaseForm(
    folder="STMF",
    top="MapFeatureUnderstanding/STMF_task",
    tasks=tuple(REQUESTS.values()),
    read_questions=_stmf_questions,
    read_replies=_stmf_replies,
    detect=_stmf_detect,
    evaluate=_stmf_evaluate,
    write_questions=_stmf_write_questions,
    write_replies=_stmf_write_replies,
)


# ------------------------------------------------------------------ MTMF


def _mtmf_truth(data: Any, where: str) -> FeatureTableTruth:
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: an object keyed by the 22 type names was expected")
    table = {}
    for name, key in RELEASE_TYPES.items():
        entry = data.get(name)
        if not isinstance(entry, dict) or "count" not in entry or "names" not in entry:
            raise DatasetError(f"{where}: no {{count, names}} for the type {name!r}")
        count, names = entry["count"], entry["names"]
        if isinstance(count, float) and count.is_integer():
            count = int(count)  # 3.0: a count written as a float
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise DatasetError(f"{where}: {name!r} has count {count!r}, not a count")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise DatasetError(f"{where}: {name!r} has names {names!r}, not a list of names")
        table[key] = FeatureCount(count=count, names=names)
    return FeatureTableTruth(features=table)


def _mtmf_sample(
    area: str, image: str, truth: Mapping[str, Any], prompts: PromptSet, where: str
) -> Sample:
    rel = f"{MAPS}/{area}/{image}"
    own = _embedded(truth, where)
    if own is not None:
        return _repointed(own, rel)
    stem = Path(image).stem
    return Sample(
        id=f"mtmf-{_id_part(f'{area}_{stem}')}",
        task="mtmf",
        prompt=_prompt(prompts, "mtmf", rel),
        ground_truth=_mtmf_truth(truth, where),
        metadata=Metadata(city=area, release_key=f"{area}_{stem}", request="all"),
        provenance=_provenance(prompts),
    )


def _mtmf_maps(root: Path) -> list[tuple[str, str, Path]]:
    """(area, map file, truth file) of every map with a truth, by area and name."""
    maps = _need_dir(root / MAPS, "map folder of STMF and MTMF")
    truths = _need_dir(root / TRUTHS, "MTMF ground-truth folder")
    out = []
    for area in sorted(p for p in maps.iterdir() if p.is_dir()):
        for image in sorted(area.iterdir()):
            if image.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            truth = truths / area.name / f"{image.stem}.json"
            if truth.is_file():
                out.append((area.name, image.name, truth))
    used = {t for _, _, t in out}
    stray = sorted(p for p in truths.glob("*/*.json") if p not in used)
    if stray:
        raise DatasetError(
            f"{stray[0]} is the truth of a map not in {maps}: expected "
            f"{maps / stray[0].parent.name}/{stray[0].stem}.png; is a map missing or renamed?"
        )
    if not out:
        raise DatasetError(
            f"no map in {maps}/<area>/ has a truth in {truths}/<area>/<map>.json; is the "
            "ground-truth folder renamed?"
        )
    return out


def _mtmf_questions(root: Path, prompts: PromptSet) -> list[Sample]:
    root = Path(root)
    out = [
        _mtmf_sample(area, image, _load_json(truth, "MTMF truth"), prompts, str(truth))
        for area, image, truth in _mtmf_maps(root)
    ]
    return _unique(out, str(root / TRUTHS))


def _mtmf_place(sample: Sample) -> tuple[str, str]:
    """(area, map file) of the sample's map in the release."""
    image = _release_image(sample)
    if image and image.startswith(MAPS + "/") and image.count("/") >= 3:
        area, name = image[len(MAPS) + 1 :].split("/", 1)
        return area, name
    area = _id_part(_meta(sample, "city") or "cartoqa")
    return area, Path(sample.prompt.images[0]).name if sample.prompt.images else f"{sample.id}.png"


def _from_release(sample: Sample) -> bool:
    """Whether the sample is a question of the release (read by ``read_questions``)."""
    return _meta(sample, "release_key") is not None


def _mtmf_table(sample: Sample) -> dict[str, dict[str, Any]]:
    """The sample's truth keyed by the release's type names: a release question's as the
    release has it; cartoqa's own names only ("" dropped, as for STMF: an unnamed feature is
    in the count, and the published recall, by membership in the answer's list from which it
    drops every blank name, could never find a "")."""
    truth = sample.ground_truth
    if not isinstance(truth, FeatureTableTruth):
        raise DatasetError(f"sample {sample.id!r} has no feature-table truth")
    own = _from_release(sample)
    out = {}
    for key, name in TYPE_NAMES.items():
        entry = truth.features.get(key) or FeatureCount(count=0)
        names = list(entry.names) if own else [n for n in entry.names if n]
        out[name] = {"count": entry.count, "names": names}
    return out


#: cartoqa's type keys that are none of the published parser's spellings ("pharmacy", ...)
_OWN_KEYS = {key: name for key, name in TYPE_NAMES.items() if key not in mtmf.ALTERNATE_NAMES[name]}


def _in_published_names(sample: Sample, response: str) -> tuple[str, Any]:
    """A reply to cartoqa's own MTMF question (which asks with cartoqa's type keys) with those
    keys given the release's names, as if asked in the release's words; and the JSON value as
    the reply wrote it (None when the reply is unchanged).  A release question's reply, or
    one that is no JSON object, is left as it is."""
    if _from_release(sample):
        return response, None
    text = response.replace("```json", "").replace("```", "").replace("<|eot|>", "")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # as the published parser: then no JSON at all
        return response, None
    if not isinstance(value, dict) or not any(str(k).lower() in _OWN_KEYS for k in value):
        return response, None
    renamed = {_OWN_KEYS.get(str(k).lower(), k): v for k, v in value.items()}
    return json.dumps(renamed, ensure_ascii=False), value


def _mtmf_key(sample: Sample) -> str:
    area, image = _mtmf_place(sample)
    return f"{area}_{image[:-4]}"  # as the published script names the response file


def _mtmf_record(sample: Sample, response: str | None) -> tuple[str, list | str]:
    text, raw = _in_published_names(sample, _response(response))
    record = mtmf.parse(text, _mtmf_table(sample))
    if isinstance(record, list) and raw is not None:
        record = [record[0], raw]
    suffix = ".txt" if isinstance(record, str) else ".json"
    return _mtmf_key(sample) + suffix, record


def _mtmf_write_questions(samples: Sequence[Sample], dataset: Path, root: Path) -> None:
    images = _Images(dataset, root)
    written: set[str] = set()
    for s in samples:
        area, image = _mtmf_place(s)
        target = f"{TRUTHS}/{area}/{Path(image).stem}.json"
        if target in written:
            raise DatasetError(f"two MTMF samples are the map {area}/{image}")
        written.add(target)
        images.put(s, f"{MAPS}/{area}/{image}")
        _write_json(Path(root) / target, _mtmf_table(s) | {CARTOQA_KEY: _sample_json(s)})


def _mtmf_write_replies(
    samples: Sequence[Sample], replies: Mapping[str, str | None], folder: Path
) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for s in samples:
        key, record = _mtmf_record(s, replies.get(s.id))
        if isinstance(record, str):
            (folder / key).write_text(record, encoding="utf-8")
        else:
            _write_json(folder / key, record)


def _mtmf_detect(folder: Path) -> bool:
    folder = Path(folder)
    if any(folder.glob("*.txt")):
        return True
    for path in sorted(folder.glob("*.json"))[:5]:
        try:
            if isinstance(json.loads(path.read_text(encoding="utf-8")), list):
                return True
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
    return False


def _mtmf_replies(folder: Path, root: Path | None) -> list[Reply]:
    folder = Path(folder)
    base = _root_for(folder, root)
    prompts = load_prompts()
    by_key: dict[str, Sample] = {}
    if base is not None:
        by_key = {
            f"{area}_{image[:-4]}": _mtmf_sample(
                area, image, _load_json(truth, "MTMF truth"), prompts, str(truth)
            )
            for area, image, truth in _mtmf_maps(base)
        }
    out = []
    for path in sorted([*folder.glob("*.json"), *folder.glob("*.txt")]):
        text = path.read_text(encoding="utf-8", errors="replace")
        record: list | str
        if path.suffix == ".txt":
            record, response = text, text
        else:
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DatasetError(
                    f"{path} is not JSON ({exc}); the published code saved it so"
                ) from None
            if not isinstance(record, list) or len(record) < 2:
                raise DatasetError(f"{path}: a list [normalised, raw] was expected")
            response = json.dumps(record[1], ensure_ascii=False)
        sample = by_key.get(path.stem)
        if sample is None and base is not None:
            raise DatasetError(
                f"{path} answers no map of the release at {base}: expected a map "
                f"{MAPS}/<area>/<map> with its truth, named <area>_<map> here"
            )
        sample = sample or _mtmf_from_record(path, record)
        out.append(Reply(path.name, record, sample, response))
    return sorted(out, key=lambda r: r.key)


def _mtmf_from_record(path: Path, record: list | str) -> Sample:
    """A map's sample when no release is at hand: its truth from the stored record, which
    holds it only where the record lists all 22 types."""
    table = record[0] if isinstance(record, list) and isinstance(record[0], dict) else {}
    truth = {
        name: {"count": entry.get("true_count"), "names": entry.get("true_names")}
        for name, entry in table.items()
        if isinstance(entry, dict)
    }
    if isinstance(record, str) or any(n not in truth for n in RELEASE_TYPES):
        raise DatasetError(
            f"{path}: the record does not hold the truth of all 22 types, and no release was "
            "found beside Responses/; give the release with --release DIR"
        )
    area, _, stem = path.stem.rpartition("_")
    return _mtmf_sample(area or "map", f"{stem}.png", truth, load_prompts(), str(path))


def _mtmf_evaluate(replies: Sequence[Reply], seed: int) -> list[Evaluation]:
    truths = {r.key: _mtmf_table(r.sample) for r in replies}
    return [mtmf.evaluate([(r.key, r.record) for r in replies], seed=seed, truths=truths)]


def mtmf_answer(sample: Sample) -> str:
    """What the oracle writes for MTMF: the truth as one JSON object, keyed by the release's
    type names for a release question (which asks by them; the published parser reads no
    other spelling), by cartoqa's keys for cartoqa's own."""
    if not _from_release(sample):
        return sample.ground_truth.answer_text()
    return json.dumps(_mtmf_table(sample), ensure_ascii=False)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:1000]


def mtmf_original(sample: Sample, response: str | None) -> SampleScore:
    """MTMF by the published arithmetic: the record ``get_response_mtmf.py`` would store (a
    reply that is no JSON: the ``.txt`` the published evaluator crashes on)."""
    key, record = _mtmf_record(sample, response)
    item = mtmf.item(key, record, _mtmf_table(sample))
    ok = not item.crashed and item.values.get("rmse") == 0 and item.values.get("f1") == 1.0
    parsed = _json_text(record[0]) if isinstance(record, list) else None
    return _score(item, parsed, ok)


def mtmf_original_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    """MTMF's published table over scored rows."""
    return mtmf.table(_items(rows, _mtmf_key_of))


def _mtmf_key_of(sample: Sample, score: SampleScore) -> str:
    # a reply the published script could not read was kept as a .txt (and crashes)
    return _mtmf_key(sample) + (".json" if score.parsed is not None else ".txt")


MTMF = ReleaseForm(
    folder="MTMF",
    top="MapFeatureUnderstanding/MTMF_task",
    tasks=("mtmf",),
    read_questions=_mtmf_questions,
    read_replies=_mtmf_replies,
    detect=_mtmf_detect,
    evaluate=_mtmf_evaluate,
    write_questions=_mtmf_write_questions,
    write_replies=_mtmf_write_replies,
)
