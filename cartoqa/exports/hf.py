"""The Hugging Face export (``cartoqa export DATASET --to hf OUT``): parquet shards and a
dataset card that ``datasets.load_dataset`` and the Hub read as they are.

::

    OUT/README.md                                   the dataset card (YAML front matter:
                                                    configs, licence, categories, size)
    OUT/cartoqa-export.json                         what made it, with each file's SHA-256
                                                    (marks the folder as an export)
    OUT/data/<task>/<split>-00000-of-0000N.parquet  one config per task, the dataset's splits

Each row is one sample: ``id``, ``task``, ``split``, ``question`` (the prompt's text),
``system`` (its system prompt, or null), ``image`` (the map, a Hugging Face ``Image``:
{bytes, path}; only in the configs of tasks that show images), ``answer`` (the ground
truth written as the task's prompt asks: what the ``oracle`` baseline writes, the task's
``answer_format`` where it has one, else the truth's ``answer_text()``; scored, it gives
the oracle's tables exactly), and ``ground_truth``, ``metadata`` and
``provenance`` as JSON text, which parse back to cartoqa's records unchanged.  The
features are in each file's schema metadata (``huggingface``), so ``datasets`` decodes
``image`` to a PIL image.

A dataset that holds paired variants (``cartoqa.tasks.variants``: "srn-0004@text") gets one
config per task and variant, so that loading a task's config gives its base questions only
and no score mixes the two: ``srn`` (the base samples), ``srn__text``, ``srn__image_text``,
``srn__greyscale``..., and ``<task>__nolabels__unanswerable`` for the samples a variant
flagged unanswerable (``folder.Part``).  Every row of such a dataset has three more
columns: ``variant`` (its name, "image+text"; null for a base row), ``base_id`` (the base
sample's id) and ``answerable`` (a bool).  A ``text`` variant's config of a map task has no
``image`` column, as a GPS task's has none.  A dataset without variants is written as before.

The export is written into a hidden sibling folder (``.OUT.staging-PID``) and renamed into
place at the end, as ``DatasetWriter`` does: an earlier export at OUT stays whole until the
new one is complete, and a failure leaves nothing behind.  OUT may be new, empty, or
(with ``overwrite``) an earlier export; any other folder is refused, never deleted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartoqa import __version__
from cartoqa.errors import DatasetError, MissingDependencyError
from cartoqa.exports import folder
from cartoqa.exports.licences import LICENCE_NOTES, LICENCE_ORDER, Sources, sources_of
from cartoqa.models.baselines import oracle_answer
from cartoqa.records import OSM_ATTRIBUTION, Sample
from cartoqa.stores import Dataset
from cartoqa.stores._files import sha256_file, write_atomic

__all__ = [
    "CARD_FILE",
    "EXPORT_MARKER",
    "MAX_SHARD_BYTES",
    "MAX_SHARD_ROWS",
    "HfExport",
    "export_hf",
    "hf_features",
]

#: the dataset card
CARD_FILE = "README.md"
#: the file that marks a folder as a cartoqa Hugging Face export (and says what made it)
EXPORT_MARKER = "cartoqa-export.json"
#: a shard holds at most this many rows ...
MAX_SHARD_ROWS = 5000
#: ... and about this many bytes (images and text, before compression)
MAX_SHARD_BYTES = 500_000_000
#: rows per parquet row group (what the Hub's viewer reads at once)
ROW_GROUP_ROWS = 100
#: an earlier export is one whose marker says "hf", with its card beside it
FORMAT = folder.ExportFormat("hf", "Hugging Face", EXPORT_MARKER, beside=(CARD_FILE,))

_SPLIT_ORDER = ("train", "dev", "test")
_OSM_LICENCE_NOTE = "Open Database License (ODbL 1.0, https://www.openstreetmap.org/copyright)"

#: what ``datasets.load_dataset(OUT, TASK, ...)`` needs after an export was replaced in place:
#: it caches a local folder's configs by their file patterns, not the files' contents
RELOAD = 'download_mode="force_redownload", verification_mode="no_checks"'

#: column -> (what it holds, for the card)
COLUMNS = {
    "id": "the sample's id, unique in the dataset",
    "task": "the task (also the config's name)",
    "split": "train, dev or test, as the dataset assigned it",
    "question": "the user message shown to the model",
    "system": "the system prompt, or null",
    "image": "the map shown with the question (a `datasets.Image`: a PIL image once "
    "loaded); present only in the configs of tasks with images",
    "answer": "the ground truth written as the task's prompt asks for it (what cartoqa's "
    "oracle baseline answers; it scores 100%)",
    "ground_truth": "the full ground truth as JSON, with its `kind` (route legs, label "
    "boxes, feature evidence...)",
    "metadata": "the sample's metadata as JSON (city, zoom, difficulty, unit, region...)",
    "provenance": "how the sample was made, as JSON (generator, seed, extract hash, "
    "style version, data source, prompts hash)",
}
#: the columns a dataset with paired variants adds to every row, after ``COLUMNS``
VARIANT_COLUMNS = folder.VARIANT_COLUMNS


@dataclass(frozen=True)
class HfExport:
    """What ``export_hf`` wrote."""

    out: Path
    """The export folder."""
    files: tuple[str, ...]
    """Every file written, relative to ``out`` ("data/rle/test-00000-of-00001.parquet")."""
    rows: dict[str, dict[str, int]]
    """Config (the task, or the task and a variant: ``folder.Part.name``) -> split -> rows."""
    licenses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Config (task) -> its licences (Hub identifiers: "odbl", "cc0-1.0", "isc",
    "cc-by-4.0", "unknown"), from what its samples are made of (``cartoqa.exports.licences``)."""
    replaced: bool = False
    """Whether an earlier export at ``out`` was replaced (``datasets`` may then serve the old
    rows from its cache: ``RELOAD``)."""

    @property
    def total(self) -> int:
        return sum(n for splits in self.rows.values() for n in splits.values())


