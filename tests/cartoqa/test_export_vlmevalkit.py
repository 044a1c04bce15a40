"""The VLMEvalKit export, read back by a reader written here from VLMEvalKit's documented
TSV layout (vlmeval is not on PyPI), and its dataset class imported from the export folder
and run as VLMEvalKit would: prompts built, a predictions file scored."""

from __future__ import annotations

import ast
import base64
import importlib.util
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from cartoqa import __version__
from cartoqa.cli import app
from cartoqa.errors import CartoqaError, DatasetError
from cartoqa.exports import vlmevalkit_runtime
from cartoqa.exports.vlmevalkit import (
    CLASS_FILE,
    EXPORT_MARKER,
    README_FILE,
    export_vlmevalkit,
    tsv_name,
)
from cartoqa.records import (
    OSM_ATTRIBUTION,
    ChoiceTruth,
    CountTruth,
    Metadata,
    NumberTruth,
    Prompt,
    Provenance,
    Sample,
)
from cartoqa.reports.collect import score_runs
from cartoqa.scoring import score_run
from cartoqa.stores import Dataset, DatasetWriter, load_dataset
from cartoqa.tasks.spec import get_task
from tests.cartoqa.export_data import snapshot
from tests.cartoqa.model_data import CASES, kinds_dataset, png

PROV = Provenance(generator="tests", seed=1)
runner = CliRunner()


# -- a reader of VLMEvalKit's TSV format, from its documentation ------------------------------


def read_tsv(path: Path) -> pd.DataFrame:
    """One benchmark TSV as VLMEvalKit loads it (``pd.read_csv(f, sep="\\t")``), with each
    ``image`` resolved: a value of 64 characters or fewer is the ``index`` of the row whose
    ``image`` is the base64."""
    frame = pd.read_csv(path, sep="\t")
    assert frame["index"].dtype.kind == "i", "index must be an integer column"
    assert frame["index"].is_unique
    if "image" in frame:
        by_index = {str(i): str(v) for i, v in zip(frame["index"], frame["image"], strict=True)}
        resolved = []
        for value in (str(v) for v in frame["image"]):
            if len(value) <= 64:
                value = by_index[value]
                assert len(value) > 64, "an index must name a row that holds the base64"
            resolved.append(value)
        frame["resolved"] = resolved
    return frame


def decode(b64: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(b64)))


def same_pixels(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and a.convert("RGBA").tobytes() == b.convert("RGBA").tobytes()


def load_class_module(folder: Path):
    """The exported ``cartoqa_vlmeval.py``, imported from where it lies."""
    name = f"cartoqa_vlmeval_{abs(hash(str(folder)))}"
    spec = importlib.util.spec_from_file_location(name, folder / CLASS_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def same_numbers(a: dict, b: dict) -> bool:
    """Equal dicts of numbers, NaN equal to NaN (nothing else is loosened)."""
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, dict):
            if not (isinstance(y, dict) and same_numbers(x, y)):
                return False
        elif isinstance(x, float) and math.isnan(x):
            if not (isinstance(y, float) and math.isnan(y)):
                return False
        elif x != y or type(x) is not type(y):
            return False
    return True


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    """The kinds dataset (every kind of truth, map tasks with images) twice over, exported."""
    tmp = tmp_path_factory.mktemp("vlmeval")
    ds = kinds_dataset(tmp / "ds", copies=2)
    written = export_vlmevalkit(ds, tmp / "out")
    return ds, tmp / "out", written


# -- the TSVs -------------------------------------------------------------------------------


def test_one_tsv_per_task_and_every_image_pixel_equal(kinds):
    ds, out, written = kinds
    tasks = sorted({s.task for s in ds})
    assert [p.name for p in written] == [tsv_name(t) for t in tasks] + [
        CLASS_FILE,
        README_FILE,
        EXPORT_MARKER,
    ]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)
    seen_images = 0
    for task in tasks:
        samples = [s for s in ds if s.task == task]
        frame = read_tsv(out / tsv_name(task))
        assert frame["cartoqa_id"].tolist() == [s.id for s in samples]  # the dataset's order
        assert frame["category"].tolist() == [task] * len(samples)
        assert frame["split"].tolist() == [s.split for s in samples]
        assert frame["l2-category"].tolist() == ["difficulty=easy"] * len(samples)
        for row, s in zip(frame.itertuples(index=False), samples, strict=True):
            assert Sample.model_validate_json(row.cartoqa_sample) == s
            assert row.question == f"{s.prompt.system}\n\n{s.prompt.text}"
        if any(s.prompt.images for s in samples):
            for b64, s in zip(frame["resolved"], samples, strict=True):
                got = decode(b64)
                assert got.format == "PNG"
                with Image.open(ds.image_path(s.prompt.images[0])) as want:
                    assert same_pixels(got, want), s.id
                seen_images += 1
        else:
            assert "image" not in frame  # a text-only task: no image column at all
    assert seen_images == sum(1 for s in ds if s.prompt.images) == 16


