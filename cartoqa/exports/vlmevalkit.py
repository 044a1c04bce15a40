"""The VLMEvalKit export (``cartoqa export DATASET --to vlmevalkit OUT``): one TSV per task
in the layout VLMEvalKit reads from ``$LMUData``, a dataset class that asks cartoqa's
questions and scores the answers with cartoqa's scorers, and a README.

::

    OUT/CartoQA_<task>.tsv   one benchmark per task (the name VLMEvalKit is given, without
                             ".tsv")
    OUT/cartoqa_vlmeval.py   the dataset class (``CartoQADataset``) for the open-ended tasks:
                             the export's benchmarks on the class of
                             ``cartoqa.exports.vlmevalkit_runtime``, which it imports
    OUT/README.md            how to use them, with the data's attribution
    OUT/cartoqa-export.json  what made the export, with each file's SHA-256 (marks the
                             folder as an export)

The columns, as VLMEvalKit documents them: ``index`` (an integer, unique in the file, in
the dataset's order), ``image`` (the map as base64 PNG; a row that shows an image an
earlier row already holds has that row's ``index`` instead, which VLMEvalKit resolves, as
it does any value of 64 characters or fewer; absent in the TSVs of text-only tasks),
``question`` (the user message, after the system prompt and a blank line where the sample
has one), ``A``-``E`` (choice tasks only: the options), ``answer`` (the correct letter for
choice tasks, else the truth's ``answer_text()``), ``category`` (the task),
``l2-category`` (``KEY=VALUE`` of the first of the task's own breakdown keys that its
samples carry, as cartoqa's tables name their rows: "zoom=17", "difficulty=easy",
"feature_type=bank", "category=amenity"), ``split``, then ``cartoqa_id`` (the sample's id)
and ``cartoqa_sample`` (the whole sample as JSON, which the class scores).

A dataset that holds paired variants (``cartoqa.tasks.variants``: "srn-0004@text") gets one
benchmark per task and variant (``folder.Part``): ``CartoQA_srn`` (the base questions),
``CartoQA_srn__text``, ``CartoQA_srn__greyscale``..., and
``CartoQA_<task>__nolabels__unanswerable`` for the questions a variant made unanswerable,
each scored alone (``evaluate`` gives the table ``cartoqa score`` prints under its score
key, "srn@text"), so base and variant numbers never mix; its rows have three more columns
after ``split``: ``variant`` (its name, "image+text"; empty for a base row), ``base_id``
(the base sample's id) and ``answerable`` ("true" or "false").  A ``text`` variant's
benchmark of a map task has no ``image`` column, as a GPS task's has none.  A dataset
without variants is written as before.

Strings are written quoted (``csv.QUOTE_NONNUMERIC``), so a tab, a newline or a carriage
return inside a question survives pandas' ``read_csv(sep="\\t")``; the class reads every
cell as text (``keep_default_na=False``), so an answer of "NA" stays "NA".

The class and its scoring live in ``cartoqa.exports.vlmevalkit_runtime``, not in the
exported ``cartoqa_vlmeval.py``, so that the folder holds no copy of cartoqa's logic: the
file imports them, and holds only what is particular to the export (its benchmarks and
their tasks, each task's headline metric, the credits, what was exported).  VLMEvalKit
therefore needs cartoqa installed next to it.

The export is written into a hidden sibling folder (``.OUT.staging-PID``) and renamed into
place at the end, as ``DatasetWriter`` does: an earlier export at OUT stays whole until the
new one is complete, and a failure leaves nothing behind.  OUT may be new, empty, or (with
``overwrite``) an earlier VLMEvalKit export; any other folder is refused, never deleted.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.errors import DatasetError
from cartoqa.exports import folder
from cartoqa.exports.licences import Sources, sources_of
from cartoqa.records import OSM_ATTRIBUTION, ChoiceTruth, Sample
from cartoqa.stores import Dataset
from cartoqa.stores._files import sha256_file, write_atomic

__all__ = [
    "CLASS_FILE",
    "EXPORT_MARKER",
    "FORMAT",
    "README_FILE",
    "export_vlmevalkit",
    "tsv_name",
]

#: the dataset class file
CLASS_FILE = "cartoqa_vlmeval.py"
#: how to use the export
README_FILE = "README.md"
#: the file that marks a folder as a cartoqa export (the Hugging Face export's name too;
#: its ``format`` tells the two apart)
EXPORT_MARKER = "cartoqa-export.json"
#: the marker's ``format``
FORMAT = "vlmevalkit"
#: an earlier export: its marker (with the README beside it) says which format it is
_FORMAT = folder.ExportFormat(
    FORMAT, "VLMEvalKit", EXPORT_MARKER, beside=(README_FILE,), names_other_formats=True
)
#: VLMEvalKit reads an ``image`` value this long or shorter as another row's ``index``
MAX_REFERENCE_CHARS = 64
#: the most characters Excel keeps in a cell (VLMEvalKit's .xlsx predictions cut longer ones)
EXCEL_CELL_CHARS = 32767
#: the option columns VLMEvalKit's multiple-choice datasets read (MFS has five options)
OPTION_LETTERS = "ABCDE"
#: rows written to a TSV at a time (their images are held in memory meanwhile)
_CHUNK_ROWS = 200
#: breakdown keys tried after a task's own ``group_by``, for ``l2-category``
_FALLBACK_KEYS = ("zoom", "difficulty", "feature_type")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def tsv_name(task: str) -> str:
    """The TSV of ``task`` ("CartoQA_rle.tsv"); VLMEvalKit's dataset name is its stem."""
    return f"CartoQA_{task}.tsv"