def hf_features(with_image: bool, with_variants: bool = False) -> dict[str, Any]:
    """The Hugging Face features of one config, as ``datasets.Features.to_dict()`` writes
    them (what ``datasets`` reads from the parquet schema's ``huggingface`` metadata);
    ``with_variants``: with the ``VARIANT_COLUMNS`` (a dataset with paired variants)."""
    string = {"dtype": "string", "_type": "Value"}
    features: dict[str, Any] = {}
    for name in COLUMNS:
        if name == "image":
            if with_image:
                features[name] = {"_type": "Image"}
        else:
            features[name] = dict(string)
    if with_variants:
        features["variant"] = dict(string)
        features["base_id"] = dict(string)
        features["answerable"] = {"dtype": "bool", "_type": "Value"}
    return features


def export_hf(
    dataset: Dataset,
    out: str | Path,
    *,
    overwrite: bool = False,
    max_shard_rows: int = MAX_SHARD_ROWS,
    max_shard_bytes: int = MAX_SHARD_BYTES,
) -> HfExport:
    """Write ``dataset`` to ``out`` in the Hugging Face layout (module docstring).

    Raises ``CartoqaError`` naming the problem and its fix: pyarrow missing, ``out`` a file,
    an export already there without ``overwrite``, ``out`` a folder of other files (never
    replaced, even with ``overwrite``), a sample's image missing or changed since the
    dataset was made; in each case nothing is left at ``out`` or beside it.
    """
    pa, pq = _pyarrow()
    if max_shard_rows < 1 or max_shard_bytes < 1:
        raise ValueError("max_shard_rows and max_shard_bytes must be at least 1")
    target = folder.export_target(dataset, out)
    configs = _plan(dataset, max_shard_rows, max_shard_bytes)  # every image checked here
    variants = folder.has_variants(dataset)
    with folder.export_folder(target, FORMAT, overwrite=overwrite) as staged:
        stage = staged.path
        hashes: dict[str, str] = {}
        for config in configs:
            for shards in config.splits.values():
                for shard in shards:
                    path = stage / shard.path
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _write_shard(pa, pq, dataset, config.has_images, variants, shard, path)
                    hashes[shard.path] = sha256_file(path)
        write_atomic(stage / CARD_FILE, _card(dataset, configs).encode("utf-8"))
        hashes[CARD_FILE] = sha256_file(stage / CARD_FILE)
        staged.marker = _marker(dataset, configs, hashes)
    return HfExport(
        out=target,
        files=(*sorted(hashes), EXPORT_MARKER),
        rows={
            c.task: {s: sum(len(x.rows) for x in v) for s, v in c.splits.items()} for c in configs
        },
        licenses={c.task: c.licenses for c in configs},
        replaced=staged.replaced,
    )


# -- planning: what goes in which file, checked before anything is written ---------------


@dataclass
class _Row:
    sample: Sample
    text: dict[str, Any]
    image: str | None
    """The image's path as the sample names it."""


@dataclass
class _Shard:
    path: str
    """Relative to the export folder."""
    rows: list[_Row]