def test_choice_rows_carry_lettered_options_and_a_letter_answer(kinds):
    ds, out, _ = kinds
    frame = read_tsv(out / tsv_name("mfs"))
    samples = [s for s in ds if s.task == "mfs"]
    assert {"A", "B", "C", "D"} <= set(frame.columns)
    for row, s in zip(frame.to_dict("records"), samples, strict=True):
        truth = s.ground_truth
        assert isinstance(truth, ChoiceTruth)
        assert row["answer"] == truth.answer == "C"
        assert row["answer"] in "ABCDE" and row["answer"] in frame.columns
        for letter in "ABCD":
            assert row[letter] == truth.options[letter]
    # open-ended tasks have no option columns; their answer is the truth's answer_text()
    for task, truth, _q in CASES:
        if task == "mfs":
            continue
        other = read_tsv(out / tsv_name(task))
        assert "A" not in other.columns
        # (pandas reads an all-digit column as numbers, as VLMEvalKit does)
        assert [str(x) for x in other["answer"]] == [truth.answer_text()] * 2


def test_repeated_images_are_stored_once(tmp_path):
    """Two samples naming one image file, and a third naming another file with the same
    bytes: the TSV holds those bytes once, the other rows the first row's index."""
    first, other = png(1), png(2)
    with DatasetWriter(tmp_path / "ds") as w:
        shared = w.add_image("shared.png", first)
        copy = w.add_image("copy.png", first)
        lone = w.add_image("other.png", other)
        for i, rel in enumerate([lone, shared, shared, copy]):
            w.add(
                Sample(
                    id=f"count-{i}",
                    task="stmf_count",
                    prompt=Prompt(text=f"How many banks? ({i})", images=[rel]),
                    ground_truth=CountTruth(value=i, feature_type="bank"),
                    metadata=Metadata(zoom=16 + i % 2, feature_type="bank"),
                    provenance=PROV,
                )
            )
        w.finish()
    ds = load_dataset(tmp_path / "ds")
    export_vlmevalkit(ds, tmp_path / "out")
    path = tmp_path / "out" / tsv_name("stmf_count")
    frame = read_tsv(path)
    stored = [v for v in frame["image"].astype(str) if len(v) > 64]
    assert len(stored) == 2
    assert frame["image"].astype(str).tolist()[2:] == ["1", "1"]  # row 1 holds the shared one
    text = path.read_text(encoding="utf-8")
    assert text.count(base64.b64encode(first).decode()) == 1
    for b64, s in zip(frame["resolved"], ds, strict=True):
        with Image.open(ds.image_path(s.prompt.images[0])) as want:
            assert same_pixels(decode(b64), want)
    # the task's first breakdown key (STMF: feature_type, then zoom) is the l2-category
    assert frame["l2-category"].tolist() == ["feature_type=bank"] * 4
    assert frame["question"].tolist()[0] == "How many banks? (0)"  # no system prompt
    info = json.loads((tmp_path / "out" / EXPORT_MARKER).read_text(encoding="utf-8"))
    assert info["tsvs"][tsv_name("stmf_count")] == {
        "task": "stmf_count",
        "mcq": False,
        "l2-category": "feature_type",
        "rows": 4,
        "images": 2,
    }


