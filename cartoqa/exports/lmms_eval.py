"""The lmms-eval export (``cartoqa export DATASET --to lmms-eval OUT``): a folder of task
configs that lmms-eval reads with ``--include_path OUT``, scored by cartoqa's own scorers.

::

    OUT/README.md                     how to run it, and the attribution
    OUT/cartoqa-lmms-eval.json        what made it, with each file's SHA-256 (marks the
                                      folder as an export)
    OUT/cartoqa.yaml                  the group ``cartoqa``: every task below but the extra
                                      splits' tasks
    OUT/cartoqa_map.yaml              the group ``cartoqa_map``: those of them that show a
                                      map (for image-text model classes: qwen2_vl, llava_hf)
    OUT/cartoqa_gps.yaml              the group ``cartoqa_gps``: those that are text only
                                      (for text model classes); each written where it has tasks
    OUT/cartoqa_<task>.yaml           one lmms-eval task per cartoqa task, on its ``test``
                                      split (its only split where it has no test split)
    OUT/cartoqa_<task>_<split>.yaml   the same task on each of its other splits
    OUT/utils.py                      the functions the YAMLs name (``!function utils.*``);
                                      they call the hooks below
    OUT/data/                         the Hugging Face export of the dataset
                                      (``cartoqa.exports.hf``): the rows lmms-eval loads

Each task YAML loads its parquet files with lmms-eval's ``dataset_path: parquet``, naming
them relative to the YAML's folder: lmms-eval (0.7.3 at least) resolves a relative
``data_files`` path that names an existing file against the folder of the YAML it is
written in, so OUT may be moved or copied whole and lmms-eval run from anywhere.  (It
leaves globs alone, so every file is named.)

The hooks (``doc_to_visual``, ``doc_to_text``, ``doc_to_messages``, ``score_row``,
``aggregate``) live here, not in the exported ``utils.py``, so that the folder holds no
copy of cartoqa's logic: ``utils.py`` imports them, and holds only what is particular to
the export (which metrics each task reports).  lmms-eval therefore needs cartoqa installed
next to it.  ``score_row`` rebuilds the sample from the row's JSON columns and scores the
model's output with ``cartoqa.scoring.score_sample``; every metric of the task gets the
same item (the sample and its score, as JSON), and ``aggregate`` reduces a task's items
with the task's own table (``cartoqa.scoring.tables_from_scores``, what ``cartoqa score``
prints), so each number lmms-eval reports equals cartoqa's for the same answers.

Only each task's overall rows are reported: the table's ``all`` row, and for RLE, whose
table has one overall row per unit, each ``all <unit>`` row (metric ``rmse (all m)``...),
of the samples of the lmms-eval task's split.  ``cartoqa score`` pools every split in its
overall row: where a task has more than one split (GPS builds make dev and test), each
lmms-eval task equals the ``split=<split>`` row of ``cartoqa score``'s table instead (GPS
tables break down by split).  The breakdowns by metadata and GPSBench's track scores
(``cartoqa score``'s ``gps`` table) are not reported: lmms-eval's group scores are means
over a group's leaf tasks, which cannot express GPSBench's mean of two track means.

A value cartoqa cannot compute (r² of one sample, RLE's rmse with every answer unread) is
``None``, which lmms-eval writes as ``null`` in its results JSON and shows as ``N/A``
(never NaN, which strict JSON readers refuse); the items it logs are strict JSON too.

Paired variants (``cartoqa.tasks.variants``): a dataset that holds them gets one lmms-eval
task per cartoqa task and variant, on the Hugging Face export's config of the same name
(``folder.Part``): ``cartoqa_srn`` (the base questions), ``cartoqa_srn__text``,
``cartoqa_srn__greyscale``..., and ``cartoqa_<task>__nolabels__unanswerable`` for the
questions a variant made unanswerable.  Each is scored alone, with the table ``cartoqa
score`` prints under its score key ("srn@text"), so a base and a variant number never mix
(``aggregate`` refuses items of two keys).  The groups ``cartoqa``, ``cartoqa_map`` and
``cartoqa_gps`` hold the base tasks only, as before; each variant has a group of its own,
``cartoqa_variant_<variant>`` (``cartoqa_variant_text``, ``cartoqa_variant_image_text``),
its unanswerable tasks included; the rows carry ``variant``, ``base_id`` and
``answerable`` (the Hugging Face export's columns) to pair them.  A ``text`` variant's rows
have no image: ``doc_to_visual`` gives none, as for GPS rows.  A dataset without variants is
written as before.

The export is written into a hidden sibling folder (``.OUT.staging-PID``) and renamed into
place at the end: an earlier export at OUT stays whole until the new one is complete, and a
failure leaves nothing at OUT or beside it.  OUT may be new, empty, or (with ``overwrite``)
an earlier lmms-eval export of cartoqa's; any other folder is refused, never deleted.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.errors import CartoqaError
from cartoqa.exports import folder
from cartoqa.exports.hf import export_hf
from cartoqa.exports.licences import Sources, sources_of
from cartoqa.models.baselines import oracle_answer
from cartoqa.records import (
    OSM_ATTRIBUTION,
    TRUTHS,
    Metadata,
    Prompt,
    Provenance,
    Sample,
    SampleScore,
)
from cartoqa.stores import Dataset
from cartoqa.stores._files import sha256_file, strict_json, write_atomic

__all__ = [
    "DATA_DIR",
    "EXPORT_MARKER",
    "FILELOCK_REQUIREMENT",
    "GPS_GROUP",
    "GROUP",
    "INSTALL_COMMAND",
    "LMMS_EVAL_REQUIREMENT",
    "MAP_GROUP",
    "README_FILE",
    "UTILS_FILE",
    "aggregate",
    "doc_to_messages",
    "doc_to_text",
    "doc_to_visual",
    "export_lmms_eval",
    "row_part",
    "score_row",
]

#: the file that marks a folder as a cartoqa lmms-eval export (and says what made it)
EXPORT_MARKER = "cartoqa-lmms-eval.json"
#: how to run it
README_FILE = "README.md"
#: the functions the task YAMLs name
UTILS_FILE = "utils.py"
#: the Hugging Face export the tasks load
DATA_DIR = "data"
#: the group of every exported task
GROUP = "cartoqa"
#: the group of the tasks that show a map: for image-text model classes (qwen2_vl, llava_hf;
#: llava_hf fails on a question without an image)
MAP_GROUP = "cartoqa_map"
#: the group of the text-only tasks: for text model classes (which would drop the maps)
GPS_GROUP = "cartoqa_gps"
#: family -> its group
_FAMILY_GROUPS = {"map": MAP_GROUP, "gps": GPS_GROUP}
#: a paired variant's group: this and the part of its name after "<task>__"
#: ("cartoqa_variant_text", "cartoqa_variant_image_text")
VARIANT_GROUP_PREFIX = "cartoqa_variant_"
#: the lmms-eval versions this export was tested with
LMMS_EVAL_REQUIREMENT = "lmms-eval>=0.7.3,<0.8"
#: lmms-eval 0.7.3's evaluator imports ``filelock._api``, which filelock 4 no longer has
FILELOCK_REQUIREMENT = "filelock<4"
#: lmms-eval 0.7.3's qwen2_vl and llava_hf modules import decord, which it does not install
#: (eva-decord gives the same module where decord has no wheel, as on macOS)
DECORD_REQUIREMENT = "decord"
#: the one command that installs what the exported tasks and lmms-eval's model classes need
INSTALL_COMMAND = (
    f'pip install "{LMMS_EVAL_REQUIREMENT}" "{FILELOCK_REQUIREMENT}" {DECORD_REQUIREMENT} cartoqa'
)
#: the item key lmms-eval must not find in our items: its CLT standard error reads a
#: number from each item's ``score_key`` (default "score")
_SAMPLE_KEY = "sample"
_SCORE_KEY = "scored"

#: output tokens and decoding, as ``cartoqa run`` does by default: GPSBench lets models
#: write 8,192 tokens, CartoMapQA's answers are short (``cartoqa.runner``)
_MAX_NEW_TOKENS = {"gps": 8192, "map": 1024}
#: metrics where less is better; all others more
_LOWER_IS_BETTER = frozenset({"rmse", "mae", "mape", "unanswered"})
_SPLIT_ORDER = ("test", "dev", "train")
#: an earlier lmms-eval export of cartoqa's: its marker says so
_FORMAT = folder.ExportFormat("lmms-eval", "lmms-eval", EXPORT_MARKER, article="an")


# -- the hooks lmms-eval calls (through OUT/utils.py) --------------------------------------


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Any = None) -> list[Any]:
    """The row's map as a PIL image, in a list (empty for text tasks and rows without an
    image); the image as the dataset stores it, pixel for pixel (not converted to RGB)."""
    image = doc.get("image")
    return [] if image is None else [image]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    """The prompt as one text: the system prompt, where the sample has one, a blank line,
    then the question (for models that take no system message; ``doc_to_messages`` gives
    chat models the system prompt as a system message)."""
    system = doc.get("system")
    question = str(doc["question"])
    return f"{system}\n\n{question}" if system else question


def doc_to_messages(
    doc: Mapping[str, Any], lmms_eval_specific_kwargs: Any = None
) -> list[dict[str, Any]]:
    """The prompt as chat messages (lmms-eval's protocol): a system message where the
    sample has a system prompt, then the user turn with the image (if any) before the
    question, as cartoqa's own model clients send it."""
    messages: list[dict[str, Any]] = []
    system = doc.get("system")
    if system:
        messages.append({"role": "system", "content": [{"type": "text", "text": str(system)}]})
    content: list[dict[str, Any]] = [
        {"type": "image", "url": image} for image in doc_to_visual(doc)
    ]
    content.append({"type": "text", "text": str(doc["question"])})
    messages.append({"role": "user", "content": content})
    return messages


def sample_of_row(doc: Mapping[str, Any]) -> Sample:
    """The cartoqa sample of an exported row, rebuilt from its columns (the truth,
    metadata and provenance from their JSON).  The prompt's image paths are not in the row
    (lmms-eval may drop the image column before scoring), and no scorer reads them: the
    sample comes back with none."""
    try:
        return Sample(
            id=doc["id"],
            task=doc["task"],
            split=doc["split"],
            prompt=Prompt(text=doc["question"], system=doc.get("system")),
            ground_truth=TRUTHS.validate_json(doc["ground_truth"]),
            metadata=Metadata.model_validate_json(doc["metadata"]),
            provenance=Provenance.model_validate_json(doc["provenance"]),
        )
    except (KeyError, ValueError) as exc:
        raise CartoqaError(
            f"row {doc.get('id')!r} is not a row of cartoqa's export ({exc}); export the "
            "dataset again with 'cartoqa export DATASET --to lmms-eval OUT'"
        ) from None


def row_part(doc: Mapping[str, Any]) -> str:
    """The name of the part (task, or task and variant: ``folder.Part.name``) a row belongs
    to: its lmms-eval task is ``cartoqa_<part>``."""
    return folder.part_of(sample_of_row(doc)).name


def score_row(
    doc: Mapping[str, Any], results: Sequence[str | None], metrics: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """lmms-eval's ``process_results`` for one row: the model's first output scored by
    cartoqa's scorer, one item per metric name in ``metrics`` (the same item for each:
    the sample and its score as JSON, which ``aggregate`` reduces and lmms-eval can log)."""
    from cartoqa.scoring import score_sample

    sample = sample_of_row(doc)
    response = results[0] if results else None
    score = score_sample(sample, response)
    item = strict_json(  # lmms-eval logs the items (--log_samples): no NaN in them
        {
            _SAMPLE_KEY: sample.model_dump(mode="json"),
            _SCORE_KEY: score.model_dump(mode="json"),
        }
    )
    return {name: item for name in metrics}


#: the last table ``aggregate`` made, with the items it made it of: a task's metrics are
#: aggregated one after another, each over a list of the same item objects
_last_table: tuple[list[Any], dict[str, dict[str, float]]] | None = None
_table_lock = threading.Lock()


def aggregate(items: Sequence[Mapping[str, Any]], group: str, metric: str) -> float | None:
    """One number of a task's cartoqa table (``group`` -> ``metric``), made of the items
    ``score_row`` gave: the task's own reduction, as ``cartoqa score`` computes it.  None
    where cartoqa gives no number (NaN: r² of one sample) or the items give no such row (no
    samples of that unit in this split): lmms-eval writes it as ``null`` in its results
    JSON (strict readers refuse NaN) and shows ``N/A``."""
    value = _table(items).get(group, {}).get(metric)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value  # as cartoqa gives it (a count stays int)


def _table(items: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    global _last_table
    from cartoqa.scoring import tables_from_scores

    with _table_lock:
        if _last_table is not None:
            seen, table = _last_table
            if len(seen) == len(items) and all(a is b for a, b in zip(seen, items, strict=True)):
                return table
    rows = [
        (Sample.model_validate(i[_SAMPLE_KEY]), SampleScore.model_validate(i[_SCORE_KEY]))
        for i in items
    ]
    tasks = sorted({s.task for s, _ in rows})
    if len(tasks) > 1:
        raise CartoqaError(
            f"one lmms-eval task aggregated samples of cartoqa tasks {', '.join(tasks)}; each "
            "exported task holds one cartoqa task: export the dataset again"
        )
    if not tasks:
        return {}
    keys = sorted({folder.part_of(s).key for s, _ in rows})
    if len(keys) > 1:  # a base and a variant's scores, or a variant's answerable and not
        raise CartoqaError(
            f"one lmms-eval task aggregated samples of {', '.join(keys)}, which cartoqa "
            "scores apart (paired variants never mix); each exported task holds one: "
            "export the dataset again"
        )
    samples = [s for s, _ in rows]
    tables = tables_from_scores({tasks[0]: rows}, samples, {})
    table = tables[keys[0]]
    with _table_lock:
        _last_table = (list(items), table)
    return table


# -- planning: what each task reports, checked before anything is written -----------------


@dataclass(frozen=True)
class _Metric:
    name: str
    """The name lmms-eval reports ("accuracy", "rmse (all m)")."""
    group: str
    """The row of cartoqa's table ("all", "all m")."""
    metric: str
    """The column of cartoqa's table."""
    function: str
    """The aggregation function's name in utils.py."""
    higher_is_better: bool


@dataclass
class _Task:
    task: str
    """The part's name (the cartoqa task's, or the task's and a variant's:
    ``folder.Part.name``), as the Hugging Face export names its config."""
    part: folder.Part
    family: str
    version: str
    splits: list[str]
    """The splits it has, the evaluated one first."""
    metrics: list[_Metric]
    made_of: Sources
    """What its samples are made from, and their licences (``cartoqa.exports.licences``)."""

    def name(self, split: str) -> str:
        """The lmms-eval task of ``split`` (the first split's: ``cartoqa_<task>``)."""
        return f"cartoqa_{self.task}" if split == self.splits[0] else f"cartoqa_{self.task}_{split}"


def _plan(dataset: Dataset) -> list[_Task]:
    from cartoqa.scoring import score_run
    from cartoqa.tasks.spec import get_task

    by_part = folder.samples_by_part(dataset)
    functions: dict[tuple[str, str], str] = {}
    tasks: list[_Task] = []
    for s in dataset.samples:  # export_hf checks them too, but after our lock is taken
        for rel in s.prompt.images:
            folder.image_size(dataset, s.id, rel)  # there
    for part, samples in by_part.items():
        task = part.name
        spec = get_task(part.task)
        # the table's overall rows: which there are depends on the samples (RLE's units)
        table = score_run(samples, {s.id: oracle_answer(s) for s in samples})[part.key]
        overall = [g for g in table if g == "all" or g.startswith("all ")]
        metrics: list[_Metric] = []
        for group in overall:
            names = spec.metrics if spec is not None else tuple(table[group])
            for metric in names:
                if metric not in table[group]:
                    continue
                key = (group, metric)
                if key not in functions:
                    functions[key] = _function_name(group, metric, set(functions.values()))
                metrics.append(
                    _Metric(
                        name=metric if group == "all" else f"{metric} ({group})",
                        group=group,
                        metric=metric,
                        function=functions[key],
                        higher_is_better=metric.lower() not in _LOWER_IS_BETTER,
                    )
                )
        if not metrics:
            raise CartoqaError(
                f"task {task!r} reports no metrics in an overall row of its table; it cannot "
                "be scored by lmms-eval"
            )
        splits: list[str] = sorted({s.split for s in samples}, key=_split_key)
        family = spec.family if spec is not None else ("map" if _has_images(samples) else "gps")
        tasks.append(
            _Task(
                task=task,
                part=part,
                family=family,
                version=spec.version if spec is not None else "1",
                splits=splits,
                metrics=metrics,
                made_of=sources_of(samples, family),
            )
        )
    lmms_names = [t.name(split) for t in tasks for split in t.splits]
    lmms_names += [g for g, _ in _groups(tasks)]
    repeated = sorted({n for n in lmms_names if lmms_names.count(n) > 1})
    if repeated:
        raise CartoqaError(
            f"the lmms-eval task names {', '.join(repeated)} would be used twice (a cartoqa "
            "task named like another's split, or like a group: cartoqa_map, cartoqa_gps, "
            f"{VARIANT_GROUP_PREFIX}...); export the splits apart, or rename the task"
        )
    return tasks


def _variant_group(part: folder.Part) -> str:
    """The group of a variant's tasks ("cartoqa_variant_image_text")."""
    assert part.variant is not None
    return VARIANT_GROUP_PREFIX + folder.Part("", part.variant).name.removeprefix("__")


def _groups(tasks: Sequence[_Task]) -> list[tuple[str, list[_Task]]]:
    """(group, its tasks) for every group the export writes: ``cartoqa`` (every base task),
    then one per family that has base tasks (``cartoqa_map``, ``cartoqa_gps``), then one per
    paired variant (``cartoqa_variant_text``: its tasks, the unanswerable ones included)."""
    base = [t for t in tasks if t.part.variant is None]
    out = [(GROUP, base)] if base else []
    for family, group in _FAMILY_GROUPS.items():
        members = [t for t in base if t.family == family]
        if members:
            out.append((group, members))
    variants: dict[str, list[_Task]] = {}
    for t in tasks:
        if t.part.variant is not None:
            variants.setdefault(_variant_group(t.part), []).append(t)
    out += list(variants.items())
    return out


def _has_images(samples: Sequence[Sample]) -> bool:
    return any(s.prompt.images for s in samples)


def _split_key(split: str) -> tuple[int, str]:
    return (_SPLIT_ORDER.index(split) if split in _SPLIT_ORDER else len(_SPLIT_ORDER), split)


def _function_name(group: str, metric: str, taken: set[str]) -> str:
    words = metric if group == "all" else f"{metric} {group}"
    base = "agg_" + (re.sub(r"[^0-9A-Za-z]+", "_", words).strip("_").lower() or "metric")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


# -- the export -------------------------------------------------------------------------------


def export_lmms_eval(dataset: Dataset, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``dataset`` to ``out`` as lmms-eval tasks (module docstring); returns the
    export folder.

    Raises ``CartoqaError`` naming the problem and its fix: pyarrow missing, ``out`` a file
    or a link, an export already there without ``overwrite``, ``out`` a folder of other
    files (never replaced, even with ``overwrite``), ``out`` and the dataset overlapping, a
    sample's image missing or changed since the dataset was made; in each case nothing is
    changed at ``out`` and nothing is left beside it but a lock file.
    """
    target = folder.export_target(dataset, out)
    tasks = _plan(dataset)
    with folder.export_folder(target, _FORMAT, overwrite=overwrite) as staged:
        staged.marker = _write(dataset, tasks, staged.path)
    return target


def _write(dataset: Dataset, tasks: Sequence[_Task], stage: Path) -> Any:
    """Write every file of the export but its marker into ``stage``; the marker."""
    hf = export_hf(dataset, stage / DATA_DIR)
    (stage / f".{DATA_DIR}.lock").unlink(missing_ok=True)  # export_hf's, beside its folder
    parquet: dict[str, dict[str, list[str]]] = {}
    for rel in hf.files:
        parts = Path(rel).parts
        if rel.endswith(".parquet") and len(parts) == 3:  # data/<task>/<split>-...parquet
            split = parts[2].split("-", 1)[0]
            parquet.setdefault(parts[1], {}).setdefault(split, []).append(f"{DATA_DIR}/{rel}")
    files: dict[str, bytes] = {}
    for t in tasks:
        for split in t.splits:
            files[f"{t.name(split)}.yaml"] = _task_yaml(dataset, t, split, parquet[t.task]).encode()
    variants = any(t.part.variant is not None for t in tasks)
    for group, members in _groups(tasks):
        files[f"{group}.yaml"] = _group_yaml(group, members, variants=variants).encode()
    files[UTILS_FILE] = _utils(tasks).encode()
    files[README_FILE] = _readme(dataset, tasks).encode()
    hashes: dict[str, str] = {}
    for name, data in files.items():
        write_atomic(stage / name, data)
        hashes[name] = sha256_file(stage / name)
    return _marker(dataset, tasks, hf.rows, hashes)


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def _task_yaml(
    dataset: Dataset, task: _Task, split: str, parquet: Mapping[str, Sequence[str]]
) -> str:
    name = task.name(split)
    lines = [
        f"# cartoqa task {task.part.what!r}, split {split!r}, of the dataset "
        f"{' '.join(dataset.manifest.name.split())!r}; exported by cartoqa {__version__}.",
    ]
    if task.made_of.osm_rendered:
        lines.append(f"# Map data {OSM_ATTRIBUTION} (ODbL).")
    lines.append(f"# Licences: {', '.join(task.made_of.licences)} (README.md says what of).")
    lines += [
        f"task: {name}",
        "dataset_path: parquet",
        "dataset_kwargs:",
        "  data_files:",
    ]
    for s in task.splits:  # every split loads; the one evaluated is test_split
        lines.append(f"    {s}:")
        lines += [f"    - {_q(path)}" for path in sorted(parquet[s])]
    lines += [
        f"test_split: {split}",
        "output_type: generate_until",
        "doc_to_visual: !function utils.doc_to_visual",
        "doc_to_text: !function utils.doc_to_text",
        "doc_to_messages: !function utils.doc_to_messages",
        "doc_to_target: answer",
        "process_results: !function utils.process_results",
        "metric_list:",
    ]
    for m in task.metrics:
        lines += [
            f"  - metric: {_q(m.name)}",
            f"    aggregation: !function utils.{m.function}",
            f"    higher_is_better: {'true' if m.higher_is_better else 'false'}",
        ]
    lines += [
        "generation_kwargs:",
        f"  max_new_tokens: {_MAX_NEW_TOKENS.get(task.family, 1024)}",
        "  temperature: 0",
        "  do_sample: false",
        "  until: []",  # lmms-eval's default stops at a blank line; answers may hold one
        "metadata:",
        f"  version: {_q(task.version)}",
        f"  cartoqa_task: {task.part.task}",
        *(
            [
                f"  cartoqa_variant: {_q(task.part.variant)}",
                f"  cartoqa_answerable: {'false' if task.part.unanswerable else 'true'}",
                f"  cartoqa_score_key: {_q(task.part.key)}",
            ]
            if task.part.variant is not None
            else []
        ),
        f"  cartoqa_split: {split}",
        f"  cartoqa_version: {_q(__version__)}",
        f"  dataset: {_q(dataset.manifest.name)}",
        f"  samples_sha256: {_q(dataset.manifest.samples_sha256)}",
    ]
    return "\n".join(lines) + "\n"


def _group_yaml(group: str, tasks: Sequence[_Task], *, variants: bool = False) -> str:
    what = {
        GROUP: "every task of the cartoqa export",
        MAP_GROUP: "the tasks of the cartoqa export that show a map (image-text models only)",
        GPS_GROUP: "the text-only tasks of the cartoqa export (text models)",
    }.get(group)
    if what is None:  # a variant's group
        what = f"the tasks of the cartoqa export asked under the variant {tasks[0].part.variant!r}"
    elif variants:  # the groups of old hold the base tasks
        what = what.replace("every task", "every base task").replace("the tasks", "the base tasks")
        what = what.replace("the text-only tasks", "the text-only base tasks")
    lines = [
        f"# {what}, each on its test split; exported by cartoqa {__version__}.",
        f"group: {group}",
        "task:",
    ]
    lines += [f"  - {t.name(t.splits[0])}" for t in tasks]
    lines += ["metadata:", f"  cartoqa_version: {_q(__version__)}"]
    return "\n".join(lines) + "\n"


def _utils(tasks: Sequence[_Task]) -> str:
    metrics = {t.task: tuple(m.name for m in t.metrics) for t in tasks}
    variants = any(t.part.variant is not None for t in tasks)
    functions: dict[str, _Metric] = {}
    for t in tasks:
        for m in t.metrics:
            functions.setdefault(m.function, m)
    lines = [
        f'"""lmms-eval functions of the cartoqa tasks in this folder, written by cartoqa '
        f"{__version__}'s",
        "lmms-eval export.",
        "",
        "The task YAMLs name them (``!function utils.NAME``).  They hand each row to cartoqa,",
        "which must be installed where lmms-eval runs: the prompt as cartoqa shows it, the",
        "answer scored by the task's own scorer (``cartoqa.scoring.score_sample``), and the",
        "scores reduced by the task's own metrics, so that each number lmms-eval reports",
        "equals what ``cartoqa score`` gives for the same answers.  See",
        "``cartoqa.exports.lmms_eval``.",
        '"""',
        "",
        "from cartoqa.exports.lmms_eval import (",
        "    aggregate,",
        "    doc_to_messages,",
        "    doc_to_text,",
        "    doc_to_visual,",
        *(["    row_part,"] if variants else []),
        "    score_row,",
        ")",
        "",
        "__all__ = [",
        '    "doc_to_messages",',
        '    "doc_to_text",',
        '    "doc_to_visual",',
        '    "process_results",',
        *(f"    {_py(f)}," for f in sorted(functions)),
        "]",
        "",
        (
            "#: cartoqa task (or task and variant, cartoqa_<this> being its lmms-eval task) -> "
            "the metrics"
            if variants
            else "#: cartoqa task -> the metrics its lmms-eval task reports (as its YAML's "
            "metric_list)"
        ),
        *(["#: its lmms-eval task reports (as its YAML's metric_list)"] if variants else []),
        "METRICS = {",
        *(
            f"    {_py(task)}: ({', '.join(_py(n) for n in names)},),"
            for task, names in metrics.items()
        ),
        "}",
        "",
        "",
        "def process_results(doc, results):",
        '    """The row\'s answer scored by cartoqa: one item per metric of its task."""',
        (
            "    return score_row(doc, results, METRICS[row_part(doc)])"
            if variants
            else '    return score_row(doc, results, METRICS[doc["task"]])'
        ),
    ]
    for name, m in sorted(functions.items()):
        lines += [
            "",
            "",
            f"def {name}(items):",
            f'    """The cell ({_py(m.group)}, {_py(m.metric)}) of the task\'s cartoqa table."""',
            f"    return aggregate(items, {_py(m.group)}, {_py(m.metric)})",
        ]
    return "\n".join(lines) + "\n"


def _py(text: str) -> str:
    """A Python string literal (JSON's, ASCII only, is one)."""
    return json.dumps(text)


def _credits(dataset: Dataset, tasks: Sequence[_Task]) -> list[str]:
    credits: list[str] = []
    if any("odbl" in t.made_of.licences for t in tasks):
        credits.append(OSM_ATTRIBUTION)
    sources = sorted({s.provenance.source for s in dataset.samples if s.provenance.source})
    named = [*dataset.manifest.attribution, *sources]
    for line in (" ".join(x.split()) for src in named for x in src.split("; ")):
        if line and line not in credits:
            credits.append(line)
    return credits


def _readme(dataset: Dataset, tasks: Sequence[_Task]) -> str:
    m = dataset.manifest
    name = " ".join(m.name.split()) or "dataset"
    example = next((t for t in tasks if t.family == "map"), tasks[0])
    comments = {
        GROUP: "every task (models that take text with or without an image)",
        MAP_GROUP: "the map tasks (image-text models)",
        GPS_GROUP: "the text-only tasks (text models)",
    }
    variants = any(t.part.variant is not None for t in tasks)
    if variants:
        comments = {k: v.replace("every task", "every base task") for k, v in comments.items()}
        comments = {k: v.replace("the ", "the base ", 1) for k, v in comments.items()}
    group_lines = [
        f"lmms-eval ... --include_path OUT --tasks {g}   # "
        + (comments.get(g) or f"the variant {members[0].part.variant!r}")
        for g, members in _groups(tasks)
    ]
    body = [
        f"# cartoqa: {name}, as lmms-eval tasks",
        "",
        f"The questions of the cartoqa dataset `{name}` ({len(dataset.samples)} samples), "
        f"exported by cartoqa {__version__} for [lmms-eval](https://github.com/"
        "EvolvingLMMs-Lab/lmms-eval): one task per cartoqa task, scored by cartoqa's own "
        "scorers, so that each number equals what `cartoqa score` prints for the same "
        "answers.",
        "",
        "## Attribution",
        "",
    ]
    rendered = [t.task for t in tasks if t.made_of.osm_rendered]
    if rendered:
        body += [
            f"Map data {OSM_ATTRIBUTION}, under the Open Database License "
            "(ODbL 1.0, https://www.openstreetmap.org/copyright): the map images of "
            + ", ".join(f"`{x}`" for x in rendered)
            + " are rendered from it.",
            "",
        ]
    body += [f"- {line}" for line in _credits(dataset, tasks)] or [
        "- (the dataset records no credits)"
    ]
    body += [
        "",
        "## Running",
        "",
        "cartoqa must be installed where lmms-eval runs (the tasks score with it); one "
        "command installs what lmms-eval 0.7.3 and its model classes need besides:",
        "",
        "```sh",
        INSTALL_COMMAND,
        "lmms-eval --model MODEL --model_args ... --include_path OUT \\",
        f"    --tasks cartoqa_{example.task} --output_path results/",
        *group_lines,
        "```",
        "",
        f"(`{FILELOCK_REQUIREMENT}`: lmms-eval 0.7.3's evaluator imports `filelock._api`, "
        f"which filelock 4 no longer has; `{DECORD_REQUIREMENT}`: its `qwen2_vl` and "
        "`llava_hf` model classes import it, and lmms-eval does not install it; where "
        "decord has no wheel, `eva-decord` gives the same module.)  "
        "lmms-eval exits with status 0 even when a model or task fails to load: check that "
        "the results JSON under `--output_path` holds every task you asked for.  "
        "`OUT` is this folder; it may be moved whole (the YAMLs name their parquet files "
        "relative to themselves, which lmms-eval 0.7.3 resolves).  Offline, set "
        "`HF_DATASETS_OFFLINE=1`: the rows are in `data/`, nothing is downloaded.",
        "",
        "Give each model class the group it can answer: an image-text class (`qwen2_vl`, "
        f"`llava_hf`) `{MAP_GROUP}`, a text-only class `{GPS_GROUP}` (it would answer the map "
        "questions without the map); `llava_hf` fails on a question without an image in "
        "chat mode and answers nothing with `--force_simple`.  `llava_hf`'s image "
        "processor resizes the map's short side to its input size and crops the centre: on "
        "a wide map (1366x768) that cuts off the left and right edges, and with them the "
        "scale bar (bottom left) that RLE's lengths are read from; give it RLE only with a "
        "processor that pads or resizes without cropping.",
        "",
        "## Tasks",
        "",
        "| lmms-eval task | cartoqa task | split | rows | metrics | licences |",
        "| --- | --- | --- | ---: | --- | --- |",
    ]
    counts: dict[str, dict[str, int]] = {}
    for s in dataset.samples:
        name = folder.part_of(s).name
        counts.setdefault(name, {}).setdefault(s.split, 0)
        counts[name][s.split] += 1
    for t in tasks:
        for split in t.splits:
            metric_names = ", ".join(f"`{x.name}`" for x in t.metrics)
            body.append(
                f"| {t.name(split)} | {t.part.what} | {split} | {counts[t.task][split]} | "
                f"{metric_names} | {', '.join(t.made_of.licences)} |"
            )
    body += [
        "",
        f"The group `{GROUP}` runs every task on its test split (its only split where it has "
        f"no test split), `{MAP_GROUP}` and `{GPS_GROUP}` the map and the text-only ones of "
        "them; `cartoqa_<task>_<split>` runs another split.",
        "",
        *(_variants_readme(tasks) if variants else []),
        "## What the tasks do",
        "",
        "- prompt: chat models get the sample's system prompt as a system message and the "
        "map before the question; other models get the system prompt, a blank line and the "
        "question (`utils.doc_to_text`), with the map from `utils.doc_to_visual`.",
        "- generation: greedy, no stop strings, at most 1,024 new tokens for map tasks and "
        "8,192 for GPS tasks (as `cartoqa run`).",
        "- scoring: each answer by the task's cartoqa scorer; each metric is one cell of the "
        "overall row of the task's cartoqa table over the lmms-eval task's samples "
        "(`rmse (all m)`: RLE's row `all m`).  Where the task has one split, that is "
        "`cartoqa score`'s overall row for the same answers; where it has several (GPS "
        "builds make dev and test), `cartoqa score` pools them in its overall row, and each "
        "lmms-eval task equals its `split=<split>` row instead (GPS tables break down by "
        "split).  A number cartoqa cannot compute (r² of one sample) is `null` in "
        "lmms-eval's results JSON (`N/A` in its table).  Standard errors are not computed "
        "(`N/A`): cartoqa's metrics are not means of per-sample values; `cartoqa report` "
        "gives bootstrap intervals.  The breakdowns and GPSBench's track scores are "
        "`cartoqa score`'s alone.",
        f"- `data/` is the Hugging Face export of the dataset (see `data/README.md`); "
        f"`{EXPORT_MARKER}` records what made this folder.",
        "",
        "## Provenance",
        "",
        f"- dataset: `{m.name}`, made {m.created_at}; samples.jsonl SHA-256 `{m.samples_sha256}`",
        f"- exported by cartoqa {__version__}, tested with `{LMMS_EVAL_REQUIREMENT}`",
    ]
    return "\n".join(body) + "\n"


def _variants_readme(tasks: Sequence[_Task]) -> list[str]:
    """The README's lines on the paired variants."""
    groups = [g for g, _ in _groups(tasks) if g.startswith(VARIANT_GROUP_PREFIX)]
    return [
        "## Paired variants",
        "",
        "This dataset asks its questions again under controlled changes (the map as text, "
        "with coordinates, without labels, in greyscale...).  Each cartoqa task's variant is "
        "an lmms-eval task of its own, `cartoqa_<task>__<variant>` (the table above), scored "
        "alone with the table `cartoqa score` prints under `<task>@<variant>`: a base number "
        "and a variant's never mix.  Run a variant with its group: "
        + ", ".join(f"`{g}`" for g in groups)
        + f" (`{GROUP}`, `{MAP_GROUP}` and `{GPS_GROUP}` hold the base tasks only).  Each "
        "row carries `variant`, `base_id` (the base question it copies) and `answerable`; "
        "the questions a variant made unanswerable (`answerable` false: a question that needs "
        "the labels, asked without them) are tasks of their own, "
        "`cartoqa_<task>__<variant>__unanswerable`, never scored as ordinary misses.  "
        "A `text` variant's rows have no image (give them to any model class; an image-text "
        "class that needs an image, as `llava_hf` does, cannot run them).",
        "",
    ]


def _marker(
    dataset: Dataset,
    tasks: Sequence[_Task],
    rows: Mapping[str, Mapping[str, int]],
    hashes: Mapping[str, str],
) -> Any:
    m = dataset.manifest
    return {
        "format": _FORMAT.fmt,
        "cartoqa": __version__,
        "lmms_eval": LMMS_EVAL_REQUIREMENT,
        "dataset": m.name,
        "samples_sha256": m.samples_sha256,
        "group": GROUP,
        "groups": {g: [t.name(t.splits[0]) for t in members] for g, members in _groups(tasks)},
        "tasks": {
            t.name(split): {
                "cartoqa_task": t.part.task,
                **(
                    {"variant": t.part.variant, "answerable": not t.part.unanswerable}
                    if t.part.variant is not None
                    else {}
                ),
                "split": split,
                "rows": rows[t.task][split],
                "metrics": {x.name: [x.group, x.metric] for x in t.metrics},
            }
            for t in tasks
            for split in t.splits
        },
        "files_sha256": dict(sorted(hashes.items())),
    }
