"""The release's navigation folders (RLE, MML, SRN) <-> cartoqa's rle, mml and srn samples.

Release layout (``Dataset/CartoMapQA/``; the published ``get_response_*.py`` for replies):

- **RLE**: ``MapScaleUnderstanding/Scale_understanding.json``, a list of routes
  ``{route_ID, Ans_meters, Ans_feet, difficulty, city, zoom_scale}``, each asked in metres and in
  feet (two samples, ``rle-<ID>-m`` and ``rle-<ID>-ft``) on ``_Route/route_<ID>.png``; replies
  ``Responses/RLE/<model>/route_<ID>_<meters|feet>_<Difficulty>.json`` holding
  ``Correct_answer`` (the length in the unit asked, rounded to 3 decimals), ``Response``,
  ``Result`` (the published parser's token, or -1), ``Measure``, ``Difficulty``, ``City``,
  ``Zoom_level``.
- **MML**: ``MapMarkerLocalization/_marker_info/<n>.json`` (``road_1``, ``road_2``,
  ``zoom_level``), one map per marker colour ``{blue,red}/<n>.png`` (samples ``mml-<n>-blue``,
  ``mml-<n>-red``); replies ``<n>-<colour>.json``: the marker file plus ``Marker_color``,
  ``Response`` and ``Answer`` (the parsed JSON, or the raw reply when it does not parse).
- **SRN**: ``MapNavigation/_routes/<n>.json`` (``route_directions`` "[blue, ..., red]",
  ``origin``/``destination`` as ``[node, lat, lon]``, ``zoom_level``), ``road_dict/<n>.json``,
  ``road_conjunction/<n>.json``, ``_maps/<n>.png`` (sample ``srn-<n>``); replies ``<n>.json``:
  the route file plus ``Response`` and ``Answer`` (the parsed list).  Scoring a reply needs the
  release's two road tables, so ``read_replies`` needs the release root (given, or
  ``Dataset/CartoMapQA`` beside ``Responses/``).

The SRN truth's road network is made from the two tables, and the tables written from it, by
``road_tables`` (which says what a round trip keeps).

``write_questions`` adds to each question record a key "cartoqa" (ignored by the published
scripts): the list of the samples it was made from, which ``read_questions`` gives back as they
were (their image re-pointed to the release's).  A cartoqa MML sample has one marker colour,
so its export has the map of that colour only: the published ``evaluate_mml.py`` scores the
replies, but ``get_response_mml.py``, which asks both colours of every marker file, would not
find the other map.

The original mode (``score --mode original``): each sample's reply becomes the record the
published ``get_response_*.py`` would have saved (the same function ``write_replies`` uses),
scored by ``evaluators.published`` and reduced by its ``table``, so it equals ``score-release``
on the same replies exported.  No reply (None) is the empty reply; a reply the published parser
raises on (the published script saves no file then) is stored without its parsed field, on
which the published evaluator fails: scored, and counted crashed.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.errors import DatasetError
from cartoqa.records import (
    NumberTruth,
    Prompt,
    Provenance,
    RoadPairTruth,
    RouteTruth,
    Sample,
    SampleScore,
)
from cartoqa.tasks.templates import PromptSet, load_prompts
from evaluators.navigation import published_tables
from evaluators.published import Item
from evaluators.published import mml as published_mml
from evaluators.published import rle as published_rle
from evaluators.published import srn as published_srn
from evaluators.published._result import crash_text

from .form import RELEASE_IMAGES, ReleaseForm, Reply
from .road_tables import network_from_tables, road_links, route_steps

__all__ = [
    "MML_FORM",
    "RLE_FORM",
    "SRN_FORM",
    "RouteReply",
    "mml_key",
    "mml_original",
    "mml_original_table",
    "rle_key",
    "rle_original",
    "rle_original_table",
    "srn_key",
    "srn_original",
    "srn_original_table",
]

SOURCE = "CartoMapQA release (Ung et al.), © OpenStreetMap contributors"
FEET_PER_M = 1 / 0.3048
_UNITS = {"m": "meters", "ft": "feet"}
_UNIT_OF = {v: k for k, v in _UNITS.items()}
_COLOURS = ("blue", "red")

RLE_DIR = "MapScaleUnderstanding"
MML_DIR = "MapMarkerLocalization"
SRN_DIR = "MapNavigation"

_RLE_KEY = re.compile(r"^route_(.+)_(meters|feet)_([^_]+)\.json$")
_MML_KEY = re.compile(r"^(.+)-(blue|red)\.json$")


# ------------------------------------------------------------------ shared helpers


def _load(path: Path, what: str) -> Any:
    if not path.is_file():
        where = path.parent if path.parent.is_dir() else path.parent.parent
        raise DatasetError(
            f"{path} is missing: expected {what} there (in {where}); is a folder of the "
            "release missing or renamed?"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise DatasetError(f"{path}: not a readable JSON file ({str(exc)[:200]})") from None


def _folder(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise DatasetError(
            f"{path} is missing: expected the folder of {what} there (in {path.parent}); is "
            "a folder of the release missing or renamed?"
        )
    return path


def _image(root: Path, rel: str) -> str:
    if not (root / rel).is_file():
        raise DatasetError(
            f"{root / rel} is missing: expected the map image {rel} under the release root "
            f"{root}; is a folder of the release missing or renamed?"
        )
    return f"{RELEASE_IMAGES}/{rel}"


def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._:-]", "_", str(text))


def _provenance(prompts: PromptSet, folder: str) -> Provenance:
    return Provenance(
        generator=f"cartoqa {__version__} import-release {folder}",
        source=SOURCE,
        prompts_sha256=prompts.sha256,
    )


def _prompt(prompts: PromptSet, task: str, image: str, **fields: Any) -> Prompt:
    system = prompts.text("map.release.system") if prompts.has("map.release.system") else None
    return Prompt(text=prompts.text(f"map.release.{task}", **fields), system=system, images=[image])


def _kept(record: Any, image: str, where: Path) -> list[Sample] | None:
    """The samples a question record's "cartoqa" key holds (as ``write_questions`` wrote
    them), their image re-pointed to ``image``; None when it has none."""
    if not isinstance(record, dict) or "cartoqa" not in record:
        return None
    held = record["cartoqa"]
    held = held if isinstance(held, list) else [held]
    out = []
    for data in held:
        try:
            s = Sample.model_validate(data)
        except ValueError as exc:
            raise DatasetError(f"{where}: its 'cartoqa' sample does not read ({exc})") from None
        out.append(s.model_copy(update={"prompt": s.prompt.model_copy(update={"images": [image]})}))
    return out


def _stem(sample: Sample, task: str) -> str:
    """The release's file key a cartoqa sample is written under: its image's name (its id
    where it has none), less the task's own prefix ("images/rle-0001.png" -> "0001";
    "release/.../route_7.png" -> "7")."""
    stem = Path(sample.prompt.images[0]).stem if sample.prompt.images else sample.id
    for prefix in (f"{task}-", *(("route_",) if task == "rle" else ())):
        if stem.startswith(prefix) and len(stem) > len(prefix):
            return stem[len(prefix) :]
    return stem


def _copy_image(sample: Sample, dataset: Path, target: Path) -> None:
    if not sample.prompt.images:
        raise DatasetError(f"sample {sample.id}: it has no image; the release layout needs one")
    source = Path(dataset) / sample.prompt.images[0]
    if not source.is_file():
        raise DatasetError(
            f"sample {sample.id}: its image {source} is missing; export from the dataset "
            "folder its images are under"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")


def _dump(sample: Sample) -> dict[str, Any]:
    return sample.model_dump(mode="json")


def _number(value: Any, where: Path, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DatasetError(f"{where}: {name} is {value!r}, not a number")
    return float(value)


def _zoom(value: Any, where: Path) -> int:
    try:
        z = int(value)
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: zoom {value!r} is not a whole number") from None
    if not 0 <= z <= 22:
        raise DatasetError(f"{where}: zoom {value!r} is not a zoom level (0-22)")
    return z


def _loose_number(value: Any) -> float:
    """A stored record's number, NaN where it holds none (its item says what fails)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def _loose_zoom(value: Any) -> int | None:
    """A stored record's zoom level, None where it holds none."""
    try:
        z = int(value)
    except (TypeError, ValueError):
        return None
    return z if 0 <= z <= 22 else None