def test_tabs_newlines_and_na_survive_pandas(tmp_path):
    """A question with a tab, a newline and a carriage return, and an answer VLMEvalKit's
    reader would turn to NaN ("NA"), come back exactly through the class's reader."""
    with DatasetWriter(tmp_path / "ds") as w:
        for i, text in enumerate(["tab\there", "new\nline", "carriage\rreturn", 'quote "x"']):
            w.add(
                Sample(
                    id=f"d-{i}",
                    task="distance",
                    prompt=Prompt(text=text),
                    ground_truth=NumberTruth(value=1.0 + i, unit="km"),
                    provenance=PROV,
                )
            )
        w.finish()
    ds = load_dataset(tmp_path / "ds")
    export_vlmevalkit(ds, tmp_path / "out")
    frame = read_tsv(tmp_path / "out" / tsv_name("distance"))
    assert frame["question"].tolist() == [s.prompt.text for s in ds]
    assert "l2-category" not in frame  # no breakdown key carried by any sample
    module = load_class_module(tmp_path / "out")
    again = module.read_table(str(tmp_path / "out" / tsv_name("distance")))
    assert again["question"].tolist() == [s.prompt.text for s in ds]


# -- the dataset class ---------------------------------------------------------------------


def test_the_class_builds_vlmevalkit_messages(kinds, monkeypatch, tmp_path):
    ds, out, _ = kinds
    monkeypatch.setenv("LMUData", str(out))
    module = load_class_module(out)
    if importlib.util.find_spec("vlmeval") is None:  # cartoqa's class on a plain base
        assert module.CartoQADataset.__mro__[1:] == (vlmevalkit_runtime.BenchmarkDataset, object)
    assert "CartoQA_rle" in module.CartoQADataset.supported_datasets()
    assert "CartoQA_mfs" not in module.CartoQADataset.supported_datasets()  # VLMEvalKit's MCQ
    assert OSM_ATTRIBUTION in module.ATTRIBUTION

    rle = module.CartoQADataset("CartoQA_rle")
    rle.img_root = str(tmp_path / "images")  # keep the dumped images out of the export
    samples = [s for s in ds if s.task == "rle"]
    assert len(rle) == len(samples)
    for i, s in enumerate(samples):
        msgs = rle.build_prompt(i)
        assert [m["type"] for m in msgs] == ["image", "text"]
        assert msgs[1]["value"] == f"{s.prompt.system}\n\n{s.prompt.text}"
        with (
            Image.open(msgs[0]["value"]) as got,
            Image.open(ds.image_path(s.prompt.images[0])) as want,
        ):
            assert same_pixels(got, want)
        assert rle.build_prompt(rle.data.iloc[i]) == msgs  # a row works as well as its number

    distance = module.CartoQADataset("CartoQA_distance")
    first = next(s for s in ds if s.task == "distance")
    assert distance.build_prompt(0) == [
        dict(type="text", value=f"{first.prompt.system}\n\n{first.prompt.text}")
    ]  # a text-only task: no image message

    with pytest.raises(FileNotFoundError, match="CartoQA_nope.tsv"):
        module.CartoQADataset("CartoQA_nope")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """random and oracle run over the kinds dataset three times over, and its export."""
    tmp = tmp_path_factory.mktemp("vlmeval-runs")
    ds = kinds_dataset(tmp / "ds", copies=3)
    for model in ("random", "oracle"):
        r = runner.invoke(
            app, ["run", str(tmp / "ds"), "-m", model, "--runs-dir", str(tmp / "runs")]
        )
        assert r.exit_code == 0, r.output
    scored = score_runs(ds, tmp / "runs")
    assert not scored.problems
    answers = {
        run.model: {sid: rec.response for sid, rec in run.records.items()} for run in scored.runs
    }
    assert sorted(answers) == ["oracle", "random"]
    export_vlmevalkit(ds, tmp / "out")
    return ds, tmp, answers


