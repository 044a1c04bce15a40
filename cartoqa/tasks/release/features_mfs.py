"""The release's MFS folder as a ``ReleaseForm`` (``MFS``), and MFS's "original" mode on a
cartoqa dataset (``features`` says the layout).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError
from cartoqa.records import (
    ChoiceTruth,
    Metadata,
    Sample,
    SampleScore,
)
from cartoqa.tasks.templates import PromptSet, load_prompts
from evaluators.published import Evaluation, mfs, rng_for

from .features import (
    CARTOQA_KEY,
    LETTERS,
    MFS_FILE,
    ORIGINAL_SEED,
    SYMBOLS,
    _embedded,
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
    _unique,
    _write_json,
)
from .form import ReleaseForm, Reply

__all__ = [
    "MFS",
    "mfs_original",
    "mfs_original_table",
]

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