@dataclass
class _Table:
    task: str
    """The cartoqa task."""
    part: folder.Part
    """The task's base samples or a variant's (the benchmark holds one or the other)."""
    samples: list[Sample]
    mcq: bool
    letters: str
    has_images: bool
    l2_key: str | None
    variants: bool = False
    """Whether the dataset holds paired variants (the rows then say which they are)."""

    @property
    def name(self) -> str:
        return tsv_name(self.part.name)


def export_vlmevalkit(dataset: Dataset, out: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Write ``dataset`` to ``out`` in VLMEvalKit's layout (module docstring); returns the
    paths written, the TSVs first.

    Raises ``CartoqaError`` naming the problem and its fix: ``out`` a file or a link, an
    export already there without ``overwrite``, ``out`` a folder of other files (never
    replaced, even with ``overwrite``), a sample with more than one image, a task whose
    samples show an image only in part (VLMEvalKit drops the rows without one), a sample's
    image missing or changed since the dataset was made; in each case nothing is left at
    ``out`` or beside it.
    """
    target = folder.export_target(dataset, out)
    tables = _plan(dataset)  # every image is checked here, before anything is written
    with folder.export_folder(target, _FORMAT, overwrite=overwrite) as staged:
        stage = staged.path
        hashes: dict[str, str] = {}
        stats: dict[str, dict[str, int]] = {}
        for table in tables:
            path = stage / table.name
            stats[table.name] = _write_tsv(dataset, table, path)
            hashes[table.name] = sha256_file(path)
        write_atomic(stage / CLASS_FILE, _class_file(dataset, tables).encode("utf-8"))
        hashes[CLASS_FILE] = sha256_file(stage / CLASS_FILE)
        write_atomic(stage / README_FILE, _readme(dataset, tables, stats).encode("utf-8"))
        hashes[README_FILE] = sha256_file(stage / README_FILE)
        staged.marker = _marker(dataset, tables, stats, hashes)
    names = [t.name for t in tables] + [CLASS_FILE, README_FILE, EXPORT_MARKER]
    return [target / n for n in names]


# -- planning: every check before anything is written ----------------------------------------


def _plan(dataset: Dataset) -> list[_Table]:
    by_part = folder.samples_by_part(dataset)
    variants = folder.has_variants(dataset)
    tables = []
    for part, samples in by_part.items():
        task = part.task
        with_image = [s for s in samples if s.prompt.images]
        for s in with_image:
            if len(s.prompt.images) > 1:
                raise DatasetError(
                    f"sample {s.id!r} shows {len(s.prompt.images)} images; the VLMEvalKit "
                    "export writes one image per row (every cartoqa task shows one)"
                )
            folder.image_size(dataset, s.id, s.prompt.images[0])  # there
        if with_image and len(with_image) < len(samples):
            bare = next(s for s in samples if not s.prompt.images)
            raise DatasetError(
                f"task {part.what!r} shows images with {len(with_image)} of its {len(samples)} "
                f"samples (sample {bare.id!r} has none); VLMEvalKit drops the rows of an "
                "image benchmark that have no image, so the export would not ask them.  "
                "Build the dataset again, or drop those samples"
            )
        mcq = all(isinstance(s.ground_truth, ChoiceTruth) for s in samples)
        letters = OPTION_LETTERS[:4]
        if mcq:
            used = {k for s in samples for k in _options(s)}
            extra = sorted(used - set(OPTION_LETTERS))
            if extra:
                raise DatasetError(
                    f"task {task!r} has options lettered {', '.join(extra)}; VLMEvalKit's "
                    f"multiple-choice columns are {', '.join(OPTION_LETTERS)}"
                )
            letters = "".join(x for x in OPTION_LETTERS if x in used or x in letters)
        tables.append(
            _Table(
                task=task,
                part=part,
                samples=samples,
                mcq=mcq,
                letters=letters,
                has_images=bool(with_image),
                l2_key=_l2_key(task, samples),
                variants=variants,
            )
        )
    return tables


def _options(sample: Sample) -> dict[str, str]:
    truth = sample.ground_truth
    return truth.options if isinstance(truth, ChoiceTruth) else {}


def _l2_key(task: str, samples: Sequence[Sample]) -> str | None:
    """The first of the task's breakdown keys (its spec's ``group_by``, then zoom,
    difficulty, feature type) that any of its samples carries."""
    from cartoqa.tasks.spec import _group_value, get_task

    spec = get_task(task)
    own = [k for k in (spec.group_by if spec is not None else ()) if k != "split"]
    for key in (*own, *_FALLBACK_KEYS):
        if any(_group_value(s, key) is not None for s in samples):
            return key
    return None


def _l2_value(sample: Sample, key: str) -> str:
    from cartoqa.tasks.spec import _group_value

    return f"{key}={_group_value(sample, key)}"


# -- writing ------------------------------------------------------------------------------------


def _columns(table: _Table) -> list[str]:
    cols = ["index"]
    if table.has_images:
        cols.append("image")
    cols.append("question")
    if table.mcq:
        cols += list(table.letters)
    cols += ["answer", "category"]
    if table.l2_key is not None:
        cols.append("l2-category")
    cols.append("split")
    if table.variants:
        cols += list(folder.VARIANT_COLUMNS)
    cols += ["cartoqa_id", "cartoqa_sample"]
    return cols


def _question(sample: Sample) -> str:
    """The prompt as one text: the system prompt, a blank line, the user message."""
    p = sample.prompt
    return f"{p.system}\n\n{p.text}" if p.system else p.text


def _png_base64(dataset: Dataset, sample: Sample) -> tuple[str, str]:
    """(base64 of the image as PNG, SHA-256 of those PNG bytes)."""
    rel = sample.prompt.images[0]
    path = dataset.image_path(rel)
    data, digest = folder.read_image(dataset, sample.id, rel)
    if not data.startswith(_PNG_MAGIC):
        data = _as_png(data, path)
        digest = hashlib.sha256(data).hexdigest()
    encoded = base64.b64encode(data).decode("ascii")
    if len(encoded) <= MAX_REFERENCE_CHARS:  # no real PNG is this small
        raise DatasetError(f"{path} is too small to be an image ({len(data)} bytes)")
    return encoded, digest


def _as_png(data: bytes, path: Path) -> bytes:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            buf = io.BytesIO()
            im.save(buf, "PNG")
    except (UnidentifiedImageError, OSError) as exc:
        raise DatasetError(
            f"{path} is not an image PIL can read ({exc}); build the dataset again"
        ) from None
    return buf.getvalue()


def _write_tsv(dataset: Dataset, table: _Table, path: Path) -> dict[str, int]:
    import pandas as pd

    cols = _columns(table)
    first_row: dict[str, int] = {}  # PNG SHA-256 -> index of the row holding its base64
    rows: list[dict[str, Any]] = []
    with open(path, "w", encoding="utf-8", newline="") as f:

        def flush(header: bool) -> None:
            frame = pd.DataFrame(rows, columns=cols)
            frame.to_csv(
                f,
                sep="\t",
                index=False,
                header=header,
                lineterminator="\n",
                quoting=csv.QUOTE_NONNUMERIC,
            )
            rows.clear()

        header = True
        for index, s in enumerate(table.samples):
            row: dict[str, Any] = {"index": index}
            if table.has_images:
                encoded, digest = _png_base64(dataset, s)
                if digest in first_row:
                    row["image"] = str(first_row[digest])
                else:
                    first_row[digest] = index
                    row["image"] = encoded
            row["question"] = _question(s)
            truth = s.ground_truth
            if table.mcq:
                assert isinstance(truth, ChoiceTruth)
                for letter in table.letters:
                    row[letter] = truth.options.get(letter, "")
                row["answer"] = truth.answer
            else:
                row["answer"] = truth.answer_text()
            row["category"] = s.task
            if table.l2_key is not None:
                row["l2-category"] = _l2_value(s, table.l2_key)
            row["split"] = s.split
            if table.variants:
                fields = folder.variant_fields(s)
                row["variant"] = fields["variant"] or ""
                row["base_id"] = fields["base_id"]
                row["answerable"] = "true" if fields["answerable"] else "false"
            row["cartoqa_id"] = s.id
            row["cartoqa_sample"] = s.model_dump_json()
            rows.append(row)
            if len(rows) >= _CHUNK_ROWS:
                flush(header)
                header = False
        if rows or header:
            flush(header)
        f.flush()
        os.fsync(f.fileno())
    return {"rows": len(table.samples), "images": len(first_row)}


def _marker(
    dataset: Dataset,
    tables: Sequence[_Table],
    stats: dict[str, dict[str, int]],
    hashes: dict[str, str],
) -> Any:
    return _FORMAT.marker_of(
        dataset,
        tsvs={
            t.name: {
                "task": t.task,
                **(
                    {"variant": t.part.variant, "answerable": not t.part.unanswerable}
                    if t.part.variant is not None
                    else {}
                ),
                "mcq": t.mcq,
                "l2-category": t.l2_key,
                **stats[t.name],
            }
            for t in tables
        },
        files_sha256=dict(sorted(hashes.items())),
    )


# -- the attribution -----------------------------------------------------------------------


def _made_of(table: _Table) -> Sources:
    """What a task's samples are made from, and their licences."""
    from cartoqa.tasks.spec import get_task

    spec = get_task(table.task)
    family = spec.family if spec is not None else ("map" if table.has_images else "gps")
    return sources_of(table.samples, family)