def predictions_file(dataset_obj, responses: dict, path: Path) -> Path:
    """What VLMEvalKit's inference writes: the benchmark's rows without ``image``, with a
    ``prediction`` column; here as TSV, its rows reversed (the scores must not depend on the
    order)."""
    data = dataset_obj.data.copy()
    data.pop("image") if "image" in data else None
    data["prediction"] = [responses[sid] or "" for sid in data["cartoqa_id"]]
    data.iloc[::-1].to_csv(path, sep="\t", index=False)
    return path


@pytest.mark.parametrize("model", ["random", "oracle"])
def test_evaluate_gives_cartoqas_numbers_exactly(runs, model, monkeypatch):
    ds, tmp, answers = runs
    responses = answers[model]
    want = score_run(ds.samples, responses)
    monkeypatch.setenv("LMUData", str(tmp / "out"))
    module = load_class_module(tmp / "out")
    tasks = sorted({s.task for s in ds})
    for task in tasks:
        name = tsv_name(task).removesuffix(".tsv")
        obj = module.CartoQADataset(name)
        pred = predictions_file(obj, responses, tmp / f"{model}_{name}.tsv")
        got = obj.evaluate(str(pred), model="gpt-4o", nproc=4)  # judge arguments are ignored
        table = want[task]
        overall = (
            table["all"]
            if "all" in table
            else {
                f"{m} ({g})": v
                for g, row in table.items()
                if g.startswith("all ")
                for m, v in row.items()
            }
        )
        assert same_numbers(got, overall), (task, got, overall)
        report = json.loads(
            (tmp / f"{model}_{name}_cartoqa_score.json").read_text(encoding="utf-8")
        )
        assert report["attribution"][0] == OSM_ATTRIBUTION
        clean = {
            g: {m: None if isinstance(v, float) and math.isnan(v) else v for m, v in row.items()}
            for g, row in table.items()
        }
        assert report["scores"] == {task: clean}  # breakdowns included
        # the same numbers from the predictions file alone (no TSV at hand)
        assert same_numbers(module.score_predictions(str(pred)), overall)
    # GPSBench's track scores: every GPS task's predictions scored together
    gps = [t for t in tasks if (spec := get_task(t)) is not None and spec.family == "gps"]
    assert len(gps) == 6
    files = [str(tmp / f"{model}_{tsv_name(t).removesuffix('.tsv')}.tsv") for t in gps]
    got = module.score_predictions(files)
    assert same_numbers(got, {f"{t}: {k}": v for t in gps for k, v in want[t]["all"].items()})
    report = json.loads(Path(files[0].replace(".tsv", "_cartoqa_score.json")).read_text("utf-8"))
    assert report["scores"]["gps"] == want["gps"]
    if model == "oracle":
        assert want["mfs"]["all"]["accuracy"] == 1.0
    else:  # the two models' numbers differ, so the comparison above can fail
        oracle = score_run(ds.samples, answers["oracle"])
        assert not same_numbers(want["stmf_count"], oracle["stmf_count"])


def test_evaluate_falls_back_on_the_tsv_and_names_bad_files(runs, monkeypatch, tmp_path):
    _ds, tmp, answers = runs
    monkeypatch.setenv("LMUData", str(tmp / "out"))
    module = load_class_module(tmp / "out")
    obj = module.CartoQADataset("CartoQA_srn")
    pred = predictions_file(obj, answers["oracle"], tmp_path / "srn.tsv")
    whole = obj.evaluate(str(pred))
    assert whole["SR2"] == 1.0
    frame = pd.read_csv(pred, sep="\t", dtype=str, keep_default_na=False)
    frame["cartoqa_sample"] = [x[:50] for x in frame["cartoqa_sample"]]  # as Excel cuts cells
    frame.to_csv(pred, sep="\t", index=False)
    assert same_numbers(obj.evaluate(str(pred)), whole)  # the samples read from the TSV
    with pytest.raises(ValueError, match="not a whole sample"):
        module.score_predictions(str(pred))
    # VLMEvalKit's PRED_FORMAT=json: the same rows as a list of records
    records = tmp_path / "srn.json"
    records.write_text(json.dumps(frame.to_dict("records")), encoding="utf-8")
    assert same_numbers(obj.evaluate(str(records)), whole)
    frame.drop(columns="prediction").to_csv(pred, sep="\t", index=False)
    with pytest.raises(ValueError, match="no prediction column"):
        obj.evaluate(str(pred))
    with pytest.raises(ValueError, match="cannot read a .parquet file"):
        obj.evaluate(str(tmp_path / "preds.parquet"))


