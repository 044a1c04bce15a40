"""A reviewed dataset: the decisions of a review store applied to its dataset, written as a
dataset every other command loads (issue 17, item 3).

    manifest = export_reviewed(dataset, store, Path("nav-reviewed"))

- Rejected samples are left out; corrected ones carry their corrected truth;
  the others are as generated.  Each sample's metadata says
  ``review_status`` ("accepted", "corrected", "unreviewed", ...) and
  ``reviewed_by`` (the reviewers, comma-joined).
- The decisions are read in one read transaction (``DecisionStore.snapshot``):
  the samples written, ``review.jsonl`` and the manifest's counts are all
  of one instant, however many decisions reviewers make meanwhile.
- Every image copied is checked against the source manifest's hash first:
  an image replaced since the dataset was made stops the export, named.
- Every decision of the store goes with it, unchanged, in ``review.jsonl``
  (one per line, oldest first): who, when, the verdict, the truth before and
  after, the reason.
- The manifest's ``review`` holds the statistics (reviewed, accepted,
  corrected, rejected, disputed, agreement, reviewers, required reviews),
  the source dataset's name and hash and the decisions file's SHA-256; the
  source's seeds, extract hashes, style version, wording, inputs, warnings
  and attribution are kept.
- An ``out`` that is the dataset, holds it or lies inside it is refused
  (``--overwrite`` would delete the dataset and its decisions), and so is a
  folder holding a review store: it is someone's reviewed dataset, not an
  export (an export never holds one).
- A paired variant's copy (``srn-0004@text``) that nobody decided on and that kept its
  base's truth follows its base: rejected, corrected or accepted with it (its
  ``review_status`` and ``reviewed_by`` are the base's).  A copy whose truth was
  recomputed (``nolabels``, ``zoom``, ``lang:XX``) or that has decisions of its own is
  judged by its own.
- ``only_reviewed`` leaves out the samples nobody decided on (and, with two
  reviews required, those still waiting or disputed): the "human-verified"
  set.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError
from cartoqa.exports.folder import export_target
from cartoqa.records import Metadata, Sample
from cartoqa.stores import Dataset, DatasetWriter
from cartoqa.stores.dataset import Manifest

from .decisions import DecisionStore

__all__ = ["REVIEW_FILE", "export_reviewed"]

REVIEW_FILE = "review.jsonl"
_DONE = {"accepted", "corrected"}


def export_reviewed(
    dataset: Dataset,
    store: DecisionStore,
    out: Path,
    *,
    overwrite: bool = False,
    only_reviewed: bool = False,
) -> Manifest:
    """Write the reviewed copy of ``dataset`` at ``out`` (module docstring)."""
    src = dataset.manifest
    export_target(dataset, out)  # refused where OUT and the dataset overlap
    held = Path(out) / getattr(store.path, "name", "review.sqlite")
    if Path(out).is_dir() and (held.exists() or (Path(out) / "review.sqlite").exists()):
        raise CartoqaError(
            f"{out} holds a review store (someone's decisions): it is a dataset under "
            "review, not an earlier export; name another folder (nothing was changed)"
        )
    writer = DatasetWriter(out, name=f"{src.name}-reviewed", overwrite=overwrite)
    try:
        with store.snapshot():  # every decision as of one instant, however many are made now
            return _write(dataset, store, writer, only_reviewed=only_reviewed)
    finally:
        writer.abandon()  # a no-op after finish


def _judged_by(sample: Sample, by_id: dict[str, Sample], store: DecisionStore) -> Sample:
    """The sample whose decisions hold for ``sample``: a paired variant's copy
    (``cartoqa.tasks.variants``) that nobody decided on and that kept its base's truth
    follows its base (accepted, corrected or rejected with it); any other, itself."""
    from cartoqa.tasks.variants import base_id, variant_of

    if variant_of(sample) is None or store.status(sample.id) != "unreviewed":
        return sample
    base = by_id.get(base_id(sample))
    if base is None or base.ground_truth != sample.ground_truth:
        return sample
    return base


def _copy_image(writer: Any, dataset: Dataset, rel: str) -> str:
    """The source's image ``rel`` into the export, at the same path: under images/, or (an
    imported release's) under release/, copied there so the export stands alone."""
    data = _source_image(dataset, rel)  # checked against the manifest first
    folder, _, name = rel.partition("/")
    if folder == "images":
        return writer.add_image(name, data)
    return writer.add_image_file(rel, dataset.image_path(rel), copy=True)


def _source_image(dataset: Dataset, rel: str) -> bytes:
    """The bytes of the source's image ``rel``, once they match the source's manifest."""
    want = dataset.manifest.images_sha256.get(rel)
    path = dataset.image_path(rel)
    if want is None:
        raise CartoqaError(
            f"{dataset.path / 'manifest.json'} records no hash for {rel}, so the image cannot "
            "be checked before it is copied: build the dataset again with this cartoqa "
            "(nothing was exported)"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CartoqaError(f"cannot read {path}: {exc.strerror} (nothing was exported)") from None
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        raise CartoqaError(
            f"{path} does not match the source manifest (sha256 {got[:12]}..., the manifest "
            f"says {want[:12]}...): the image was replaced after the dataset was made, and the "
            "reviewers saw another map; restore it or build the dataset again (nothing was "
            "exported)"
        )
    return data


def _write(
    dataset: Dataset, store: DecisionStore, writer: DatasetWriter, *, only_reviewed: bool
) -> Manifest:
    src = dataset.manifest
    kept = 0
    by_id = {s.id: s for s in dataset.samples}
    for sample in dataset.samples:
        judged = _judged_by(sample, by_id, store)
        status = store.status(judged.id)
        reviewed = store.effective(judged)
        if reviewed is None or (only_reviewed and status not in _DONE):
            continue
        if judged is not sample:  # a variant's copy takes its base's reviewed truth
            reviewed = sample.model_copy(update={"ground_truth": reviewed.ground_truth})
        images = [_copy_image(writer, dataset, rel) for rel in sample.prompt.images]
        who = ",".join(sorted(store.reviewers_latest(judged.id)))
        meta = {
            **sample.metadata.model_dump(exclude_none=True),
            "review_status": status,
            "reviewed_by": who,
        }
        writer.add(
            reviewed.model_copy(
                update={
                    "prompt": sample.prompt.model_copy(update={"images": images}),
                    "metadata": Metadata(**meta),
                }
            )
        )
        kept += 1
    lines = [json.dumps(d.as_dict(), ensure_ascii=False, sort_keys=True) for d in store.all()]
    blob = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
    (writer.staging_path / REVIEW_FILE).write_bytes(blob)
    review: dict[str, Any] = {
        **store.stats(s.id for s in dataset.samples),
        "exported": kept,
        "only_reviewed": only_reviewed,
        "source": {"name": src.name, "samples_sha256": src.samples_sha256},
        "decisions_file": REVIEW_FILE,
        "decisions_sha256": hashlib.sha256(blob).hexdigest(),
    }
    return writer.finish(
        seeds=src.seeds,
        extract_hashes=src.extract_hashes,
        style_version=src.versions.get("openstreetmap-carto"),
        attribution=src.attribution,
        prompts=src.prompts,
        inputs=src.inputs,
        warnings=src.warnings,
        review=review,
        variants=src.variants,
    )