def _credits(dataset: Dataset, tables: Sequence[_Table]) -> list[str]:
    """The lines of credit the data requires: OpenStreetMap's where a task shows maps, then
    the manifest's lines and the sources the samples name ("A; B": one line each)."""
    credits: list[str] = []
    if any(t.has_images for t in tables):
        credits.append(OSM_ATTRIBUTION)
    sources = sorted({s.provenance.source for s in dataset.samples if s.provenance.source})
    for src in (*dataset.manifest.attribution, *sources):
        for line in (" ".join(x.split()) for x in src.split("; ")):
            if line and line not in credits:
                credits.append(line)
    if OSM_ATTRIBUTION not in credits:
        credits.insert(0, OSM_ATTRIBUTION)  # shown with every result of OSM data
    return credits


def _readme(dataset: Dataset, tables: Sequence[_Table], stats: dict[str, dict[str, int]]) -> str:
    m = dataset.manifest
    name = " ".join(m.name.split()) or "dataset"
    open_ended = [t for t in tables if not t.mcq]
    mcq = [t for t in tables if t.mcq]
    rendered = [t.task for t in tables if _made_of(t).osm_rendered]
    lines = [
        f"# cartoqa for VLMEvalKit: {name}",
        "",
        f"The {len(dataset.samples)} questions of the cartoqa dataset `{name}` "
        f"(samples.jsonl SHA-256 `{m.samples_sha256}`), exported by cartoqa {__version__} "
        "as VLMEvalKit benchmarks: one TSV per task.",
        "",
        "## Attribution",
        "",
        "Map data © OpenStreetMap contributors, under the Open Database License "
        "(https://www.openstreetmap.org/copyright)"
        + (
            ": the map images of " + ", ".join(f"`{x}`" for x in rendered) + " are rendered "
            "from it.  The credits the dataset records:"
            if rendered
            else ".  The credits the dataset records:"
        ),
        "",
        *(f"- {line}" for line in _credits(dataset, tables)),
        "",
        "## Files",
        "",
        "| benchmark (`--data`) | task | rows | images stored | kind | l2-category | licences |",
        "| --- | --- | ---: | ---: | --- | --- | --- |",
    ]
    for t in tables:
        st = stats[t.name]
        kind = "multiple choice" if t.mcq else "open-ended"
        images = str(st["images"]) if t.has_images else "text only"
        lines.append(
            f"| {t.name.removesuffix('.tsv')} | {t.part.what} | {st['rows']} | {images} | {kind} | "
            f"{t.l2_key or '-'} | {', '.join(_made_of(t).licences)} |"
        )
    lines += [
        "",
        "## Use",
        "",
        "1. Put the TSVs where VLMEvalKit reads its data, `$LMUData` (`~/LMUData` when the "
        'variable is unset): `cp CartoQA_*.tsv "$LMUData"/`.',
        "2. Install cartoqa in VLMEvalKit's environment: the class is cartoqa's "
        "(`cartoqa.exports.vlmevalkit_runtime`; `cartoqa_vlmeval.py` imports it and names "
        "this export's benchmarks), and it scores with cartoqa's scorers.",
        "3. Register the class: copy `cartoqa_vlmeval.py` into `VLMEvalKit/vlmeval/dataset/`, "
        "and in `vlmeval/dataset/__init__.py` add `from .cartoqa_vlmeval import "
        "CartoQADataset` and put `CartoQADataset` in the `IMAGE_DATASET` list.",
    ]
    example = (open_ended or mcq)[0].name.removesuffix(".tsv")
    lines += [
        f"4. Run: `python run.py --data {example} --model MODEL` "
        "(several `--data` names at once are fine).",
        "",
    ]
    if open_ended:
        lines += [
            "The class serves the open-ended benchmarks ("
            + ", ".join(f"`{t.name.removesuffix('.tsv')}`" for t in open_ended)
            + "). It sends each question exactly as cartoqa asks it "
            "(`force_use_dataset_prompt`, so models do not rewrite it) with the map as a PNG, "
            "and its `evaluate` scores each `prediction` with cartoqa's scorer: it returns "
            "the task's overall row of `cartoqa.scoring.score_run` (the numbers `cartoqa "
            "score` gives for the same answers) and writes the whole table, breakdowns "
            "included, beside the predictions file as `<predictions>_cartoqa_score.json`. "
            "No judge model is used; an empty prediction counts as no answer.  The first "
            "number `evaluate` returns is the task's headline metric (its task spec's: "
            "`mape (all m)` for RLE, `SR2` for SRN; `CartoQADataset.headline`, `HEADLINES` "
            "in the class file), which a summary that takes the first number shows.",
            "",
            "Run VLMEvalKit with `PRED_FORMAT=tsv` (or `json`): by default it writes "
            "predictions as .xlsx, whose writer escapes control characters (`\\x16` becomes "
            "`_x0016_`; the class undoes that when it reads an .xlsx, but a literal `_x0016_` "
            "in an answer cannot be told from one) and where Excel keeps at most 32,767 "
            "characters a cell (the class then reads the samples from the TSV, but a longer "
            "answer reaches the scorer cut; it warns).",
            "",
        ]
    if mcq:
        names = ", ".join(f"`{t.name.removesuffix('.tsv')}`" for t in mcq)
        lines += [
            f"The multiple-choice benchmarks ({names}) need no registration: VLMEvalKit runs "
            "a TSV with `A`, `B`, ... columns as a custom multiple-choice benchmark, with its "
            "own prompt (the options listed again) and its own answer matching.  For "
            "cartoqa's scores of those predictions, call "
            "`cartoqa_vlmeval.score_predictions(PREDICTIONS_FILE)`.",
            "",
        ]
    lines += [
        "## Columns",
        "",
        "- `index`: the row's number, unique in its TSV, in the dataset's order",
        "- `image`: the map, base64 PNG; a row showing an image an earlier row already holds "
        "has that row's `index` instead (VLMEvalKit resolves values of 64 characters or "
        "fewer so); absent in text-only tasks",
        "- `question`: the sample's system prompt, a blank line, then its question "
        "(the question alone where it has no system prompt)",
        "- `A`-`E`: the options (multiple-choice tasks)",
        "- `answer`: the correct letter (multiple choice), else the ground truth written as "
        "an answer in its kind's format (`FINAL ANSWER: ...`)",
        "- `category`: the task; `l2-category`: `KEY=VALUE` of the task's first breakdown "
        "key (the table above), as cartoqa names the rows of its tables",
        "- `split`: train, dev or test; `cartoqa_id`: the sample's id; `cartoqa_sample`: the "
        "whole sample as JSON (what the class scores)",
        *(
            [
                "- `variant`: the paired variant the row is asked under (empty for a base "
                "row); `base_id`: the id of the base question it copies; `answerable`: "
                '"false" where the variant made the answer unreadable',
            ]
            if any(t.variants for t in tables)
            else []
        ),
        "",
        *(_variants_readme(tables) if any(t.part.variant for t in tables) else []),
        "GPSBench's track scores (the means over GPS tasks) need every GPS task's answers "
        "at once: score those with `cartoqa score`, or give `score_predictions` the "
        "list of every GPS task's predictions files.",
    ]
    if m.warnings:
        lines += ["", "## Warnings", ""]
        lines += [f"- {' '.join(w.split())}" for w in m.warnings]
    return "\n".join(lines) + "\n"