def test_xlsx_predictions_keep_their_control_characters(runs, monkeypatch, tmp_path):
    """VLMEvalKit's default .xlsx predictions (written by XlsxWriter) store a control
    character as "_x0016_": the class reads them back as written, so an .xlsx scores as the
    same predictions in a TSV (issue 26, finding 21)."""
    pytest.importorskip("xlsxwriter", reason="VLMEvalKit writes .xlsx with XlsxWriter (dev extra)")
    _ds, tmp, answers = runs
    monkeypatch.setenv("LMUData", str(tmp / "out"))
    module = load_class_module(tmp / "out")
    obj = module.CartoQADataset("CartoQA_rle")
    # a control character before the number: the scorer reads 412.5 either way, unless it
    # is rewritten to "_x0016_412.5", whose first number is 16
    responses = {sid: "\x16" + (text or "") for sid, text in answers["oracle"].items()}
    tsv = predictions_file(obj, responses, tmp_path / "rle.tsv")
    frame = pd.read_csv(tsv, sep="\t", dtype=str, keep_default_na=False)
    frame.loc[0, "prediction"] += " _x0041_ \x01\x1f"  # a literal escape survives too
    frame.to_csv(tsv, sep="\t", index=False)
    xlsx = tmp_path / "rle.xlsx"
    frame.to_excel(xlsx, index=False, engine="xlsxwriter")  # as vlmeval.smp.dump does
    back = module.read_table(str(xlsx))
    assert back["prediction"].tolist() == frame["prediction"].tolist()
    assert back["cartoqa_sample"].tolist() == frame["cartoqa_sample"].tolist()
    from_tsv = obj.evaluate(str(tsv))
    assert same_numbers(obj.evaluate(str(xlsx)), from_tsv)
    assert from_tsv["mape (all ?)"] == 0.0  # the oracle's numbers, read right
    text = (tmp / "out" / README_FILE).read_text(encoding="utf-8")
    assert "PRED_FORMAT=tsv" in text and "_x0016_" in text


def test_evaluate_puts_the_tasks_headline_first(runs, monkeypatch, tmp_path):
    """VLMEvalKit's summary takes the first number evaluate returns: it is the task spec's
    headline (RLE's mape per unit, not its sample count n) (issue 26, finding 21)."""
    ds, tmp, answers = runs
    monkeypatch.setenv("LMUData", str(tmp / "out"))
    module = load_class_module(tmp / "out")
    for task in sorted({s.task for s in ds}):
        spec = get_task(task)
        assert spec is not None
        want = spec.headline or spec.metrics[0]
        name = tsv_name(task).removesuffix(".tsv")
        assert module.HEADLINES[name] == want
        if name not in module.OPEN_ENDED:
            continue
        obj = module.CartoQADataset(name)
        assert obj.headline == want
        got = obj.evaluate(str(predictions_file(obj, answers["random"], tmp_path / f"{name}.tsv")))
        first = next(iter(got))
        assert first == want or first.startswith(f"{want} (all "), (task, list(got))
    rle = get_task("rle")
    assert rle is not None and rle.headline == "mape"
    report = json.loads((tmp_path / "CartoQA_rle_cartoqa_score.json").read_text(encoding="utf-8"))
    assert report["headline"] == {"rle": "mape"}


def test_score_report_is_strict_json(monkeypatch, tmp_path):
    """r² of a one-sample group is no number: the report beside the predictions says null,
    never NaN (issue 26, finding 12)."""
    ds = kinds_dataset(tmp_path / "ds", copies=1)
    export_vlmevalkit(ds, tmp_path / "out")
    monkeypatch.setenv("LMUData", str(tmp_path / "out"))
    module = load_class_module(tmp_path / "out")
    obj = module.CartoQADataset("CartoQA_rle")
    pred = predictions_file(obj, {"rle-000": "300 m"}, tmp_path / "rle.tsv")
    got = obj.evaluate(str(pred))
    assert math.isnan(got["r2 (all ?)"])  # the number itself, as cartoqa gives it
    text = (tmp_path / "rle_cartoqa_score.json").read_text(encoding="utf-8")
    report = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the report"))
    assert report["scores"]["rle"]["all ?"]["r2"] is None