_NOT_PARSED = object()


def _parse(parse: Callable[[str], Any], text: str) -> Any:
    """The published parser's value for ``text``, or ``_NOT_PARSED`` where the published parser
    raises (its ``get_response_*.py`` then saves no file: the record is written without the
    parsed field, which the published evaluator, and ``item()``, then fail on: crashed)."""
    try:
        return parse(text)
    except (ValueError, IndexError, TypeError, RecursionError):
        return _NOT_PARSED


def _with(record: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    if value is not _NOT_PARSED:
        record[key] = value
    return record


def _score_of(item: Any, parsed: str | None, correct: bool | None) -> SampleScore:
    return SampleScore(
        correct=correct,
        values=dict(item.values)
        | {"crashed": float(item.crashed is not None), "drawn": float(bool(item.drawn))},
        parsed=parsed,
        why=item.crashed or item.why,
    )


def _items(
    rows: Sequence[tuple[Sample, SampleScore]],
    key: Callable[[Sample], str],
    groups: Callable[[Sample], dict[str, str]],
) -> list[Any]:
    """The published ``Item``s the original scores of ``rows`` were made from."""
    out = []
    for sample, score in rows:
        values = {k: v for k, v in score.values.items() if k not in ("crashed", "drawn")}
        crashed = score.why if score.values.get("crashed") else None
        out.append(
            Item(
                key(sample),
                values,
                groups=groups(sample),
                crashed=crashed,
                drawn=bool(score.values.get("drawn")),
                why=score.why,
            )
        )
    return out


# ------------------------------------------------------------------ RLE


def _rle_sample(
    prompts: PromptSet,
    route_id: str,
    unit: str,
    metres: float,
    feet: float,
    difficulty: str,
    city: Any,
    zoom: int | None,
) -> Sample:
    value, other = (metres, feet) if unit == "m" else (feet, metres)
    image = f"{RELEASE_IMAGES}/{RLE_DIR}/_Route/route_{route_id}.png"
    return Sample(
        id=f"rle-{_safe_id(route_id)}-{unit}",
        task="rle",
        prompt=_prompt(prompts, "rle", image, unit=_UNITS[unit]),
        ground_truth=NumberTruth(
            value=value, unit=unit, equivalents={"ft" if unit == "m" else "m": other}
        ),
        metadata={
            "city": None if city is None else str(city),
            "zoom": zoom,
            "difficulty": difficulty.lower(),
            "unit": unit,
        },
        provenance=_provenance(prompts, "RLE"),
    )


def _rle_questions(root: Path, prompts: PromptSet) -> list[Sample]:
    path = Path(root) / RLE_DIR / "Scale_understanding.json"
    _folder(path.parent, "RLE (MapScaleUnderstanding/)")
    data = _load(path, "the RLE routes (a list of {route_ID, Ans_meters, Ans_feet, ...})")
    if not isinstance(data, list):
        raise DatasetError(f"{path}: a list of routes expected, found {type(data).__name__}")
    out: list[Sample] = []
    seen: set[str] = set()
    for i, route in enumerate(data):
        where = Path(f"{path} item {i}")
        if not isinstance(route, dict):
            raise DatasetError(f"{where}: a route object expected, found {route!r:.80}")
        missing = [
            k
            for k in ("route_ID", "Ans_meters", "Ans_feet", "difficulty", "zoom_scale")
            if k not in route
        ]
        if missing:
            raise DatasetError(f"{where}: no {', '.join(missing)} (route_ID, Ans_meters, ...)")
        rid = str(route["route_ID"])
        if rid in seen:
            raise DatasetError(f"{path}: route_ID {rid!r} is there twice")
        seen.add(rid)
        image = _image(root, f"{RLE_DIR}/_Route/route_{rid}.png")
        kept = _kept(route, image, where)
        if kept is not None:
            out += kept
            continue
        metres = _number(route["Ans_meters"], where, "Ans_meters")
        feet = _number(route["Ans_feet"], where, "Ans_feet")
        zoom = _zoom(route["zoom_scale"], where)
        for unit in ("m", "ft"):
            out.append(
                _rle_sample(
                    prompts,
                    rid,
                    unit,
                    metres,
                    feet,
                    str(route["difficulty"]),
                    route.get("city"),
                    zoom,
                )
            )
    return out


def _rle_lengths(sample: Sample) -> tuple[float, float]:
    truth = sample.ground_truth
    assert isinstance(truth, NumberTruth)
    if truth.unit == "ft":
        return truth.equivalents.get("m", truth.value / FEET_PER_M), truth.value
    return truth.value, truth.equivalents.get("ft", truth.value * FEET_PER_M)


def _rle_unit(sample: Sample) -> str:
    truth = sample.ground_truth
    unit = sample.metadata.unit or (truth.unit if isinstance(truth, NumberTruth) else None)
    return unit if unit in _UNITS else "m"


def _rle_difficulty(sample: Sample) -> str:
    return (sample.metadata.difficulty or "").capitalize()


def rle_key(sample: Sample) -> str:
    """The response file name of an RLE sample's reply."""
    return (
        f"route_{_stem(sample, 'rle')}_{_UNITS[_rle_unit(sample)]}_{_rle_difficulty(sample)}.json"
    )


def _rle_record(sample: Sample, response: str | None) -> dict[str, Any]:
    metres, feet = _rle_lengths(sample)
    unit = _rle_unit(sample)
    text = response or ""
    record = {
        "Correct_answer": round(metres if unit == "m" else feet, 3),
        "Response": text,
        "Measure": _UNITS[unit],
        "Difficulty": _rle_difficulty(sample),
        "City": sample.metadata.city,
        "Zoom_level": sample.metadata.zoom,
    }
    return _with(record, "Result", _parse(published_rle.parse, text))


def _rle_groups(sample: Sample) -> dict[str, str]:
    return {"difficulty": _rle_difficulty(sample), "unit": _UNITS[_rle_unit(sample)]}


def rle_original(sample: Sample, response: str | None) -> SampleScore:
    """RLE by the published arithmetic: values {"true", "pred" (None: dropped, no number
    read), "crashed", "drawn"}; no verdict (the published code has none)."""
    record = _rle_record(sample, response)
    item = published_rle.item(rle_key(sample), record)
    result = record.get("Result", -1)
    return _score_of(item, None if result == -1 else str(result), None)


def rle_original_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    return published_rle.table(_items(rows, rle_key, _rle_groups))


def _rle_read_replies(folder: Path, root: Path | None) -> list[Reply]:
    folder = _folder(Path(folder), "a model's RLE responses")
    known: dict[str, Sample] = {}
    if root is not None:
        known = {s.id: s for s in _rle_questions(Path(root), load_prompts())}
    prompts = load_prompts()
    out = []
    for path in sorted(folder.glob("*.json")):
        m = _RLE_KEY.match(path.name)
        if not m:
            raise DatasetError(
                f"{path.name} in {folder}: an RLE response file is named "
                "route_<ID>_<meters|feet>_<Simple|Complex>.json"
            )
        rid, unit = m.group(1), _UNIT_OF[m.group(2)]
        record = _load(path, "an RLE response record")
        if not isinstance(record, dict):
            raise DatasetError(f"{path}: one JSON object expected")
        sid = f"rle-{_safe_id(rid)}-{unit}"
        if root is not None:
            if sid not in known:
                raise DatasetError(
                    f"{path}: route {rid!r} is no route of the release at {root} "
                    f"({RLE_DIR}/Scale_understanding.json)"
                )
            sample = known[sid]
        else:
            value = _loose_number(record.get("Correct_answer"))
            metres, feet = (
                (value, value * FEET_PER_M) if unit == "m" else (value / FEET_PER_M, value)
            )
            zoom = record.get("Zoom_level")
            sample = _rle_sample(
                prompts,
                rid,
                unit,
                metres,
                feet,
                str(record.get("Difficulty", m.group(3))),
                record.get("City"),
                _loose_zoom(zoom),
            )
        response = record.get("Response")
        out.append(
            Reply(path.name, record, sample, response if isinstance(response, str) else None)
        )
    return out


def _rle_detect(folder: Path) -> bool:
    return any(_RLE_KEY.match(p.name) for p in Path(folder).glob("*.json"))


def _rle_evaluate(replies: Sequence[Reply], seed: int) -> list[Any]:
    return [published_rle.evaluate([(r.key, r.record) for r in replies], seed=seed)]


def _rle_write_questions(samples: Sequence[Sample], dataset: Path, root: Path) -> None:
    routes: dict[str, list[Sample]] = {}
    for s in samples:
        routes.setdefault(_stem(s, "rle"), []).append(s)
    records = []
    for rid, group in routes.items():
        images = {tuple(s.prompt.images) for s in group}
        units = [_rle_unit(s) for s in group]
        if len(images) > 1 or len(set(units)) < len(units):
            raise DatasetError(
                f"samples {', '.join(s.id for s in group)} would all be RLE route {rid!r}; "
                "each route is one image asked once per unit"
            )
        first = group[0]
        metres, feet = _rle_lengths(first)
        records.append(
            {
                "route_ID": rid,
                "Ans_meters": metres,
                "Ans_feet": feet,
                "difficulty": _rle_difficulty(first),
                "city": first.metadata.city,
                "zoom_scale": first.metadata.zoom,
                "cartoqa": [_dump(s) for s in group],
            }
        )
        _copy_image(first, dataset, Path(root) / RLE_DIR / "_Route" / f"route_{rid}.png")
    _write_json(Path(root) / RLE_DIR / "Scale_understanding.json", records)


def _rle_write_replies(
    samples: Sequence[Sample], replies: Mapping[str, str | None], folder: Path
) -> None:
    for s in samples:
        if s.id in replies:
            _write_json(Path(folder) / rle_key(s), _rle_record(s, replies[s.id]))


# ------------------------------------------------------------------ MML


def _mml_sample(
    prompts: PromptSet,
    n: str,
    colour: str,
    info: Mapping[str, Any],
    where: Path,
    image: str,
    *,
    strict: bool = True,
) -> Sample:
    """``strict``: a marker file (a road name or zoom that is not one is a ``DatasetError``);
    else a stored response record, read as it is (the published evaluator fails on the item
    itself, and says so)."""
    roads = [info.get("road_1"), info.get("road_2")]
    zoom = info.get("zoom_level")
    if strict:
        for k, v in zip(("road_1", "road_2"), roads, strict=True):
            if not isinstance(v, str):
                raise DatasetError(f"{where}: {k} is {v!r}, not a road name")
        zoom = None if zoom is None else _zoom(zoom, where)
    else:
        roads = [v if isinstance(v, str) else "" for v in roads]
        zoom = _loose_zoom(zoom)
    city = info.get("city", info.get("City"))
    return Sample(
        id=f"mml-{_safe_id(n)}-{colour}",
        task="mml",
        prompt=_prompt(prompts, "mml", image, colour=colour),
        ground_truth=RoadPairTruth(road_1=roads[0], road_2=roads[1]),
        metadata={"zoom": zoom, "colour": colour, "city": None if city is None else str(city)},
        provenance=_provenance(prompts, "MML"),
    )


def _mml_questions(root: Path, prompts: PromptSet) -> list[Sample]:
    base = _folder(Path(root) / MML_DIR, "MML (MapMarkerLocalization/)")
    info_dir = _folder(base / "_marker_info", "the MML marker files (<n>.json)")
    for c in _COLOURS:
        _folder(base / c, f"the MML maps with a {c} marker (<n>.png)")
    out: list[Sample] = []
    for path in sorted(info_dir.glob("*.json")):
        n = path.stem
        info = _load(path, "an MML marker file")
        if not isinstance(info, dict):
            raise DatasetError(f"{path}: one JSON object expected")
        if "cartoqa" in info:
            held = info["cartoqa"] if isinstance(info["cartoqa"], list) else [info["cartoqa"]]
            for data in held:
                colour = (
                    (data.get("metadata") or {}).get("colour") if isinstance(data, dict) else None
                )
                image = _image(root, f"{MML_DIR}/{colour}/{n}.png")
                out += _kept({"cartoqa": data}, image, path) or []
            continue
        for c in _COLOURS:
            image = _image(root, f"{MML_DIR}/{c}/{n}.png")
            out.append(_mml_sample(prompts, n, c, info, path, image))
    return out


def _mml_colour(sample: Sample) -> str:
    return sample.metadata.colour if sample.metadata.colour in _COLOURS else "blue"


def mml_key(sample: Sample) -> str:
    """The response file name of an MML sample's reply."""
    return f"{_stem(sample, 'mml')}-{_mml_colour(sample)}.json"


def _mml_info(sample: Sample) -> dict[str, Any]:
    truth = sample.ground_truth
    assert isinstance(truth, RoadPairTruth)
    info: dict[str, Any] = {
        "road_1": truth.road_1,
        "road_2": truth.road_2,
        "zoom_level": sample.metadata.zoom,
    }
    if sample.metadata.city is not None:
        info["city"] = sample.metadata.city
    return info


def _mml_record(sample: Sample, response: str | None, info: dict[str, Any]) -> dict[str, Any]:
    text = response or ""
    parsed = _parse(published_mml.parse, text)
    record = {**info, "Marker_color": _mml_colour(sample), "Response": text}
    return _with(record, "Answer", text if parsed is None else parsed)


def _mml_groups(sample: Sample) -> dict[str, str]:
    return {"colour": _mml_colour(sample), "zoom": str(sample.metadata.zoom)}


def mml_original(sample: Sample, response: str | None) -> SampleScore:
    """MML by the published arithmetic: values {"correct", "answered", "crashed", "drawn"}."""
    record = _mml_record(sample, response, _mml_info(sample))
    item = published_mml.item(mml_key(sample), record)
    answer = record.get("Answer", record["Response"])
    parsed = None if answer == record["Response"] else json.dumps(answer, ensure_ascii=False)
    return _score_of(item, parsed, bool(item.values.get("correct")))


def mml_original_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    return published_mml.table(_items(rows, mml_key, _mml_groups))


def _mml_read_replies(folder: Path, root: Path | None) -> list[Reply]:
    folder = _folder(Path(folder), "a model's MML responses")
    prompts = load_prompts()
    out = []
    for path in sorted(folder.glob("*.json")):
        m = _MML_KEY.match(path.name)
        if not m:
            raise DatasetError(
                f"{path.name} in {folder}: an MML response file is named <n>-<blue|red>.json"
            )
        n, colour = m.group(1), m.group(2)
        record = _load(path, "an MML response record")
        if not isinstance(record, dict):
            raise DatasetError(f"{path}: one JSON object expected")
        image = f"{RELEASE_IMAGES}/{MML_DIR}/{colour}/{n}.png"
        kept = _kept(record, image, path)
        mine = [s for s in kept or [] if s.metadata.colour == colour]
        sample = (
            mine[0] if mine else _mml_sample(prompts, n, colour, record, path, image, strict=False)
        )
        response = record.get("Response")
        out.append(
            Reply(path.name, record, sample, response if isinstance(response, str) else None)
        )
    return out


def _mml_detect(folder: Path) -> bool:
    return any(_MML_KEY.match(p.name) for p in Path(folder).glob("*.json"))


def _mml_evaluate(replies: Sequence[Reply], seed: int) -> list[Any]:
    return [published_mml.evaluate([(r.key, r.record) for r in replies], seed=seed)]


def _mml_write_questions(samples: Sequence[Sample], dataset: Path, root: Path) -> None:
    markers: dict[str, list[Sample]] = {}
    for s in samples:
        markers.setdefault(_stem(s, "mml"), []).append(s)
    base = Path(root) / MML_DIR
    for c in _COLOURS:
        (base / c).mkdir(parents=True, exist_ok=True)
    for n, group in markers.items():
        colours = [_mml_colour(s) for s in group]
        if len(set(colours)) < len(colours) or len({_mml_info(s)["road_1"] for s in group}) > 1:
            raise DatasetError(
                f"samples {', '.join(s.id for s in group)} would all be MML marker {n!r}; "
                "each marker file is one junction, asked once per colour"
            )
        _write_json(
            base / "_marker_info" / f"{n}.json",
            {**_mml_info(group[0]), "cartoqa": [_dump(s) for s in group]},
        )
        for s in group:
            _copy_image(s, dataset, base / _mml_colour(s) / f"{n}.png")


def _mml_write_replies(
    samples: Sequence[Sample], replies: Mapping[str, str | None], folder: Path
) -> None:
    for s in samples:
        if s.id in replies:
            info = {**_mml_info(s), "cartoqa": [_dump(s)]}
            _write_json(Path(folder) / mml_key(s), _mml_record(s, replies[s.id], info))


# ------------------------------------------------------------------ SRN


def _srn_question(root: Path, n: str, prompts: PromptSet) -> Sample:
    base = Path(root) / SRN_DIR
    path = base / "_routes" / f"{n}.json"
    route = _load(path, "an SRN route file")
    image = _image(root, f"{SRN_DIR}/_maps/{n}.png")
    kept = _kept(route, image, path)
    if kept:
        return kept[0]
    if not isinstance(route, dict):
        raise DatasetError(f"{path}: one JSON object expected")
    for k in ("route_directions", "origin", "destination", "zoom_level"):
        if k not in route:
            raise DatasetError(
                f"{path}: no {k} (route_directions, origin, destination, zoom_level)"
            )
    road_dict = _load(base / "road_dict" / f"{n}.json", f"the road dictionary of SRN route {n}")
    conj = _load(base / "road_conjunction" / f"{n}.json", f"the junction table of SRN route {n}")
    network = network_from_tables(route["origin"], route["destination"], road_dict, conj, path)
    steps = route_steps(route["route_directions"], road_dict, path)
    city = route.get("city", route.get("City"))
    return Sample(
        id=f"srn-{_safe_id(n)}",
        task="srn",
        prompt=_prompt(prompts, "srn", image),
        ground_truth=RouteTruth(steps=steps, network=network),
        metadata={
            "zoom": _zoom(route["zoom_level"], path),
            "city": None if city is None else str(city),
        },
        provenance=_provenance(prompts, "SRN"),
    )


def _srn_questions(root: Path, prompts: PromptSet) -> list[Sample]:
    base = _folder(Path(root) / SRN_DIR, "SRN (MapNavigation/)")
    routes = _folder(base / "_routes", "the SRN routes (<n>.json)")
    for sub, what in (
        ("road_dict", "the SRN road dictionaries (<n>.json)"),
        ("road_conjunction", "the SRN junction tables (<n>.json)"),
        ("_maps", "the SRN maps (<n>.png)"),
    ):
        _folder(base / sub, what)
    return [_srn_question(root, p.stem, prompts) for p in sorted(routes.glob("*.json"))]


def srn_key(sample: Sample) -> str:
    """The response file name of an SRN sample's reply."""
    return f"{_stem(sample, 'srn')}.json"


def _srn_tables(sample: Sample) -> tuple[list[Any], list[Any], dict, dict]:
    truth = sample.ground_truth
    assert isinstance(truth, RouteTruth)
    if truth.network is None:  # older data: no road tables, so only an exact answer connects
        return [0, None, None], [0, None, None], {}, {}
    return published_tables(truth.network)


def _srn_route(sample: Sample) -> dict[str, Any]:
    truth = sample.ground_truth
    assert isinstance(truth, RouteTruth)
    origin, destination, _, _ = _srn_tables(sample)
    return {
        "route_directions": "[" + ", ".join(truth.steps) + "]",
        "origin": origin,
        "destination": destination,
        "zoom_level": sample.metadata.zoom,
    }


def _srn_record(sample: Sample, response: str | None, route: dict[str, Any]) -> dict[str, Any]:
    text = response or ""
    return _with({**route, "Response": text}, "Answer", _parse(published_srn.parse, text))


def srn_original(sample: Sample, response: str | None) -> SampleScore:
    """SRN by the published arithmetic: values {"exact", "step_accuracy", "connected",
    "crashed", "drawn"}, the tables from the sample's road network."""
    _, _, conj, road_dict = _srn_tables(sample)
    record = _srn_record(sample, response, _srn_route(sample))
    item = published_srn.item(srn_key(sample), record, road_dict, conj)
    answer = record.get("Answer")
    parsed = None if answer is None else json.dumps(answer, ensure_ascii=False)
    score = _score_of(item, parsed, bool(item.values.get("exact")))
    if "Answer" not in record:  # say what the published parser raised, not the evaluator
        why = _parser_raises(published_srn.parse, record["Response"])
        score = score.model_copy(update={"why": f"{why} (the published parser; no record saved)"})
    return score


def _parser_raises(parse: Callable[[str], Any], text: str) -> str:
    """What the published parser raises on ``text`` (one that ``_parse`` found raising)."""
    try:
        parse(text)
    except (ValueError, IndexError, TypeError, RecursionError) as exc:
        return crash_text(exc)
    return "no error"


def _srn_groups(sample: Sample) -> dict[str, str]:
    return {"zoom": str(sample.metadata.zoom)}


def srn_original_table(rows: Sequence[tuple[Sample, SampleScore]]) -> dict[str, dict[str, float]]:
    return published_srn.table(_items(rows, srn_key, _srn_groups))


@dataclass(frozen=True)
class RouteReply(Reply):
    """An SRN reply with the release's road tables of its route, as stored."""

    road_dict: dict[str, Any] = field(default_factory=dict)
    conjunction: dict[str, Any] = field(default_factory=dict)


def _release_root(folder: Path, root: Path | None) -> Path:
    if root is not None:
        return Path(root)
    # the published scripts' layout: ./Responses/SRN/<model> beside ./Dataset/CartoMapQA
    for cand in (
        folder.parent.parent.parent / "Dataset" / "CartoMapQA",
        folder.parent.parent.parent,
    ):
        if (cand / SRN_DIR / "road_dict").is_dir():
            return cand
    raise DatasetError(
        f"SRN responses in {folder} are scored against the release's road tables: give the "
        f"release root (--release DIR, the folder holding {SRN_DIR}/road_dict/ and "
        f"{SRN_DIR}/road_conjunction/)"
    )


def _srn_read_replies(folder: Path, root: Path | None) -> list[Reply]:
    folder = _folder(Path(folder), "a model's SRN responses")
    root = _release_root(folder, root)
    base = Path(root) / SRN_DIR
    _folder(base / "road_dict", "the SRN road dictionaries (<n>.json)")
    _folder(base / "road_conjunction", "the SRN junction tables (<n>.json)")
    prompts = load_prompts()
    out: list[Reply] = []
    for path in sorted(folder.glob("*.json")):
        n = path.stem
        record = _load(path, "an SRN response record")
        if not isinstance(record, dict):
            raise DatasetError(f"{path}: one JSON object expected")
        road_dict = _load(base / "road_dict" / path.name, f"the road dictionary of {path.name}")
        conj = _load(base / "road_conjunction" / path.name, f"the junction table of {path.name}")
        image = f"{RELEASE_IMAGES}/{SRN_DIR}/_maps/{n}.png"
        kept = _kept(record, image, path)
        if kept:
            sample = kept[0]
        elif (base / "_routes" / path.name).is_file():
            sample = _srn_question(root, n, prompts)
        else:
            raise DatasetError(
                f"{path}: the release at {root} has no route {n} ({SRN_DIR}/_routes/{path.name})"
            )
        response = record.get("Response")
        out.append(
            RouteReply(
                path.name,
                record,
                sample,
                response if isinstance(response, str) else None,
                road_dict=road_dict,
                conjunction=conj,
            )
        )
    return out


def _srn_detect(folder: Path) -> bool:
    for path in sorted(Path(folder).glob("*.json"))[:5]:
        if _RLE_KEY.match(path.name) or _MML_KEY.match(path.name):
            return False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict) and "route_directions" in data:
            return True
    return False


