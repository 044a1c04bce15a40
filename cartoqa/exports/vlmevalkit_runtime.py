"""The runtime of the VLMEvalKit export (``cartoqa.exports.vlmevalkit``): the dataset class
and the scoring that the exported ``cartoqa_vlmeval.py`` imports.

The exported file holds only what is particular to its export (its benchmarks and their
tasks, the open-ended ones, each task's headline metric, the credits, what was exported:
``Benchmarks``) and a subclass of ``BenchmarkDataset`` that carries them; everything it
does is here, so that the folder holds no copy of cartoqa's logic.  VLMEvalKit therefore
needs cartoqa installed next to it.

``BenchmarkDataset`` reads ``$LMUData/NAME.tsv`` (NAME: "CartoQA_<task>"), asks each
question as cartoqa words it, with its map as a PNG, and scores the model's predictions
with cartoqa's own scorer.  Inside VLMEvalKit it derives from ``ImageBaseDataset``; where
vlmeval cannot be imported it derives from ``object`` and still loads, prompts and scores
(vlmeval is imported, when it can be, on this module's import: the class's base is chosen
then).  ``Benchmarks.score_predictions(FILE)`` scores a predictions file with no TSV at
hand (any task of the export, multiple choice included).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

if TYPE_CHECKING:
    _Base = object
else:
    try:  # within VLMEvalKit
        from vlmeval.dataset.image_base import ImageBaseDataset as _Base
    except ImportError:  # without it: the same class on a plain base
        _Base = object

__all__ = [
    "EXCEL_CELL_CHARS",
    "REFERENCE_CHARS",
    "BenchmarkDataset",
    "Benchmarks",
    "lmudata_root",
    "read_table",
    "resolve_images",
    "unescape_excel",
]

#: an ``image`` value this long or shorter names the ``index`` of the row holding the image
REFERENCE_CHARS = 64
#: the most characters Excel keeps in a cell (VLMEvalKit's .xlsx predictions cut longer ones)
EXCEL_CELL_CHARS = 32767


def lmudata_root() -> str:
    """VLMEvalKit's data folder: $LMUData where that folder exists, else ~/LMUData."""
    root = os.environ.get("LMUData")  # noqa: SIM112 (VLMEvalKit's name)
    if root and os.path.isdir(root):
        return root
    root = os.path.join(os.path.expanduser("~"), "LMUData")
    os.makedirs(root, exist_ok=True)
    return root


#: how Excel writers (XlsxWriter, which VLMEvalKit's .xlsx predictions are written with)
#: store a control character that XML cannot hold: "\x16" becomes "_x0016_"
_EXCEL_ESCAPE = re.compile(r"_x00(0[0-8BCEFbcef]|1[0-9A-Fa-f])_")


def unescape_excel(text: str) -> str:
    """``text`` as it was before an Excel writer escaped its control characters (U+0000 to
    U+001F but tab, newline and carriage return, which XML holds): "_x0016_" -> "\\x16".
    (openpyxl, which pandas reads .xlsx with, undoes the escape of a literal "_x" but not
    these; a literal "_x0016_" in an answer cannot be told from an escaped control
    character: write predictions with PRED_FORMAT=tsv to keep every character.)"""
    if not isinstance(text, str) or "_x" not in text:
        return text
    return _EXCEL_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def read_table(path: str) -> pd.DataFrame:
    """A TSV, CSV, Excel or JSON (records) file with every cell as the text written ("NA"
    stays "NA", an empty cell is ""; in an Excel file, control characters as they were
    before the writer escaped them: ``unescape_excel``)."""
    suffix = os.path.splitext(str(path))[1].lower()
    options: dict[str, Any] = {"dtype": str, "keep_default_na": False}
    if suffix == ".tsv":
        return pd.read_csv(path, sep="\t", **options)
    if suffix == ".csv":
        return pd.read_csv(path, **options)
    if suffix in (".xlsx", ".xls"):
        frame = pd.read_excel(path, **options)
        return frame.apply(lambda column: column.map(unescape_excel))
    if suffix == ".json":  # VLMEvalKit's PRED_FORMAT=json: a list of records
        with open(path, encoding="utf-8") as f:
            records = json.load(f)
        rows = [{k: "" if v is None else str(v) for k, v in r.items()} for r in records]
        return pd.DataFrame(rows, dtype=str)
    raise ValueError(
        f"{path}: cannot read a {suffix or 'no-suffix'} file; give .tsv, .csv, .xlsx or .json"
    )