# -- the class file imports cartoqa's runtime (issue 29) ----------------------------------------


def test_the_class_file_is_short_and_holds_no_logic(kinds):
    """The exported file names its export's benchmarks; the class and its scoring are
    cartoqa's (``cartoqa.exports.vlmevalkit_runtime``): a line or three a benchmark, no
    function, a class that only carries the benchmarks."""
    _ds, out, written = kinds
    text = (out / CLASS_FILE).read_text(encoding="utf-8")
    tsvs = [p for p in written if p.suffix == ".tsv"]
    assert len(text.splitlines()) <= 70 + 3 * len(tsvs)  # one line a benchmark in each table
    tree = ast.parse(text)
    froms = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "cartoqa.exports.vlmevalkit_runtime" in froms
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.Lambda)]
    [cls] = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    assert cls.name == "CartoQADataset" and len(cls.body) == 2  # docstring, BENCHMARKS
    assert "score_run" not in text and "read_csv" not in text


def test_the_runtime_module_is_the_code_that_runs(runs, monkeypatch, tmp_path):
    """A change in ``cartoqa.exports.vlmevalkit_runtime`` shows in what the exported class
    returns: the class file runs cartoqa's runtime, not a copy of it."""
    _ds, tmp, answers = runs
    monkeypatch.setenv("LMUData", str(tmp / "out"))
    module = load_class_module(tmp / "out")
    # the class VLMEvalKit sees: cartoqa's, with the export's open-ended benchmarks
    assert dict.fromkeys(module.OPEN_ENDED, "") == module.CartoQADataset.DATASET_URL
    assert dict.fromkeys(module.OPEN_ENDED) == module.CartoQADataset.DATASET_MD5
    assert module.CartoQADataset().dataset_name == module.DEFAULT == module.OPEN_ENDED[0]
    obj = module.CartoQADataset("CartoQA_srn")
    pred = predictions_file(obj, answers["oracle"], tmp_path / "srn.tsv")
    real = vlmevalkit_runtime._overall

    def changed(*args, **kwargs):
        return {"changed_in_the_runtime": 42.0, **real(*args, **kwargs)}

    monkeypatch.setattr(vlmevalkit_runtime, "_overall", changed)
    got = obj.evaluate(str(pred))
    assert got["changed_in_the_runtime"] == 42.0 and got["SR2"] == 1.0
    assert module.score_predictions(str(pred))["changed_in_the_runtime"] == 42.0


