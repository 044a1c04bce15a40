"""The release's MTMF folder as a ``ReleaseForm`` (``MTMF``), and MTMF's "original" mode on a
cartoqa dataset (``features`` says the layout).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cartoqa.errors import DatasetError
from cartoqa.records import (
    FeatureCount,
    FeatureTableTruth,
    Metadata,
    Sample,
    SampleScore,
)
from cartoqa.tasks.templates import PromptSet, load_prompts
from evaluators.published import Evaluation, mtmf

from .features import (
    CARTOQA_KEY,
    IMAGE_SUFFIXES,
    MAPS,
    RELEASE_TYPES,
    TRUTHS,
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
    _root_for,
    _sample_json,
    _score,
    _unique,
    _write_json,
)
from .form import ReleaseForm, Reply

__all__ = [
    "MTMF",
    "mtmf_answer",
    "mtmf_original",
    "mtmf_original_table",
]

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
