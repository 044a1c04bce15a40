"""``cartoqa export --to cartomapqa``: a dataset and its runs in the published release's layout.

OUT gets ``Dataset/CartoMapQA/`` (the question and truth files and images of every task the
release has, written by each task's ``ReleaseForm``) and ``Responses/<TASK>/<model>/`` for
each run of the dataset found under the runs folder (the records the published
``get_response_*.py`` would have saved for those replies: its parser's ``Answer``/``Result``
beside the raw ``Response``).  The published scripts then score cartoqa-built data as they
score the release (``python evaluate_all_tasks.py --model_name MODEL``, run from OUT so
``./Responses`` and ``./Dataset/CartoMapQA`` resolve); ``cartoqa import-release
OUT/Dataset/CartoMapQA`` gives back the same samples (each question record carries its
sample under "cartoqa", a key the published scripts do not read).  Tasks the release does
not have (GPS tasks) are left out, and said so.

The release's layout has no place for paired variants (``cartoqa.tasks.variants``): its
question files hold one question per map, under the release's own ids, and its scripts
score every record of a task together, so a variant's copy ("srn-0004@text", a text-only
twin without its map) would be scored as one more base question.  Only the base samples
are exported; the variant samples left out are counted, by variant, in what the export
says and in its marker (``left_out_variants``): export the dataset with another format
(hf, inspect, lmms-eval, vlmevalkit) to run them.
"""

from __future__ import annotations

import re
from pathlib import Path

from cartoqa.errors import CartoqaError
from cartoqa.records import Sample
from cartoqa.stores import Dataset

from . import folder

__all__ = ["FORMAT", "export_cartomapqa"]

FORMAT = "cartomapqa"
EXPORT_MARKER = "cartoqa-export.json"
_FORMAT = folder.ExportFormat(FORMAT, "CartoMapQA release layout", EXPORT_MARKER)


def _model_folder_name(model: str, run_id: str, taken: set[str]) -> str:
    """A folder name for a run: its model spec made safe for a path, the run id added when
    two runs share it."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._") or "model"
    if name in taken:
        name = f"{name}_{run_id}"
    taken.add(name)
    return name


def export_cartomapqa(
    dataset: Dataset, out: str | Path, *, runs_dir: Path = Path("runs"), overwrite: bool = False
) -> tuple[Path, list[str]]:
    """Write the export (see the module docstring); returns OUT and what was written, one
    line each."""
    from cartoqa.stores import find_runs
    from cartoqa.tasks.release import release_forms

    target = folder.export_target(dataset, out)
    forms = release_forms()
    base, variants = _base_and_variants(dataset.samples)
    by_form = {f.folder: [s for s in base if s.task in f.tasks] for f in forms}
    by_form = {k: v for k, v in by_form.items() if v}
    if not by_form and variants:
        raise CartoqaError(
            f"{dataset.path} holds no base sample of a task of the CartoMapQA release, only "
            f"{sum(variants.values())} paired variant samples, which its layout cannot hold; "
            "export them with --to hf, inspect, lmms-eval or vlmevalkit"
        )
    if not by_form:
        raise CartoqaError(
            f"{dataset.path} holds no task of the CartoMapQA release "
            f"({', '.join(t for f in forms for t in f.tasks)}); there is nothing to export"
        )
    left_out = sorted({s.task for s in dataset.samples} - {t for f in forms for t in f.tasks})
    infos, problems = find_runs(runs_dir, dataset_sha256=dataset.manifest.samples_sha256)
    lines: list[str] = []
    with folder.export_folder(target, _FORMAT, overwrite=overwrite) as staged:
        root = staged.path / "Dataset" / "CartoMapQA"
        for form in forms:
            if form.folder in by_form:
                form.write_questions(by_form[form.folder], dataset.path, root)
                lines.append(f"  {form.folder}: {len(by_form[form.folder])} questions")
        taken: set[str] = set()
        models: dict[str, str] = {}
        for info in infos:
            with info.open() as store:
                replies = {k: r.response for k, r in store.latest().items()}
            name = _model_folder_name(info.model, info.run_id, taken)
            models[name] = info.run_id
            for form in forms:
                if form.folder in by_form:
                    form.write_replies(
                        by_form[form.folder],
                        replies,
                        staged.path / "Responses" / form.folder / name,
                    )
        attribution = list(dataset.manifest.attribution)
        (staged.path / "ATTRIBUTION.txt").write_text("\n".join(attribution) + "\n", "utf-8")
        extra = {"left_out_variants": variants} if variants else {}
        staged.marker = _FORMAT.marker_of(
            dataset, runs=models, left_out=left_out, attribution=attribution, **extra
        )
    head = [f"wrote {dataset.manifest.name} in the CartoMapQA release's layout to {target}"]
    head += lines
    if models:
        head.append(f"  responses of {len(models)} run(s) under Responses/: {', '.join(models)}")
    else:
        head.append(f"  no run of this dataset under {runs_dir}: questions only")
    if left_out:
        head.append(f"  left out (not tasks of the release): {', '.join(left_out)}")
    if variants:
        head.append(
            f"  left out {sum(variants.values())} paired variant samples ("
            + ", ".join(f"{k} {v}" for k, v in variants.items())
            + "): the release's layout holds one question per map and its scripts would "
            "score them as base questions; only the base samples are exported (use --to hf, "
            "inspect, lmms-eval or vlmevalkit for the variants)"
        )
    head += [f"  {p}" for p in problems]
    head += list(dataset.manifest.attribution)
    return target, head


def _base_and_variants(samples: list[Sample]) -> tuple[list[Sample], dict[str, int]]:
    """The base samples, and the variant samples left out: variant -> how many."""
    from cartoqa.tasks.variants.names import variant_of

    base: list[Sample] = []
    variants: dict[str, int] = {}
    for s in samples:
        variant = variant_of(s)
        if variant is None:
            base.append(s)
        else:
            variants[variant] = variants.get(variant, 0) + 1
    return base, dict(sorted(variants.items()))