def _variants_readme(tables: Sequence[_Table]) -> list[str]:
    """The README's lines on the paired variants."""
    return [
        "## Paired variants",
        "",
        "This dataset asks its questions again under controlled changes (the map as text, "
        "with coordinates, without labels, in greyscale...).  Each task's variant is a "
        "benchmark of its own, `CartoQA_<task>__<variant>` (the table above), so that a "
        "variant's number never mixes with the base's: `evaluate` gives the table `cartoqa "
        "score` prints under `<task>@<variant>`.  Compare a variant's number with its base "
        "benchmark's (`CartoQA_<task>`); `base_id` pairs the rows.  The questions a variant "
        "made unanswerable (`answerable` false: a question that needs the labels, asked "
        "without them) are benchmarks of their own, `CartoQA_<task>__<variant>__unanswerable`"
        ", never scored as ordinary misses.  A `text` variant's benchmark has no `image` "
        "column: the question holds the map written out as text.",
        "",
    ]


# -- the dataset class ------------------------------------------------------------------------


def _headline(task: str) -> str:
    """The metric a task is summed up by: its spec's ``headline``, else its first metric
    (``cartoqa.tasks.spec.TaskSpec.headline``, as ``cartoqa report`` takes it)."""
    from cartoqa.tasks.spec import get_task

    spec = get_task(task)
    if spec is None:
        return "accuracy"
    return spec.headline or spec.metrics[0]