@dataclass
class _Config:
    task: str
    """The config's name: the task's, or the task's and a variant's (``folder.Part.name``)."""
    part: folder.Part
    family: str
    has_images: bool
    made_of: Sources
    splits: dict[str, list[_Shard]]

    @property
    def licenses(self) -> tuple[str, ...]:
        return self.made_of.licences


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("pyarrow", "export", "the Hugging Face export") from None
    return pa, pq


def _plan(dataset: Dataset, max_rows: int, max_bytes: int) -> list[_Config]:
    by_part = folder.samples_by_part(dataset)
    variants = folder.has_variants(dataset)
    configs: list[_Config] = []
    for part, samples in by_part.items():
        task = part.name
        rows: dict[str, list[tuple[_Row, int]]] = {}
        for s in samples:
            image, size = _image_of(dataset, s)
            extra = folder.variant_fields(s) if variants else {}
            row = _Row(
                sample=s,
                text={
                    "id": s.id,
                    "task": s.task,
                    "split": s.split,
                    "question": s.prompt.text,
                    "system": s.prompt.system,
                    "answer": oracle_answer(s),
                    "ground_truth": s.ground_truth.model_dump_json(),
                    "metadata": s.metadata.model_dump_json(),
                    "provenance": s.provenance.model_dump_json(),
                    **extra,
                },
                image=image,
            )
            size += sum(len(v.encode("utf-8")) for v in row.text.values() if isinstance(v, str))
            rows.setdefault(s.split, []).append((row, size))
        splits = {
            split: _shards(task, split, rows[split], max_rows, max_bytes)
            for split in sorted(rows, key=_split_key)
        }
        family = _family(part.task, samples)
        configs.append(
            _Config(
                task=task,
                part=part,
                family=family,
                has_images=any(s.prompt.images for s in samples),
                made_of=sources_of(samples, family),
                splits=splits,
            )
        )
    return configs


def _split_key(split: str) -> tuple[int, str]:
    return (_SPLIT_ORDER.index(split) if split in _SPLIT_ORDER else len(_SPLIT_ORDER), split)


def _image_of(dataset: Dataset, sample: Sample) -> tuple[str | None, int]:
    images = sample.prompt.images
    if not images:
        return None, 0
    if len(images) > 1:
        raise DatasetError(
            f"sample {sample.id!r} shows {len(images)} images; the Hugging Face export "
            "writes one image per sample (every cartoqa task shows one)"
        )
    rel = images[0]
    size = folder.image_size(dataset, sample.id, rel)
    return rel, size


def _shards(
    task: str, split: str, rows: Sequence[tuple[_Row, int]], max_rows: int, max_bytes: int
) -> list[_Shard]:
    groups: list[list[_Row]] = [[]]
    size = 0
    for row, n in rows:
        current = groups[-1]
        if current and (len(current) >= max_rows or size + n > max_bytes):
            groups.append([])
            current, size = groups[-1], 0
        current.append(row)
        size += n
    total = len(groups)
    return [
        _Shard(path=f"data/{task}/{split}-{i:05d}-of-{total:05d}.parquet", rows=group)
        for i, group in enumerate(groups)
    ]


def _family(task: str, samples: Sequence[Sample]) -> str:
    from cartoqa.tasks.spec import get_task

    spec = get_task(task)
    if spec is not None:
        return spec.family
    return "map" if any(s.prompt.images for s in samples) else "gps"


# -- writing ------------------------------------------------------------------------------


