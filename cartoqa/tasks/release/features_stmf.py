"""The release's STMF folder as a ``ReleaseForm`` (``STMF``), and the "original" mode of the
three STMF requests on a cartoqa dataset (``features`` says the layout).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError
from cartoqa.records import (
    BooleanTruth,
    CountTruth,
    Metadata,
    NamesTruth,
    Sample,
    SampleScore,
)
from cartoqa.tasks.templates import PromptSet, load_prompts
from evaluators.published import Evaluation, rng_for, stmf

from .features import (
    CARTOQA_KEY,
    MAPS,
    ORIGINAL_SEED,
    STMF_DIR,
    TYPE_NAMES,
    _embedded,
    _from_release,
    _id_part,
    _Images,
    _items,
    _load_json,
    _meta,
    _need_dir,
    _prompt,
    _provenance,
    _release_image,
    _repointed,
    _response,
    _sample_json,
    _score,
    _type_key,
    _unique,
    _write_json,
)
from .form import ReleaseForm, Reply

__all__ = [
    "REQUESTS",
    "STMF",
    "stmf_count_original",
    "stmf_count_table",
    "stmf_names_original",
    "stmf_names_table",
    "stmf_presence_original",
    "stmf_presence_table",
]

#: the release's STMF requests (folder and file names) -> cartoqa's tasks
REQUESTS = {"presence": "stmf_presence", "counting": "stmf_count", "name_listing": "stmf_names"}
_REQUEST_OF = {v: k for k, v in REQUESTS.items()}
#: what cartoqa's own samples call the request (``metadata.request``)
_REQUEST_WORD = {"presence": "presence", "counting": "count", "name_listing": "names"}

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
