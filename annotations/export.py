"""A reviewed dataset: the decisions of a review store applied to its dataset, written as a
dataset every other command loads (issue 17, item 3).

    manifest = export_reviewed(dataset, store, Path("nav-reviewed"))

- Rejected samples are left out; corrected ones carry their corrected truth;
  the others are as generated.  Each sample's metadata says
  ``review_status`` ("accepted", "corrected", "unreviewed", ...) and
  ``reviewed_by`` (the reviewers, comma-joined).
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
from cartoqa.records import Metadata
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
        kept = 0
        for sample in dataset.samples:
            status = store.status(sample.id)
            reviewed = store.effective(sample)
            if reviewed is None or (only_reviewed and status not in _DONE):
                continue
            images = [
                writer.add_image(
                    rel.split("/", 1)[1] if "/" in rel else rel,
                    dataset.image_path(rel).read_bytes(),
                )
                for rel in sample.prompt.images
            ]
            who = ",".join(sorted(store.reviewers_latest(sample.id)))
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
        )
    finally:
        writer.abandon()  # a no-op after finish
