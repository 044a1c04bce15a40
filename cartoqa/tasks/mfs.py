"""MFS, map-feature semantics: which feature is this isolated legend image?  Five options
(issue 16).

Its images are not views of an extract but the legend cartoqa draws with the
maps' own style (``symbols``), so the task builds itself (``TaskSpec.builder``):
the legend and its CLIP embeddings are read from the cache or made
(``symbols.store``), ``per_task`` features are drawn and given their options by
the paper's distractor rule (``symbols.questions``), and each question is
written with its image.

Every sample records in its metadata the feature shown (``feature``, its
``category`` and ``key_class``), the options' features and why each is there
(``option_features``, ``option_roles``: "|"-joined, A to E), the same-class
places other classes filled (``same_class_short``), the CLIP model and
``random_weights``.  Random weights are also written to the manifest's
``warnings``; the legend's and the weights' identity go to its ``inputs``.
Image files are numbered (``mfs-0001.png``): their names say nothing of the
answer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cartoqa import __version__
from cartoqa.errors import CartoqaError
from cartoqa.records import ChoiceTruth, Metadata, Prompt, Provenance, Sample
from cartoqa.settings import clip_checkpoint

if TYPE_CHECKING:
    from cartoqa.stores import DatasetWriter
    from symbols.embed import ClipWeights

    from .build import BuildReport, OwnBuild

__all__ = ["KIND", "LEGEND_CREDIT", "build_mfs", "clip_weights"]

#: how the prompt names each category's image
KIND = {"symbol": "point symbol", "line": "line style", "area": "area style"}
LEGEND_CREDIT = (
    "Legend drawn with the openstreetmap-carto style (CC0); feature names from the iD "
    "tagging schema (ISC)"
)
RANDOM_WEIGHTS_NOTE = (
    "built with random CLIP weights: the distractors are not CLIP's semantic nearest "
    "neighbours, so this is not the paper's rule; rebuild with --clip-checkpoint FILE"
)
LEGEND_SOURCE = "openstreetmap-carto legend (synthetic features), iD tagging schema names"


def clip_weights(options: Mapping[str, Any]) -> ClipWeights:
    """The CLIP weights the build's options ask for (``clip_checkpoint``, ``clip_hub``,
    ``clip_random_weights``, ``clip_model``; CARTOQA_CLIP_CHECKPOINT when none is given);
    ``CartoqaError`` naming the ways to give them when there are none, or more than one."""
    from symbols.embed import ClipWeights

    checkpoint = options.get("clip_checkpoint") or clip_checkpoint()
    hub = options.get("clip_hub")
    random_weights = bool(options.get("clip_random_weights"))
    given = [n for n, v in (("checkpoint", checkpoint), ("hub", hub)) if v]
    if random_weights:
        given.append("random weights")
    if not given:
        raise CartoqaError(
            "mfs chooses its distractors with CLIP and no weights were given: pass "
            "--clip-checkpoint FILE (or set CARTOQA_CLIP_CHECKPOINT), --clip-hub TAG (needs a "
            "network), or knowingly --clip-random-weights (distances then are not semantic)"
        )
    if len(given) > 1:
        raise CartoqaError(f"give one source of CLIP weights, not {' and '.join(given)}")
    weights = ClipWeights(
        model=str(options.get("clip_model") or "ViT-B-32"),
        checkpoint=Path(checkpoint) if checkpoint else None,
        hub=hub,
        random_weights=random_weights,
        seed=int(options.get("clip_seed") or 0),
    )
    weights.check()  # a ModelError, a CartoqaError: refused before any work
    return weights


def build_mfs(writer: DatasetWriter, report: BuildReport, job: OwnBuild) -> dict[str, Any]:
    """Draw ``job.per_task`` MFS questions and add them to ``writer`` (module docstring);
    returns what the manifest records of them."""
    from symbols.questions import make_questions, option_names
    from symbols.store import load_embeddings, load_legend

    from .build import BuildError

    weights = clip_weights(job.options)  # bad weights are refused before any drawing
    t0 = time.perf_counter()
    legend = load_legend(
        cache=job.cache,
        carto_files=job.carto_files,
        dsn=job.dsn,
        only=job.options.get("mfs_only"),
    )
    vectors, info = load_embeddings(legend, weights)
    report.seconds["legend"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    questions = make_questions(legend, vectors, n=job.per_task, seed=job.seed)
    report.wanted[job.task] = job.per_task
    if len(questions) < job.per_task:
        report.gave_up[job.task] = (
            f"the legend has {len(questions)} features to ask about (one per look-alike "
            "class, named by the tagging schema)"
        )
    if not questions or (job.strict and job.task in report.gave_up):
        raise BuildError(
            f"mfs: {len(questions)} of {job.per_task} questions "
            f"({report.gave_up.get(job.task, 'none could be made')}), so no dataset was "
            "written" + (" (--strict)" if questions else ""),
            report,
        )
    random_weights = bool(info["random_weights"])
    for n, q in enumerate(questions, 1):
        entry = legend.entries[q.subject]
        sample_id = f"mfs-{n:04d}"
        image = writer.add_image(f"{sample_id}.png", legend.images[q.subject].read_bytes())
        options = option_names(legend, q)
        listing = "\n".join(f"{letter}) {name}" for letter, name in options.items())
        writer.add(
            Sample(
                id=sample_id,
                task=job.task,
                prompt=Prompt(
                    text=job.prompts.text("map.mfs", kind=KIND[entry.category], options=listing),
                    images=[image],
                ),
                ground_truth=ChoiceTruth(answer=q.answer, options=options),
                metadata=Metadata(
                    category=entry.category,
                    key_class=entry.key_class,
                    feature=entry.key,
                    option_features="|".join(q.options),
                    option_roles="|".join(q.roles),
                    same_class_short=q.short,
                    clip_model=weights.model,
                    random_weights=random_weights,
                ),
                provenance=Provenance(
                    generator=f"cartoqa {__version__} tasks.mfs.{job.task}",
                    seed=job.seed,
                    style_version=legend.style_version,
                    source=LEGEND_SOURCE,
                    prompts_sha256=job.prompts.sha256,
                ),
            )
        )
    report.samples[job.task] = len(questions)
    report.maps[job.task] = len(questions)
    report.seconds["questions"] = time.perf_counter() - t0
    report.credits.append(LEGEND_CREDIT)
    return {
        "style_version": legend.style_version,
        "attribution": [LEGEND_CREDIT],
        "inputs": {
            job.task: {
                "legend": legend.describe(),
                "clip": {k: v for k, v in info.items() if k != "cached"},
            }
        },
        "warnings": [f"{job.task}: {RANDOM_WEIGHTS_NOTE}"] if random_weights else [],
    }


def _register() -> None:
    from evaluators import mfs

    from .release import features as release
    from .spec import TaskSpec, register_task

    register_task(
        TaskSpec(
            name="mfs",
            family="map",
            track="cartomapqa",
            description="map-feature semantics: which feature is this legend image (A-E)",
            truth_kinds=frozenset({"choice"}),
            score=mfs.mfs_score,
            modes={"original": release.mfs_original},
            mode_tables={"original": release.mfs_original_table},
            release=release.MFS,
            answer_format=mfs.format_mfs,
            reduce=mfs.mfs_metrics,
            metrics=("accuracy", "unanswered"),
            group_by=("category", "key_class"),
            builder=build_mfs,
        )
    )


_register()
