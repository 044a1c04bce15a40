"""The inspect_ai export (``cartoqa export DATASET --to inspect OUT``): a folder that
``inspect eval`` runs as it is, scored by cartoqa's own scorers.

::

    OUT/cartoqa_tasks.py     an inspect_ai task module: one @task per cartoqa task of the
                             dataset (``inspect eval OUT/cartoqa_tasks.py@srn --model ...``)
    OUT/samples.jsonl        one line per sample: id, task, split, question, system,
                             images (relative to OUT), target and the sample's full JSON
    OUT/images/...           the maps the samples show, copied from the dataset
    OUT/README.md            how to run it, what it reports, the data's credits
    OUT/cartoqa-export.json  what made it, with each file's SHA-256 (marks the folder as
                             an inspect export)

Each inspect sample's input is a user message with the map (``ContentImage``) and the
question (``ContentText``), after the task's system prompt where the sample has one; its
target is the answer written as the task asks (what cartoqa's ``oracle`` writes); its
metadata is the sample's metadata and, under ``cartoqa_sample``, the sample's JSON.  The
module's scorer rebuilds the ``cartoqa.records.Sample`` and scores the model's answer with
``cartoqa.scoring.score_sample``; its ``cartoqa_metrics`` metric reduces those scores with
the task's own ``TaskSpec`` (``cartoqa.scoring.tables_from_scores``), so inspect reports
the numbers ``cartoqa score`` prints for the same answers: the overall row by metric name
("SR2", "mape"), the breakdowns as "GROUP/METRIC" ("zoom=18/SR2").  Tasks whose scorer
gives a verdict also get inspect's ``accuracy`` and ``stderr``.

A dataset that holds paired variants (``cartoqa.tasks.variants``: "srn-0004@text") gets one
``@task`` per task and variant (``folder.Part``): ``srn`` (the base questions),
``srn__text``, ``srn__greyscale``..., and ``<task>__nolabels__unanswerable`` for the
questions a variant made unanswerable, each scored alone with the table ``cartoqa score``
prints under its score key ("srn@text"), so base and variant numbers never mix; every
sample's metadata then has ``variant`` (its name, "image+text"; None for a base sample),
``base_id`` (the base sample's id) and ``answerable``.  A ``text`` variant's samples of a
map task have no image: their input is the question alone, as a GPS task's.  A dataset
without variants is written as before.

The dataset, the scorer and the metric live in ``cartoqa.exports.inspect_runtime``, not in
the exported module, so that the folder holds no copy of cartoqa's logic: the module
imports them, and holds only what is particular to the export (the dataset's name, the
cartoqa that exported it, the hash of samples.jsonl, the credits, one ``@task`` per task,
which inspect finds by name).  It therefore needs cartoqa and inspect_ai installed where it
runs (never this folder's parent); exporting needs neither inspect_ai nor anything else
beyond cartoqa.

The export is written into a hidden sibling folder (``.OUT.staging-PID``) and renamed into
place at the end: an earlier export at OUT stays whole until the new one is complete, and a
failure leaves nothing behind.  OUT may be new, empty, or (with ``overwrite``) an earlier
inspect export; any other folder is refused, never deleted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.errors import DatasetError
from cartoqa.exports import folder
from cartoqa.exports.inspect_runtime import SAMPLES_FILE  # the samples, one JSON object a line
from cartoqa.models.baselines import oracle_answer
from cartoqa.records import OSM_ATTRIBUTION, Sample
from cartoqa.stores import Dataset
from cartoqa.stores._files import json_text, sha256_file, write_atomic

__all__ = [
    "EXPORT_MARKER",
    "IMAGES_DIR",
    "MODULE_FILE",
    "README_FILE",
    "SAMPLES_FILE",
    "export_inspect",
]

#: the inspect_ai task module
MODULE_FILE = "cartoqa_tasks.py"
#: the maps, copied from the dataset
IMAGES_DIR = "images"
#: how to run it
README_FILE = "README.md"
#: marks a folder as a cartoqa export (the Hugging Face export writes one too, with its own
#: "format"): an export replaces only a folder whose marker names its own format
EXPORT_MARKER = "cartoqa-export.json"
FORMAT = "inspect"
#: an earlier inspect export: its marker says so and its module is there
_FORMAT = folder.ExportFormat(FORMAT, "inspect", EXPORT_MARKER, beside=(MODULE_FILE,), article="an")


@dataclass(frozen=True)
class _Row:
    sample: Sample
    images: tuple[tuple[str, str], ...]
    """(path in the dataset, path in the export) for each image the sample shows."""


@dataclass(frozen=True)
class _TaskInfo:
    name: str
    """The inspect task's name: the cartoqa task's, or the task's and a variant's
    (``folder.Part.name``)."""
    part: folder.Part
    function: str
    """The Python name of its @task function in the module."""
    samples: int
    splits: dict[str, int]
    verdict: bool
    """Whether its scorer gives a right/wrong verdict (then inspect's accuracy is shown)."""
    images: bool


def export_inspect(dataset: Dataset, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``dataset`` to ``out`` as an inspect_ai task folder (module docstring); returns
    the folder.

    Raises ``CartoqaError`` naming the problem and its fix: ``out`` a file or a link, an
    export already there without ``overwrite``, ``out`` a folder of other files (never
    replaced, even with ``overwrite``), ``out`` inside the dataset, a sample's image missing
    or changed since the dataset was made; in each case nothing is left at ``out`` or beside
    it.  inspect_ai need not be installed to export, only to run the export.
    """
    target = folder.export_target(dataset, out)
    rows = _plan(dataset)
    tasks = _tasks(rows)
    with folder.export_folder(target, _FORMAT, overwrite=overwrite) as staged:
        hashes = _write(dataset, rows, tasks, staged.path)
        staged.marker = _marker(dataset, tasks, hashes)
    return target


# -- planning: every sample and image checked before anything is written --------------------


def _export_image_path(rel: str) -> str:
    """Where an image named ``rel`` in the dataset goes in the export: under images/."""
    inner = rel[len(IMAGES_DIR) + 1 :] if rel.startswith(IMAGES_DIR + "/") else rel
    return f"{IMAGES_DIR}/{inner}"


def _plan(dataset: Dataset) -> list[_Row]:
    if not dataset.samples:
        raise DatasetError(f"{dataset.path} holds no samples; there is nothing to export")
    placed: dict[str, str] = {}  # export path -> dataset path
    rows: list[_Row] = []
    for s in dataset.samples:
        images: list[tuple[str, str]] = []
        for rel in s.prompt.images:
            folder.image_size(dataset, s.id, rel)  # there
            dest = _export_image_path(rel)
            if placed.setdefault(dest, rel) != rel:
                raise DatasetError(
                    f"the images {placed[dest]!r} and {rel!r} of {dataset.path} would both be "
                    f"{dest!r} in the export; rename one of them in the dataset"
                )
            images.append((rel, dest))
        rows.append(_Row(sample=s, images=tuple(images)))
    return rows


def _tasks(rows: Sequence[_Row]) -> list[_TaskInfo]:
    from cartoqa.scoring import score_sample

    by_part: dict[folder.Part, list[Sample]] = {}
    for row in rows:
        by_part.setdefault(folder.part_of(row.sample), []).append(row.sample)
    order = {p: i for i, p in enumerate(_ordered(by_part))}
    out: list[_TaskInfo] = []
    names: dict[str, folder.Part] = {}
    for part in sorted(by_part, key=order.__getitem__):
        task = part.name
        if not re.fullmatch(r"[A-Za-z0-9_]+", part.task):  # registered tasks are (TaskSpec)
            raise DatasetError(
                f"task name {part.task!r} is not letters, digits and underscores; inspect_ai "
                "tasks are named after cartoqa's: rename the task"
            )
        if names.setdefault(task, part) != part:
            raise DatasetError(
                f"the inspect task {task!r} would hold both {names[task].what!r} and "
                f"{part.what!r}; rename the task that ends like a variant's name"
            )
        samples = by_part[part]
        splits: dict[str, int] = {}
        for s in samples:
            splits[s.split] = splits.get(s.split, 0) + 1
        first = samples[0]
        verdict = score_sample(first, oracle_answer(first)).correct is not None
        out.append(
            _TaskInfo(
                name=task,
                part=part,
                function=f"task_{task}",  # shadows none of the module's names
                samples=len(samples),
                splits=dict(sorted(splits.items())),
                verdict=verdict,
                images=any(s.prompt.images for s in samples),
            )
        )
    return out


def _ordered(by_part: dict[folder.Part, list[Sample]]) -> list[folder.Part]:
    """The parts in the order every export lists them (``folder.samples_by_part``)."""
    return sorted(by_part, key=folder.part_order)


# -- writing --------------------------------------------------------------------------------


def _line(row: _Row, variants: bool = False) -> dict[str, Any]:
    s = row.sample
    metadata = s.metadata.model_dump(mode="json", exclude_none=True)
    if variants:  # every sample says which it is, a base one too (variant None)
        metadata.update(folder.variant_fields(s))
    return {
        "id": s.id,
        "task": s.task,
        "split": s.split,
        "question": s.prompt.text,
        "system": s.prompt.system,
        "images": [dest for _, dest in row.images],
        "target": oracle_answer(s),
        "metadata": metadata,
        "sample": s.model_dump(mode="json"),
    }


def _copy_image(dataset: Dataset, sample: Sample, rel: str, dest: Path) -> str:
    """Copy one image, checking it against the manifest's hash as it is read; its SHA-256."""
    data, digest = folder.read_image(dataset, sample.id, rel)
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(dest, data)
    return digest


def _write(
    dataset: Dataset, rows: Sequence[_Row], tasks: Sequence[_TaskInfo], stage: Path
) -> dict[str, str]:
    """Write every file of the export into ``stage``; export path -> SHA-256."""
    hashes: dict[str, str] = {}
    for row in rows:
        for rel, dest in row.images:
            if dest not in hashes:
                hashes[dest] = _copy_image(dataset, row.sample, rel, stage / dest)
    variants = any(t.part.variant is not None for t in tasks)
    lines = "".join(json_text(_line(r, variants), indent=None) + "\n" for r in rows)
    data = lines.encode("utf-8")
    write_atomic(stage / SAMPLES_FILE, data)
    hashes[SAMPLES_FILE] = hashlib.sha256(data).hexdigest()
    module = _module(dataset, tasks, hashes[SAMPLES_FILE]).encode("utf-8")
    write_atomic(stage / MODULE_FILE, module)
    hashes[MODULE_FILE] = hashlib.sha256(module).hexdigest()
    write_atomic(stage / README_FILE, _readme(dataset, tasks).encode("utf-8"))
    hashes[README_FILE] = sha256_file(stage / README_FILE)
    return dict(sorted(hashes.items()))


def _marker(dataset: Dataset, tasks: Sequence[_TaskInfo], hashes: dict[str, str]) -> Any:
    return _FORMAT.marker_of(
        dataset,
        tasks={t.name: t.splits for t in tasks},
        files_sha256=hashes,
    )


def _credits(dataset: Dataset) -> list[str]:
    lines = [OSM_ATTRIBUTION]
    sources = sorted({s.provenance.source for s in dataset.samples if s.provenance.source})
    for line in [*dataset.manifest.attribution, *sources]:
        if line not in lines:
            lines.append(line)
    return lines


def _readme(dataset: Dataset, tasks: Sequence[_TaskInfo]) -> str:
    name = dataset.manifest.name
    first = tasks[0].name
    rows = "\n".join(
        f"| `{t.name}` | {t.samples} | {', '.join(f'{k} {v}' for k, v in t.splits.items())} "
        f"| {'yes' if t.images else 'no'} | `inspect eval cartoqa_tasks.py@{t.name}` |"
        for t in tasks
    )
    credits = "\n".join(f"- {line}" for line in _credits(dataset))
    variants = _variants_readme() if any(t.part.variant is not None for t in tasks) else ""
    licence = (
        "\nThe map images are rendered from OpenStreetMap data, available under the Open "
        "Database\nLicense (ODbL 1.0, https://www.openstreetmap.org/copyright).\n"
        if any(t.images for t in tasks)
        else ""
    )
    return f"""# cartoqa dataset `{name}` for inspect_ai

Map data {OSM_ATTRIBUTION}. This folder is the cartoqa dataset `{name}`
({len(dataset)} samples) as an [inspect_ai](https://inspect.aisi.org.uk/) task module,
exported by cartoqa {__version__}. The answers are scored by cartoqa's own scorers, so
inspect reports the numbers `cartoqa score` prints for the same answers.

## Running it

It needs inspect_ai and cartoqa (cartoqa {__version__}, which exported it, from its checkout:
`pip install -e /path/to/cartoqa`) installed where it runs, and nothing else outside this
folder. `cartoqa_tasks.py` names the tasks; their dataset, scorer and metrics are cartoqa's
(`cartoqa.exports.inspect_runtime`), which it imports:

```
pip install inspect-ai
cd path/to/this/folder
# one task
inspect eval cartoqa_tasks.py@{first} --model openai/gpt-4o
# every task
inspect eval cartoqa_tasks.py --model anthropic/claude-sonnet-4-0
# one split of a task
inspect eval cartoqa_tasks.py@{first} -T split=test --model openai/gpt-4o
# the logs
inspect view
```

Give the module by a relative path, as above (from this folder, or
`inspect eval ../exports/this-folder/cartoqa_tasks.py@{first}`): inspect 0.3.285 on
Python 3.11 refuses an absolute path that names no task (`inspect eval
/abs/path/cartoqa_tasks.py` fails with "Non-relative patterns are unsupported"; with
`@TASK` it loads). The module finds `samples.jsonl` and `images/` beside itself.

### Local models

inspect's `hf/` provider (transformers in-process) sends text only and refuses image
content: use it for the text-only tasks. For the map tasks, serve the model behind an
OpenAI-compatible server and point inspect's `openai-api` provider at it (it sends each
map as a base64 image in a chat-completions request):

```
vllm serve Qwen/Qwen2-VL-2B-Instruct --port 8000   # or: transformers serve --port 8000
LOCAL_BASE_URL=http://localhost:8000/v1 LOCAL_API_KEY=local \
  inspect eval cartoqa_tasks.py@{first} --model openai-api/local/Qwen/Qwen2-VL-2B-Instruct
```

### Offline

inspect counts tokens with tiktoken's `o200k_base` tables (where a provider reports no
usage, and for its context management), which tiktoken downloads on first use. Offline,
fill a cache on a machine with network and point `TIKTOKEN_CACHE_DIR` at a copy of it:

```
TIKTOKEN_CACHE_DIR=$PWD/tiktoken-cache \\
  python -c "import tiktoken; tiktoken.get_encoding('o200k_base')"
# copy tiktoken-cache/ over, then on the offline machine:
export TIKTOKEN_CACHE_DIR=/path/to/tiktoken-cache
```

| task | samples | splits | map image | command |
|---|---|---|---|---|
{rows}
{variants}
## What is asked and how it is scored

Each sample is one user message: the map (where the task shows one) and the question,
after the task's system prompt where it has one. The target is the answer written as the
task asks for it (what cartoqa's `oracle` baseline answers; it scores 100%). The scorer
rebuilds the cartoqa sample from its metadata (`cartoqa_sample`) and scores the model's
answer with `cartoqa.scoring.score_sample`: the score's value is C or I (the verdict),
its answer what the scorer read, its explanation why it is not right, its metadata the
per-sample values and the full cartoqa score (`cartoqa_score`).

Metrics: `accuracy` and `stderr` of the verdicts, and cartoqa's own metrics of the task
(`cartoqa_metrics`, reduced by the task's `TaskSpec`): the overall row by name (SR2, aSA,
connectivity for SRN; rmse, mae, mape for RLE per unit and difficulty; ...), and each
breakdown row as `GROUP/METRIC` (`zoom=18/SR2`), as `cartoqa score` groups them. With
`--epochs N` cartoqa's metrics pool every epoch's answers. A metric cartoqa cannot compute
(NaN: r² of one sample, SRN's connectivity without a road network) is left out: inspect's
metrics are numbers, and NaN is not JSON.

The scores depend on the installed cartoqa: use the version that exported this folder
(cartoqa {__version__}); the module warns when another is installed.

## Credits

{credits}
{licence}"""


def _variants_readme() -> str:
    return """
## Paired variants

This dataset asks its questions again under controlled changes (the map as text, with
coordinates, without labels, in greyscale...). Each cartoqa task's variant is an inspect
task of its own, `<task>__<variant>` (`srn__text`, `srn__image_text`; the table above),
scored alone with the table `cartoqa score` prints under `<task>@<variant>`, so a variant's
number never mixes with its base task's. Every sample's metadata says which it is:
`variant` (None for a base sample), `base_id` (the base question it copies: it pairs them)
and `answerable`. The questions a variant made unanswerable (`answerable` false: a question
that needs the labels, asked without them) are tasks of their own,
`<task>__<variant>__unanswerable`, never scored as ordinary misses. A `text` variant's
samples have no image: the question holds the map written out as text.
"""


# -- the task module --------------------------------------------------------------------------

_MODULE_HEAD = '''\
"""inspect_ai tasks for the cartoqa dataset "{name}", scored by cartoqa's own scorers.

Map data © OpenStreetMap contributors.  Exported by cartoqa {version}; see README.md.

    inspect eval cartoqa_tasks.py@{first} --model openai/gpt-4o

Written by ``cartoqa export --to inspect``: export again rather than edit it (the module
checks that samples.jsonl is the one it was written with).  It holds only what is
particular to the export: the tasks' dataset, scorer and metrics are cartoqa's
(``cartoqa.exports.inspect_runtime``), so cartoqa must be installed where inspect runs.
"""

from __future__ import annotations

from pathlib import Path

try:
    from cartoqa.exports.inspect_runtime import InspectExport
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "these tasks are scored by cartoqa, which is not installed here: install cartoqa "
        "{version}, which exported them (pip install -e /path/to/cartoqa)"
    ) from exc

from inspect_ai import Task, task

EXPORT = InspectExport(
    folder=Path(__file__).resolve().parent,
    dataset={dataset},
    exported_by={exported_by},
    samples_sha256={samples_sha256},
    # the credits the data requires, in every log's task metadata
    attribution={attribution},
    # task -> whether its scorer gives a verdict (right or wrong), and its samples by split{note}
    tasks={{
{tasks}
    }},
)
#: the inspect task of one cartoqa task, ``split`` (None: all) of its samples
cartoqa_task = EXPORT.task
'''

_MODULE_TASK = '''

@task(name="{name}")
def {function}(split: str | None = None) -> Task:
    """cartoqa's {what} task ({samples} {noun})."""
    return cartoqa_task("{name}", split)
'''


def _what(part: folder.Part) -> str:
    """The part in its @task's docstring: "srn", "srn task, variant text"."""
    if part.variant is None:
        return part.task
    variant = re.sub(r"[^A-Za-z0-9:+ _-]", "?", part.variant)  # safe in a docstring
    return f"{part.task} task, variant {variant}" + (", unanswerable" if part.unanswerable else "")


def _module(dataset: Dataset, tasks: Sequence[_TaskInfo], samples_sha256: str) -> str:
    # json.dumps writes Python literals here: ASCII strings, and the dicts' keys are strings
    table = "\n".join(
        f"        {json.dumps(t.name)}: "
        f'{{"verdict": {t.verdict}, "splits": {json.dumps(t.splits, sort_keys=True)}'
        + (
            f', "task": {json.dumps(t.part.task)}, "variant": {json.dumps(t.part.variant)}, '
            f'"unanswerable": {t.part.unanswerable}'
            if t.part.variant is not None
            else ""
        )
        + "},"
        for t in tasks
    )
    head = _MODULE_HEAD.format(
        name=re.sub(r"[^A-Za-z0-9 ._-]", "?", dataset.manifest.name),  # safe in a docstring
        version=__version__,
        first=tasks[0].name,
        dataset=json.dumps(dataset.manifest.name),
        exported_by=json.dumps(__version__),
        samples_sha256=json.dumps(samples_sha256),
        attribution=json.dumps(_credits(dataset)),
        note=(
            "\n    # (a paired variant's task: its cartoqa task and variant too)"
            if any(t.part.variant is not None for t in tasks)
            else ""
        ),
        tasks=table,
    )
    parts = [
        _MODULE_TASK.format(
            name=t.name,  # letters, digits and underscores (TaskSpec): a literal as it is
            what=_what(t.part),
            function=t.function,
            samples=t.samples,
            noun="sample" if t.samples == 1 else "samples",
        )
        for t in tasks
    ]
    return head + "".join(parts)