def _srn_evaluate(replies: Sequence[Reply], seed: int) -> list[Any]:
    road_dicts: dict[str, Any] = {}
    conjunctions: dict[str, Any] = {}
    for r in replies:
        if isinstance(r, RouteReply):
            road_dicts[r.key], conjunctions[r.key] = r.road_dict, r.conjunction
        else:
            _, _, conjunctions[r.key], road_dicts[r.key] = _srn_tables(r.sample)
    return [
        published_srn.evaluate(
            [(r.key, r.record) for r in replies],
            seed=seed,
            road_dicts=road_dicts,
            conjunctions=conjunctions,
        )
    ]


def _srn_write_questions(samples: Sequence[Sample], dataset: Path, root: Path) -> None:
    base = Path(root) / SRN_DIR
    for sub in ("_routes", "road_dict", "road_conjunction", "_maps"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    seen: dict[str, str] = {}
    for s in samples:
        n = _stem(s, "srn")
        if n in seen:
            raise DatasetError(f"samples {seen[n]} and {s.id} would both be SRN route {n!r}")
        seen[n] = s.id
        truth = s.ground_truth
        assert isinstance(truth, RouteTruth)
        # a route with no road network (older data) gets empty road tables: the published
        # check then connects an exact answer only, as cartoqa's cannot score connectivity
        _, _, conj, _ = _srn_tables(s)
        _write_json(base / "_routes" / f"{n}.json", {**_srn_route(s), "cartoqa": [_dump(s)]})
        road_dict = road_links(truth.network) if truth.network is not None else {}
        _write_json(base / "road_dict" / f"{n}.json", road_dict)
        _write_json(base / "road_conjunction" / f"{n}.json", conj)
        _copy_image(s, dataset, base / "_maps" / f"{n}.png")


def _srn_write_replies(
    samples: Sequence[Sample], replies: Mapping[str, str | None], folder: Path
) -> None:
    for s in samples:
        if s.id in replies:
            route = {**_srn_route(s), "cartoqa": [_dump(s)]}
            _write_json(Path(folder) / srn_key(s), _srn_record(s, replies[s.id], route))


# ------------------------------------------------------------------ the forms

RLE_FORM = ReleaseForm(
    folder="RLE",
    top="MapScaleUnderstanding",
    tasks=("rle",),
    read_questions=_rle_questions,
    read_replies=_rle_read_replies,
    detect=_rle_detect,
    evaluate=_rle_evaluate,
    write_questions=_rle_write_questions,
    write_replies=_rle_write_replies,
)

MML_FORM = ReleaseForm(
    folder="MML",
    top="MapMarkerLocalization",
    tasks=("mml",),
    read_questions=_mml_questions,
    read_replies=_mml_read_replies,
    detect=_mml_detect,
    evaluate=_mml_evaluate,
    write_questions=_mml_write_questions,
    write_replies=_mml_write_replies,
)

SRN_FORM = ReleaseForm(
    folder="SRN",
    top="MapNavigation",
    tasks=("srn",),
    read_questions=_srn_questions,
    read_replies=_srn_read_replies,
    detect=_srn_detect,
    evaluate=_srn_evaluate,
    write_questions=_srn_write_questions,
    write_replies=_srn_write_replies,
)
