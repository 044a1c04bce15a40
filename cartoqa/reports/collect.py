"""The runs of a dataset, scored: what ``cartoqa score`` prints and ``cartoqa report`` draws.

``score_runs(dataset, runs_dir)`` finds every run store of the dataset under
``runs_dir`` (``cartoqa.stores.find_runs``), reads its latest records, and scores
them through the task registry, reading the per-sample scores stored beside each
store while they are fresh (``cartoqa.stores.scores``) and writing them where they
are not.  A store that cannot be read is reported in ``problems`` and left out;
the others are still scored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError
from cartoqa.records import RunRecord, Sample, SampleScore
from cartoqa.stores import Dataset

__all__ = ["ScoredRun", "ScoredRuns", "score_runs"]

Scored = dict[str, list[tuple[Sample, SampleScore]]]


@dataclass
class ScoredRun:
    """One run of one dataset, scored."""

    run_id: str
    model: str
    settings: dict[str, Any]
    dataset: str
    dataset_sha256: str
    path: Path
    records: dict[str, RunRecord]
    """Sample id -> its latest record."""
    scored: Scored
    """Score key -> (sample, score), in dataset order: a task's samples under its name, a
    paired variant's apart under "<task>@<variant>" and its unanswerable ones under
    "<task>@<variant>/unanswerable" (``cartoqa.scoring.by_variant``; the task of a key is
    ``cartoqa.tasks.variants.split_key(key)[0]``)."""
    scores: dict[str, Any]
    """Score key (as ``scored``) -> group -> metric -> value
    (``cartoqa.scoring.tables_from_scores``)."""

    def summary(self) -> dict[str, Any]:
        """What ``cartoqa score --json`` prints of it."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "settings": self.settings,
            "dataset": self.dataset,
            "dataset_sha256": self.dataset_sha256,
            "scores": self.scores,
        }


@dataclass
class ScoredRuns:
    runs: list[ScoredRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Things worth saying that change nothing (scores that could not be stored)."""
    problems: list[str] = field(default_factory=list)
    """Stores left out or read in part, with why."""


def score_runs(
    dataset: Dataset,
    runs_dir: Path,
    *,
    models: Sequence[str] | None = None,
    mode: str = "cartoqa",
    rescore: bool = False,
    on_run: Callable[[str], None] | None = None,
) -> ScoredRuns:
    """Every run of ``dataset`` under ``runs_dir`` (of ``models`` only, when given),
    scored in ``mode``; ``on_run(model)`` after each (for progress)."""
    from cartoqa.scoring import by_variant, scoring_versions, tables_from_scores
    from cartoqa.stores import find_runs
    from cartoqa.stores.scores import fingerprint, scoring_key, store_state

    infos, problems = find_runs(runs_dir, dataset_sha256=dataset.manifest.samples_sha256)
    out = ScoredRuns(problems=list(problems))
    key = scoring_key(scoring_versions(s.task for s in dataset.samples), mode)
    for info in infos:
        if models and info.model not in models:
            continue
        state = store_state(info.path)
        try:
            with info.open() as store:
                records = store.latest()
                torn = store.torn_bytes
                twice = store.duplicates()
        except CartoqaError as exc:
            out.problems.append(f"{exc}; this run is left out")
            continue
        if torn:
            out.problems.append(
                f"{info.path}: its last line is incomplete ({torn} bytes, a run killed while "
                "writing it); scored without it ('cartoqa run' repairs it when it resumes)"
            )
        if twice:
            shown = ", ".join(f"{sid} ({n})" for sid, n in sorted(twice.items())[:10])
            more = f" and {len(twice) - 10} more" if len(twice) > 10 else ""
            out.notes.append(
                f"warning: {info.path.name} holds more than one successful answer for "
                f"{len(twice)} sample(s): {shown}{more}; the first answer of each is scored, "
                "the later ones are ignored ('cartoqa run' never writes a second: the store "
                "was edited or joined with another)"
            )
        latest = {k: r.response for k, r in records.items()}
        # the bytes the records were read from: None when a run appended meanwhile
        made_from = fingerprint(info.path, since=state) if state is not None else None
        scored, note = _run_scores(
            info.path, dataset, latest, made_from, key=key, mode=mode, rescore=rescore
        )
        if note:
            out.notes.append(note)
        out.runs.append(
            ScoredRun(
                run_id=info.run_id,
                model=info.model,
                settings=info.settings,
                dataset=dataset.manifest.name,
                dataset_sha256=dataset.manifest.samples_sha256,
                path=info.path,
                records=records,
                scored=by_variant(scored),  # stored by task; read by score key
                scores=tables_from_scores(scored, dataset.samples, latest, mode=mode),
            )
        )
        if on_run:
            on_run(info.model)
    return out


def _run_scores(
    store_path: Path,
    ds: Dataset,
    latest: Mapping[str, str | None],
    made_from: Any,
    *,
    key: str,
    mode: str,
    rescore: bool,
) -> tuple[Scored, str | None]:
    """One run's per-sample scores: the stored ones where fresh, else scored now and stored
    (not where the store changed while it was read); and a note when they cannot be
    stored."""
    from cartoqa.scoring import score_samples, scoring_versions
    from cartoqa.stores.scores import read_scores, write_scores

    sha = ds.manifest.samples_sha256
    if made_from is not None and not rescore:
        stored = read_scores(store_path, key, ds.samples, store=made_from, dataset_sha256=sha)
        if stored is not None:
            return stored, None
    scored = score_samples(ds.samples, latest, mode=mode)
    if made_from is None:
        return scored, None
    try:
        write_scores(
            store_path,
            key,
            scored,
            mode=mode,
            versions=scoring_versions(scored),
            store=made_from,
            dataset_sha256=sha,
        )
    except OSError as exc:
        return scored, (
            f"note: cannot store the scores of {store_path.name} beside it "
            f"({exc.strerror or exc}); scored afresh, as they will be each time"
        )
    return scored, None