def _class_file(dataset: Dataset, tables: Sequence[_Table]) -> str:
    tsvs = {t.name.removesuffix(".tsv"): t.task for t in tables}
    headlines = {name: _headline(task) for name, task in tsvs.items()}
    open_ended = tuple(n for n, t in zip(tsvs, tables, strict=True) if not t.mcq)
    export = {
        "dataset": dataset.manifest.name,
        "samples_sha256": dataset.manifest.samples_sha256,
        "cartoqa": __version__,
    }
    name = " ".join(dataset.manifest.name.split()) or "dataset"
    values = {
        "@NAME@": name.replace("\\", "/").replace('"', "'"),
        "@VERSION@": __version__,
        "@TSV_TASKS@": _py(tsvs),
        "@OPEN_ENDED@": _py(open_ended),
        "@HEADLINES@": _py(headlines),
        "@ATTRIBUTION@": _py(tuple(_credits(dataset, tables))),
        "@EXPORT@": _py(export),
    }
    text = _CLASS_TEMPLATE
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _py(value: tuple[str, ...] | dict[str, str]) -> str:
    """A Python literal of a tuple or dict of strings, laid out as ruff formats it (JSON's
    string syntax is Python's)."""

    def q(x: str) -> str:
        return json.dumps(x, ensure_ascii=False)

    if isinstance(value, dict):
        items = "".join(f"\n    {q(k)}: {q(v)}," for k, v in value.items())
        return f"{{{items}\n}}" if value else "{}"
    if len(value) == 1:
        return f"({q(value[0])},)"
    items = "".join(f"\n    {q(x)}," for x in value)
    return f"({items}\n)" if value else "()"