def _schema(pa: Any, with_image: bool, with_variants: bool = False) -> Any:
    fields = []
    for name in COLUMNS:
        if name == "image":
            if with_image:
                fields.append(
                    pa.field("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
                )
        else:
            fields.append(pa.field(name, pa.string()))
    if with_variants:
        fields += [
            pa.field("variant", pa.string()),
            pa.field("base_id", pa.string()),
            pa.field("answerable", pa.bool_()),
        ]
    info = {"info": {"features": hf_features(with_image, with_variants)}}
    return pa.schema(fields, metadata={b"huggingface": json.dumps(info).encode("utf-8")})


def _batches(rows: Sequence[_Row], n: int) -> Iterator[Sequence[_Row]]:
    for i in range(0, len(rows), n):
        yield rows[i : i + n]


def _write_shard(
    pa: Any,
    pq: Any,
    dataset: Dataset,
    with_image: bool,
    with_variants: bool,
    shard: _Shard,
    path: Path,
) -> None:
    schema = _schema(pa, with_image, with_variants)
    with pq.ParquetWriter(path, schema) as writer:
        for batch in _batches(shard.rows, ROW_GROUP_ROWS):
            records = []
            for row in batch:
                record: dict[str, Any] = dict(row.text)
                if with_image:
                    record["image"] = (
                        None
                        if row.image is None
                        else {"bytes": _image_bytes(dataset, row), "path": row.image}
                    )
                records.append(record)
            writer.write_table(pa.Table.from_pylist(records, schema=schema))


def _image_bytes(dataset: Dataset, row: _Row) -> bytes:
    assert row.image is not None
    return folder.read_image(dataset, row.sample.id, row.image)[0]


def _marker(dataset: Dataset, configs: Sequence[_Config], hashes: dict[str, str]) -> Any:
    return FORMAT.marker_of(
        dataset,
        rows={
            c.task: {s: sum(len(x.rows) for x in v) for s, v in c.splits.items()} for c in configs
        },
        licenses={c.task: list(c.licenses) for c in configs},
        files_sha256=dict(sorted(hashes.items())),
    )


# -- the dataset card -------------------------------------------------------------------------


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def _size_category(n: int) -> str:
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if n < limit:
            return label
    return "10M<n<100M"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _variants_section(configs: Sequence[_Config]) -> list[str]:
    """The card's lines on the paired variants' configs."""
    lines = [
        "",
        "## Paired variants",
        "",
        "Each variant asks a task's base questions again under one controlled change (the "
        "map as text, with coordinates, without labels, in greyscale...); its rows share "
        "the base rows' question and truth, their ids add `@` and the variant (`srn-0004@text`"
        "), and `base_id` pairs them.  Each task's variants are configs of their own, so a "
        "task's config holds its base rows only and scores never mix: score each config "
        "apart, and compare a variant's score with its base config's on the same `base_id`s.  "
        "Rows with `answerable` false (a question that needs the labels, asked without "
        "them) are a config of their own too: a model should not be able to answer them, "
        "and they are never scored as ordinary misses.  A `text` variant's rows have no "
        "image.",
        "",
        "| config | task | variant | answerable | rows | images |",
        "| --- | --- | --- | --- | ---: | --- |",
    ]
    for c in configs:
        rows = sum(len(s.rows) for v in c.splits.values() for s in v)
        lines.append(
            f"| {c.task} | {c.part.task} | {c.part.variant or '(base)'} | "
            f"{'no' if c.part.unanswerable else 'yes'} | {rows} | "
            f"{'yes' if c.has_images else 'no'} |"
        )
    return lines


def _card(dataset: Dataset, configs: Sequence[_Config]) -> str:
    m = dataset.manifest
    name = " ".join(m.name.split()) or "dataset"
    total = len(dataset.samples)
    licences = [x for x in LICENCE_ORDER if any(x in c.licenses for c in configs)]
    rendered = [c.task for c in configs if c.made_of.osm_rendered]
    categories = []
    if any(c.has_images for c in configs):
        categories.append("visual-question-answering")
    if any(not c.has_images for c in configs):
        categories.append("question-answering")
    lines = ["---", f"pretty_name: {_q('cartoqa: ' + name)}", "license:"]
    lines += [f"- {x}" for x in licences]
    if m.prompts.get("source", "cartoqa") == "cartoqa":  # the package's wording is English
        lines += ["language:", "- en"]
    lines += ["task_categories:", *(f"- {c}" for c in categories)]
    lines += ["size_categories:", f"- {_q(_size_category(total))}"]
    lines += ["tags:", "- maps", "- geospatial", "- cartoqa"]
    if any("odbl" in c.licenses for c in configs):
        lines.append("- openstreetmap")
    lines.append("configs:")
    for c in configs:
        lines += [f"- config_name: {c.task}", "  data_files:"]
        for split in c.splits:
            lines += [f"  - split: {split}", f"    path: {_q(f'data/{c.task}/{split}-*.parquet')}"]
    lines.append("---")

    body = [
        f"# cartoqa: {name}",
        "",
        f"The questions of the cartoqa dataset `{name}` ({total} samples), exported by "
        f"cartoqa {__version__} in the Hugging Face layout: one config per task, the splits "
        "as the dataset assigned them.",
        "",
        "## Attribution",
        "",
    ]
    credits: list[str] = []
    if rendered:
        every = len(rendered) == sum(1 for c in configs if c.has_images)
        which = (
            "every map image here is"
            if every
            else ("the map images of " + ", ".join(f"`{t}`" for t in rendered) + " are")
        )
        body += [
            f"Map data {OSM_ATTRIBUTION}, under the {_OSM_LICENCE_NOTE}: {which} rendered from it.",
            "",
        ]
    if any("odbl" in c.licenses for c in configs):
        credits.append(OSM_ATTRIBUTION)
    # the manifest's credits, then the sources the samples name ("A; B": one line each)
    named = [*m.attribution, *(src for c in configs for src in c.made_of.sources)]
    for line in (" ".join(x.split()) for src in named for x in src.split("; ")):
        if line and line not in credits:
            credits.append(line)
    body += [f"- {line}" for line in credits] or ["- (the dataset records no credits)"]
    body += [
        "",
        "## Licences",
        "",
        "Each config's licences follow from what its samples record they are made of "
        "(their provenance's source and OpenStreetMap extract).",
        "",
        "| config | licence | made from |",
        "| --- | --- | --- |",
    ]
    for c in configs:
        made = [*c.made_of.sources]
        if not made:
            made = ["(no source recorded)"]
        body.append(f"| {c.task} | {', '.join(c.licenses)} | {_cell('; '.join(made))} |")
    body += [""]
    body += [f"- `{x}`: {LICENCE_NOTES[x]}" for x in licences]
    body += ["", "## Contents", "", "| config | split | rows | files | images |"]
    body += ["| --- | --- | ---: | ---: | --- |"]
    for c in configs:
        for split, shards in c.splits.items():
            rows = sum(len(s.rows) for s in shards)
            body.append(
                f"| {c.task} | {split} | {rows} | {len(shards)} | "
                f"{'yes' if c.has_images else 'no'} |"
            )
    body += [f"| total | | {total} | | |", "", "## Columns", ""]
    columns = dict(COLUMNS)
    if any(c.part.variant is not None for c in configs):
        columns["task"] = (
            "the task (a base config's name; a variant's config is named `<task>__<variant>`)"
        )
    body += [f"- `{col}`: {text}" for col, text in columns.items()]
    if any(c.part.variant is not None for c in configs):
        body += [f"- `{col}`: {text}" for col, text in VARIANT_COLUMNS.items()]
        body += _variants_section(configs)
    example = next((c.task for c in configs if c.has_images), configs[0].task)
    split = next(iter(next(c for c in configs if c.task == example).splits))
    body += [
        "",
        "## Loading",
        "",
        "```python",
        "import json",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("PATH_OR_HUB_ID", "{example}", split="{split}")',
        "row = ds[0]",
        'row["question"], row["answer"]',
        'truth = json.loads(row["ground_truth"])  # its "kind" names the type',
        "```",
        "",
        "With cartoqa installed, `pydantic.TypeAdapter(cartoqa.records.GroundTruth)"
        '.validate_json(row["ground_truth"])` gives the truth back as cartoqa scores it, and '
        "`cartoqa.scoring.score_run` scores answers keyed by `id` (the `answer` column "
        "scores 100%).",
        "",
        "`datasets` caches a local folder's configs by their file names, not their contents: "
        "after this folder is replaced by a new export, load it with "
        f"`{RELOAD}` (or a fresh `cache_dir`) to get the new rows.",
        "",
        "## Provenance",
        "",
        f"- dataset: `{m.name}`, made {m.created_at}; samples.jsonl SHA-256 `{m.samples_sha256}`",
        "- versions: "
        + ", ".join(f"{k} {v if v is not None else '(absent)'}" for k, v in m.versions.items()),
        f"- seeds: {', '.join(map(str, m.seeds)) or '(none recorded)'}",
    ]
    if m.extract_hashes:
        body.append("- OSM extracts (SHA-256):")
        body += [f"  - {k}: `{v}`" for k, v in sorted(m.extract_hashes.items())]
    if m.prompts:
        body.append("- prompts: " + ", ".join(f"{k} `{v}`" for k, v in sorted(m.prompts.items())))
    if m.shortfall:
        body.append(
            "- shortfall (asked for, not made): "
            + ", ".join(f"{k} {v}" for k, v in sorted(m.shortfall.items()))
        )
    for task, inputs in sorted(m.inputs.items()):
        body.append(f"- {task} made from: `{json.dumps(inputs, ensure_ascii=False)}`")
    if m.review:
        body.append(f"- review: `{json.dumps(m.review, ensure_ascii=False)}`")
    if m.warnings:
        body += ["", "## Warnings", ""]
        body += [f"- {_cell(w)}" for w in m.warnings]
    return "\n".join([*lines, *body]) + "\n"