def resolve_images(frame: pd.DataFrame) -> pd.DataFrame:
    """Replace each ``image`` that names another row's ``index`` by that row's image."""
    if "image" not in frame:
        return frame
    keys = [str(x).strip() for x in frame["index"]]
    held = dict(zip(keys, (str(x) for x in frame["image"]), strict=True))
    images = []
    for key in keys:
        value = held[key]
        if len(value) <= REFERENCE_CHARS:
            value = held.get(value.strip(), "")
            if len(value) <= REFERENCE_CHARS:
                raise ValueError(
                    f"row {key}: its image names row {held[key]!r}, which holds no image"
                )
        images.append(value)
    frame = frame.copy()
    frame["image"] = images
    return frame


def _clean(value: Any) -> Any:
    """NaN and infinities as None, for strict JSON (JavaScript and jq refuse NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _overall(table: dict[str, dict[str, float]], headline: str | None = None) -> dict[str, float]:
    """A task's overall row ("all"); a task with one per unit (RLE: "all m", "all ft") gives
    each metric of each, as "METRIC (all m)".  ``headline`` first (for each unit), so that
    a summary that takes the first number takes the task's headline, not a sample count."""
    if "all" in table:
        row = dict(table["all"])
    else:
        row = {
            f"{metric} ({group})": value
            for group, values in table.items()
            if group.startswith("all ")
            for metric, value in values.items()
        }
    if headline is None:
        return row
    first = [k for k in row if k == headline or k.startswith(f"{headline} (all ")]
    return {**{k: row[k] for k in first}, **{k: v for k, v in row.items() if k not in first}}


def _sample(sample_id: str, texts: list[Any]) -> Any:
    from cartoqa.records import Sample

    for text in texts:
        if not isinstance(text, str) or not text:
            continue
        try:
            sample = Sample.model_validate_json(text)
        except ValueError:
            continue
        if sample.id == sample_id:
            return sample
    raise ValueError(
        f"sample {sample_id!r}: its cartoqa_sample is missing or not a whole sample (Excel "
        "keeps at most 32,767 characters in a cell); evaluate through CartoQADataset, which "
        "reads the TSV, or write the predictions as TSV"
    )