_CLASS_TEMPLATE = '''\
"""cartoqa's benchmarks in VLMEvalKit: the dataset class of the export of the cartoqa
dataset "@NAME@" (written by cartoqa @VERSION@, ``cartoqa export --to vlmevalkit``).

Map data © OpenStreetMap contributors (https://www.openstreetmap.org/copyright).

``CartoQADataset(NAME)`` reads ``$LMUData/NAME.tsv`` (NAME: "CartoQA_<task>"), asks each
question as cartoqa words it, with its map as a PNG, and scores the model's predictions
with cartoqa's own scorer.  ``score_predictions(FILE)`` scores a predictions file with no
TSV at hand (any task of the export, multiple choice included).  README.md beside this
file says how to register the class.

This file holds only what is particular to the export: the class and its scoring are
cartoqa's (``cartoqa.exports.vlmevalkit_runtime``), so cartoqa must be installed beside
VLMEvalKit.
"""

from __future__ import annotations

try:
    from cartoqa.exports.vlmevalkit_runtime import BenchmarkDataset, Benchmarks, read_table
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "this dataset class asks and scores with cartoqa, which is not installed here: "
        "install cartoqa @VERSION@, which exported it (pip install -e /path/to/cartoqa), "
        "in VLMEvalKit's environment"
    ) from exc

__all__ = ["CartoQADataset", "read_table", "score_predictions"]

#: benchmark name (the TSV's stem) -> cartoqa task, for every TSV of the export
TSV_TASKS: dict[str, str] = @TSV_TASKS@
#: the open-ended benchmarks, the ones this class serves in VLMEvalKit
OPEN_ENDED: tuple[str, ...] = @OPEN_ENDED@
#: benchmark name -> the metric its task is summed up by (the task spec's headline): the
#: first key ``evaluate`` returns, one per overall row ("mape (all m)", "mape (all ft)")
HEADLINES: dict[str, str] = @HEADLINES@
#: the credits the data requires, shown with every result
ATTRIBUTION: tuple[str, ...] = @ATTRIBUTION@
#: the cartoqa dataset exported
EXPORT: dict[str, str] = @EXPORT@
#: all of the above, as the class reads them
BENCHMARKS = Benchmarks(TSV_TASKS, OPEN_ENDED, HEADLINES, ATTRIBUTION, EXPORT)
#: the benchmark a bare ``CartoQADataset()`` reads
DEFAULT = BENCHMARKS.default


class CartoQADataset(BenchmarkDataset):
    """One CartoQA benchmark (a TSV of the export), asked and scored as cartoqa does."""

    BENCHMARKS = BENCHMARKS


#: scores predictions files of the export's benchmarks (``Benchmarks.score_predictions``)
score_predictions = BENCHMARKS.score_predictions
'''