def test_the_class_file_names_the_fix_without_cartoqa(kinds, tmp_path):
    """Where cartoqa (its VLMEvalKit runtime) cannot be imported, the class file says to
    install the cartoqa that exported it."""
    _ds, out, _ = kinds
    code = (
        "import sys, runpy; sys.modules['cartoqa.exports.vlmevalkit_runtime'] = None\n"
        f"runpy.run_path({str(out / CLASS_FILE)!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    assert "ImportError: this dataset class asks and scores with cartoqa" in done.stderr
    assert f"install cartoqa {__version__}, which exported it" in done.stderr


def test_the_runtime_imports_without_vlmeval(tmp_path):
    """The runtime module chooses its base where it is imported: without vlmeval it still
    imports, on ``object`` (the export itself never imports the runtime)."""
    code = (
        "import sys; sys.modules['vlmeval'] = None\n"
        "import cartoqa.exports.vlmevalkit as export\n"
        "assert 'cartoqa.exports.vlmevalkit_runtime' not in sys.modules\n"
        "from cartoqa.exports.vlmevalkit_runtime import BenchmarkDataset\n"
        "assert BenchmarkDataset.__mro__[1:] == (object,)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr


# -- the README and the folder ------------------------------------------------------------------


def test_readme_credits_the_data_and_says_how(kinds):
    ds, out, _ = kinds
    text = (out / README_FILE).read_text(encoding="utf-8")
    assert "© OpenStreetMap contributors" in text
    for line in ds.manifest.attribution:
        assert line in text
    for needle in ("$LMUData", "IMAGE_DATASET", "CartoQADataset", "run.py --data", "blank line"):
        assert needle in text, needle


def small(folder: Path, value: float = 1.0) -> Dataset:
    with DatasetWriter(folder, overwrite=True) as w:
        rel = w.add_image("m.png", png(int(value)))
        w.add(
            Sample(
                id="rle-0",
                task="rle",
                prompt=Prompt(text="How long?", images=[rel]),
                ground_truth=NumberTruth(value=value, unit="m"),
                metadata=Metadata(difficulty="easy", unit="m"),
                provenance=PROV,
            )
        )
        w.finish()
    return load_dataset(folder)


def test_an_existing_export_is_kept_without_overwrite_and_replaced_with_it(tmp_path):
    out = tmp_path / "out"
    export_vlmevalkit(small(tmp_path / "ds", 5.0), out)
    before = snapshot(out)
    again = small(tmp_path / "ds", 7.0)
    with pytest.raises(CartoqaError, match="already holds a VLMEvalKit export; pass --overwrite"):
        export_vlmevalkit(again, out)
    assert snapshot(out) == before
    export_vlmevalkit(again, out, overwrite=True)
    frame = read_tsv(out / tsv_name("rle"))
    assert frame["answer"].tolist() == [NumberTruth(value=7.0, unit="m").answer_text()]
    assert sorted(p.name for p in tmp_path.iterdir() if "staging" in p.name) == []


def test_other_folders_are_never_replaced(tmp_path):
    ds = small(tmp_path / "ds")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    for overwrite in (False, True):
        with pytest.raises(CartoqaError, match="holds other files"):
            export_vlmevalkit(ds, other, overwrite=overwrite)
        assert snapshot(other) == {"notes.txt": b"mine"}
    hf_like = tmp_path / "hf"
    hf_like.mkdir()
    (hf_like / EXPORT_MARKER).write_text('{"format": "hf"}', encoding="utf-8")
    (hf_like / README_FILE).write_text("card", encoding="utf-8")
    with pytest.raises(CartoqaError, match="in the 'hf' format, not a VLMEvalKit one"):
        export_vlmevalkit(ds, hf_like, overwrite=True)
    assert snapshot(hf_like) == {EXPORT_MARKER: b'{"format": "hf"}', README_FILE: b"card"}
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(CartoqaError, match="is a file, not a folder"):
        export_vlmevalkit(ds, tmp_path / "file")
    with pytest.raises(CartoqaError, match="overlap"):
        export_vlmevalkit(ds, tmp_path / "ds" / "out")


def test_bad_images_leave_nothing_behind(tmp_path):
    ds = small(tmp_path / "ds")
    (tmp_path / "ds" / "images" / "m.png").write_bytes(png(99))  # changed after the build
    with pytest.raises(DatasetError, match="does not match the dataset's manifest"):
        export_vlmevalkit(ds, tmp_path / "out")
    (tmp_path / "ds" / "images" / "m.png").unlink()
    with pytest.raises(DatasetError, match="missing from"):
        export_vlmevalkit(ds, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["ds"]

    with DatasetWriter(tmp_path / "mixed") as w:
        rel = w.add_image("m.png", png(3))
        for i, images in enumerate([[rel], []]):
            w.add(
                Sample(
                    id=f"c-{i}",
                    task="stmf_count",
                    prompt=Prompt(text="How many?", images=images),
                    ground_truth=CountTruth(value=i, feature_type="bank"),
                    provenance=PROV,
                )
            )
        w.finish()
    with pytest.raises(DatasetError, match="VLMEvalKit drops the rows"):
        export_vlmevalkit(load_dataset(tmp_path / "mixed"), tmp_path / "out")
    assert not (tmp_path / "out").exists()