@dataclass(frozen=True)
class Benchmarks:
    """What is particular to one export: the benchmarks it holds, recorded when it was
    written (the exported file's constants of the same names)."""

    tsv_tasks: Mapping[str, str]
    """Benchmark name (the TSV's stem) -> cartoqa task, for every TSV of the export."""
    open_ended: tuple[str, ...]
    """The open-ended benchmarks, the ones the dataset class serves in VLMEvalKit."""
    headlines: Mapping[str, str]
    """Benchmark name -> the metric its task is summed up by (the task spec's headline):
    the first key ``evaluate`` returns, one per overall row ("mape (all m)", "mape (all
    ft)")."""
    attribution: tuple[str, ...]
    """The credits the data requires, shown with every result."""
    export: Mapping[str, str]
    """The cartoqa dataset exported: its name, its samples' SHA-256, the cartoqa that
    exported it."""

    @property
    def default(self) -> str:
        """The benchmark a bare ``CartoQADataset()`` reads."""
        return (self.open_ended or tuple(self.tsv_tasks))[0]

    def task_headline(self, task: str) -> str | None:
        """The headline of ``task``: the one recorded at export, else the installed spec's."""
        for name, of in self.tsv_tasks.items():
            if of == task and name in self.headlines:
                return self.headlines[name]
        from cartoqa.tasks.spec import get_task

        spec = get_task(task)
        return (spec.headline or spec.metrics[0]) if spec is not None else None

    def score_predictions(
        self, eval_file: str | list[str], data: pd.DataFrame | None = None
    ) -> dict[str, Any]:
        """Score predictions files (a TSV's columns and ``prediction``) with cartoqa.

        Each row's sample is rebuilt from its ``cartoqa_sample`` (or, where that cell did not
        survive, from the row of the same ``cartoqa_id`` in ``data``, the TSV), each
        ``prediction`` scored by ``cartoqa.scoring.score_sample`` (an empty one as no answer),
        each file's rows in ``index`` order.  Returns the overall row of each task's table of
        ``cartoqa.scoring.score_run`` (metric -> value; "TASK: metric" where the files hold
        several tasks; a paired variant's as "TASK@VARIANT: metric", never mixed with its
        base's) and writes the whole tables beside the (first) file
        (``_cartoqa_score.json``), with GPSBench's track scores where the files hold more than
        one task (give the files of every GPS task for the published track scores).
        """
        from cartoqa.scoring import score_run

        files = [eval_file] if isinstance(eval_file, str | os.PathLike) else list(eval_file)
        backup: dict[str, Any] = {}
        if data is not None and "cartoqa_sample" in data:
            ids = (str(x) for x in data["cartoqa_id"])
            backup = dict(zip(ids, data["cartoqa_sample"], strict=True))
        samples: list[Any] = []
        responses: dict[str, str | None] = {}
        cut: list[str] = []
        for path in files:
            frame = read_table(path)
            missing = [c for c in ("cartoqa_id", "prediction") if c not in frame]
            if missing:
                raise ValueError(
                    f"{path} has no {' or '.join(missing)} column; score the predictions file "
                    "VLMEvalKit wrote for a CartoQA benchmark (the TSV's columns and 'prediction')"
                )
            if "index" in frame:
                frame = frame.assign(_order=[int(str(x)) for x in frame["index"]])
                frame = frame.sort_values("_order", kind="stable")
            cells = frame["cartoqa_sample"] if "cartoqa_sample" in frame else [""] * len(frame)
            rows = zip(frame["cartoqa_id"], cells, frame["prediction"], strict=True)
            for sid, cell, prediction in rows:
                sid = str(sid)
                if sid in responses:
                    raise ValueError(f"{path}: sample {sid!r} is predicted twice; keep one row")
                samples.append(_sample(sid, [cell, backup.get(sid)]))
                text = "" if prediction is None else str(prediction)
                if len(text) == EXCEL_CELL_CHARS and str(path).lower().endswith((".xlsx", ".xls")):
                    cut.append(sid)
                responses[sid] = text if text != "" else None
        if not samples:
            raise ValueError(f"{', '.join(map(str, files))}: no predictions to score")
        if cut:
            warnings.warn(
                f"{len(cut)} predictions (first {cut[0]!r}) are {EXCEL_CELL_CHARS} characters "
                "long, Excel's limit: they were probably cut when the file was written; run "
                "VLMEvalKit with PRED_FORMAT=tsv (or json) to score them whole",
                stacklevel=2,
            )
        tables = score_run(samples, responses)
        tasks = [t for t in tables if t != "gps"]
        if len(tasks) == 1:
            tables.pop("gps", None)  # one task's track score is its own accuracy again
        result: dict[str, Any] = {}
        for task in tasks:  # score keys: a variant's ("srn@text") apart from its base's
            row = _overall(tables[task], self.task_headline(task.partition("@")[0]))
            result.update(row if len(tasks) == 1 else {f"{task}: {k}": v for k, v in row.items()})
        out = os.path.splitext(str(files[0]))[0] + "_cartoqa_score.json"
        headlines = {
            t: h for t in tasks if (h := self.task_headline(t.partition("@")[0])) is not None
        }
        report = {
            "attribution": list(self.attribution),
            "export": dict(self.export),
            "headline": headlines,
            "scores": _clean(tables),
        }
        text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False)
        tmp = f"{out}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, out)
        return result


class BenchmarkDataset(_Base):
    """One CartoQA benchmark (a TSV of the export), asked and scored as cartoqa does: the
    exported ``CartoQADataset`` is this class with its export's ``BENCHMARKS``."""

    #: the export's benchmarks (set by the subclass the export writes)
    BENCHMARKS: ClassVar[Benchmarks]

    MODALITY = "IMAGE"
    TYPE = "VQA"
    #: the benchmarks VLMEvalKit may fetch, and their MD5s (the subclass's: its open-ended
    #: benchmarks, each local, with no URL to fetch and no MD5)
    DATASET_URL: ClassVar[dict[str, str]] = {}
    DATASET_MD5: ClassVar[dict[str, str | None]] = {}
    #: VLMEvalKit then sends the question as written here, whatever the model's own prompts
    force_use_dataset_prompt = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        benchmarks = cls.__dict__.get("BENCHMARKS")
        if benchmarks is not None:
            cls.DATASET_URL = {n: "" for n in benchmarks.open_ended}  # local: no fetch
            cls.DATASET_MD5 = {n: None for n in benchmarks.open_ended}

    def __init__(self, dataset: str | None = None, skip_noimg: bool = False) -> None:
        if dataset is None:
            dataset = self.BENCHMARKS.default
        if _Base is not object:
            super().__init__(dataset=dataset, skip_noimg=skip_noimg)  # type: ignore[call-arg]
        else:
            self.dataset_name = dataset
            self.img_root = os.path.join(lmudata_root(), "images", dataset)
            self.data = self.load_data(dataset)
        self.data = resolve_images(self.data)
        self.task = self.BENCHMARKS.tsv_tasks.get(dataset)
        #: the metric the benchmark is summed up by (its task spec's headline): the first
        #: key of ``evaluate``'s result
        self.headline = self.BENCHMARKS.headlines.get(dataset)

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return list(cls.BENCHMARKS.open_ended)

    def load_data(self, dataset: str) -> pd.DataFrame:
        path = os.path.join(lmudata_root(), f"{dataset}.tsv")
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{path} is missing: copy {dataset}.tsv from the cartoqa export into "
                "$LMUData (or point LMUData at the export folder)"
            )
        frame = read_table(path)
        frame["index"] = [int(str(x)) for x in frame["index"]]
        return frame

    def __len__(self) -> int:
        return len(self.data)

    def dump_image(self, line: Any) -> list[str]:
        """The row's image written as a PNG under ``img_root``, named by its SHA-256 (rows
        showing one image share one file; a file never goes stale): [its path]."""
        value = str(line["image"])
        if len(value) <= REFERENCE_CHARS:
            rows = self.data[[str(x) == value.strip() for x in self.data["index"]]]
            value = str(rows["image"].iloc[0])
        data = base64.b64decode(value)
        os.makedirs(self.img_root, exist_ok=True)
        path = os.path.join(self.img_root, hashlib.sha256(data).hexdigest()[:32] + ".png")
        if not os.path.isfile(path):
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        return [path]

    def build_prompt(self, line: Any) -> list[dict[str, str]]:
        """[the map (where the task shows one), the question as cartoqa asks it]."""
        if isinstance(line, int):
            line = self.data.iloc[line]
        msgs = []
        image = line.get("image")
        if isinstance(image, str) and image:
            msgs += [{"type": "image", "value": p} for p in self.dump_image(line)]
        msgs.append({"type": "text", "value": str(line["question"])})
        return msgs

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> dict[str, Any]:
        """cartoqa's scores of a predictions file (``Benchmarks.score_predictions``): the
        task's overall row, its headline first (``Benchmarks.headlines``: a summary that
        takes the first number takes it); no judge model is used, so ``judge_kwargs`` are
        ignored."""
        return self.BENCHMARKS.score_predictions(eval_file, getattr(self, "data", None))
