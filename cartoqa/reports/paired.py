"""Paired variants in a report: each variant's score against its base's, sample by sample.

A paired variant's sample ("srn-0004@text") asks its base sample's question ("srn-0004")
under one controlled change (``cartoqa.tasks.variants``).  For each run, each task and
each variant the run scored, ``paired_lines`` pairs the variant's samples with their base
samples by base id and gives, for each headline (row, metric) of the task
(``tables.headline``: its spec's ``headline`` or first metric):

- ``n``: the pairs (a variant's sample whose base is not in the run is left out, and
  counted in ``unpaired``);
- ``base`` and ``score``: the metric over the paired base samples and over their variant
  copies, each reduced with the task's own ``reduce`` (its table's row, for a task with a
  table of its own: RLE's "all m"), so both sides hold the same questions;
- ``difference``: variant minus base, and ``interval``: its 95 % paired bootstrap
  interval: the pairs resampled with replacement ``n_boot`` times (numpy's
  ``default_rng(seed)``), the difference computed on each resample, its 2.5 and 97.5
  percentiles (the report's convention, ``tables.bootstrap``; a resample where the metric
  is not defined is skipped); (nan, nan) with fewer than two pairs;
- ``sentence``: what it says, in words a reader can check against the numbers.  Whether
  a larger value is better is the report's (``tables.LOWER_IS_BETTER``: rmse, mae, mape),
  and the sentence says both: "higher (worse)".

A variant's samples flagged unanswerable (``nolabels`` on a question that needs names:
score key "<task>@<variant>/unanswerable") get a line of their own, marked so: their score
against the base's kept truth is shown (an answer there is a guess or prior knowledge,
not a reading), never a difference, and never folded into the variant's score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cartoqa.records import Sample, SampleScore
from cartoqa.tasks.spec import TaskSpec, get_task
from cartoqa.tasks.variants import UNANSWERABLE, base_id, split_key

from .collect import ScoredRun
from .tables import LOWER_IS_BETTER, _reduce_at, headline, key_order, run_label

__all__ = ["PairedLine", "paired_bootstrap", "paired_lines", "variant_words"]

Row = tuple[Sample, SampleScore]
Pair = tuple[Row, Row]


def variant_words(variant: str) -> tuple[str, str]:
    """How a sentence names a variant and its base ("text" -> "text-only", "image")."""
    words = {
        "text": ("text-only", "image"),
        "image+text": ("image+text", "image-only"),
        "coords": ("image+coordinates", "image-only"),
        "nolabels": ("unlabelled-map", "labelled-map"),
        "greyscale": ("greyscale", "colour"),
        "zoom": ("second-zoom", "first-zoom"),
    }
    if variant in words:
        return words[variant]
    if variant.startswith("lang:"):
        return f"{variant.partition(':')[2]}-label", "local-label"
    return variant, "base"


@dataclass
class PairedLine:
    """One model's paired comparison of one variant of one task, on one headline metric."""

    task: str
    variant: str
    model: str
    """The model's label in the report (``tables.run_label``)."""
    row: str
    """The task's table row the metric is read at ("all"; RLE: "all m", "all ft")."""
    metric: str
    lower_is_better: bool
    unanswerable: bool
    """The variant's items flagged unanswerable by design, on a line of their own."""
    n: int
    """Pairs (base sample, variant sample) the numbers are over."""
    unpaired: int
    """Variant samples left out: their base is not among the run's samples."""
    base: float
    """The metric over the paired base samples."""
    score: float
    """The metric over their variant copies (unanswerable: against the base's kept truth)."""
    difference: float
    """``score - base``; nan on an unanswerable line."""
    interval: tuple[float, float]
    """95 % paired bootstrap interval of ``difference``; (nan, nan) where there is none."""
    sentence: str

    @property
    def key(self) -> str:
        """The variant's score key ("srn@text", "mml@nolabels/unanswerable")."""
        key = f"{self.task}@{self.variant}"
        return f"{key}/{UNANSWERABLE}" if self.unanswerable else key

    @property
    def excludes_zero(self) -> bool | None:
        """Whether the interval lies wholly above or below 0; None without an interval."""
        lo, hi = self.interval
        if math.isnan(lo) or math.isnan(hi):
            return None
        return lo > 0 or hi < 0

    def as_dict(self) -> dict[str, Any]:
        """The line as tables.json holds it."""
        return {
            "task": self.task,
            "variant": self.variant,
            "key": self.key,
            "model": self.model,
            "row": self.row,
            "metric": self.metric,
            "lower_is_better": self.lower_is_better,
            "unanswerable": self.unanswerable,
            "n": self.n,
            "unpaired": self.unpaired,
            "base": self.base,
            "score": self.score,
            "difference": self.difference,
            "interval": list(self.interval),
            "excludes_zero": self.excludes_zero,
            "sentence": self.sentence,
        }


def paired_bootstrap(
    pairs: Sequence[Pair],
    spec: TaskSpec | None,
    row: str,
    metric: str,
    *,
    n: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """95 % percentile interval of the paired difference (variant minus base) of
    ``metric`` at ``row``: the pairs resampled with replacement ``n`` times (module
    docstring); (nan, nan) with fewer than two pairs or no resample."""
    if len(pairs) < 2 or n < 1:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n):
        pick = rng.integers(0, len(pairs), len(pairs))
        base = _reduce_at(spec, [pairs[i][0] for i in pick], row, metric)
        variant = _reduce_at(spec, [pairs[i][1] for i in pick], row, metric)
        if not (math.isnan(base) or math.isnan(variant)):
            values.append(variant - base)
    if not values:
        return float("nan"), float("nan")
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo) + 0.0, float(hi) + 0.0  # + 0.0: no "-0.000"


def paired_lines(
    runs: Sequence[ScoredRun], *, n_boot: int = 1000, seed: int = 0
) -> list[PairedLine]:
    """Every run's paired lines (module docstring), by task, variant (its unanswerable
    items right after it), headline row, then run; empty for a dataset without variants."""
    found: list[tuple[tuple, PairedLine]] = []
    for r, run in enumerate(runs):
        label = run_label(run, runs)
        for key, rows in run.scored.items():
            task, variant, unanswerable = split_key(key)
            if variant is None:
                continue
            bases = {s.id: (s, sc) for s, sc in run.scored.get(task, [])}
            pairs = [(bases[base_id(s)], (s, sc)) for s, sc in rows if base_id(s) in bases]
            if not pairs and not unanswerable:
                continue
            spec = get_task(task)
            table = run.scores.get(task) or run.scores.get(key) or {}
            for h, (row, metric) in enumerate(headline(task, table)):
                line = _line(
                    pairs,
                    rows,
                    spec,
                    task=task,
                    variant=variant,
                    model=label,
                    row=row,
                    metric=metric,
                    unanswerable=unanswerable,
                    n_boot=n_boot,
                    seed=seed,
                )
                if line is not None:
                    found.append(((key_order(key), h, r), line))
    found.sort(key=lambda item: item[0])
    return [line for _, line in found]


def _line(
    pairs: Sequence[Pair],
    rows: Sequence[Row],
    spec: TaskSpec | None,
    *,
    task: str,
    variant: str,
    model: str,
    row: str,
    metric: str,
    unanswerable: bool,
    n_boot: int,
    seed: int,
) -> PairedLine | None:
    """One line; None where neither side has the row (RLE's "all ft" when the pairs ask
    only in metres)."""
    lower = metric in LOWER_IS_BETTER
    base = _reduce_at(spec, [b for b, _ in pairs], row, metric)
    if unanswerable:  # every flagged item, whether or not its base is in the run
        score = _reduce_at(spec, rows, row, metric)
        if math.isnan(base) and math.isnan(score):
            return None
        nan = float("nan")
        line = PairedLine(task, variant, model, row, metric, lower, True, len(rows),
                          len(rows) - len(pairs), base, score, nan, (nan, nan), "")  # fmt: skip
        line.sentence = f"{line.task}: {_unanswerable_sentence(line)}"
        return line
    score = _reduce_at(spec, [v for _, v in pairs], row, metric)
    if math.isnan(base) and math.isnan(score):
        return None
    interval = paired_bootstrap(pairs, spec, row, metric, n=n_boot, seed=seed)
    line = PairedLine(task, variant, model, row, metric, lower, False, len(pairs),
                      len(rows) - len(pairs), base, score, score - base, interval, "")  # fmt: skip
    line.sentence = f"{line.task}: {_sentence(line, n_boot)}"
    return line


def _n(x: float) -> str:
    return f"{x + 0.0:.3f}"


def _metric(line: PairedLine) -> str:
    return line.metric if line.row == "all" else f"{line.metric} ({line.row})"


def _sentence(line: PairedLine, n_boot: int) -> str:
    """What the line says, with the numbers a reader checks it by."""
    v, b = variant_words(line.variant)
    m = _metric(line)
    pairs = f"{line.n} pair{'s' if line.n != 1 else ''}"
    left = (
        f"; {line.unpaired} {line.variant} item(s) without their base in the run left out"
        if line.unpaired
        else ""
    )
    if math.isnan(line.base) or math.isnan(line.score):
        which = f"{b} {m}" if math.isnan(line.base) else f"{v} {m}"
        return (
            f"{v} {m} cannot be compared with {b} {m} for {line.model}: {which} is not "
            f"defined on these {pairs} (no readable answer){left}"
        )
    lo, hi = line.interval
    if line.excludes_zero is None:
        why = (
            "fewer than two pairs"
            if line.n < 2
            else "no resamples: --bootstrap 0"
            if n_boot < 1
            else "no resample could be scored"
        )
        return (
            f"{v} {m} ({_n(line.score)}) and {b} {m} ({_n(line.base)}) for {line.model} "
            f"differ by {_n(line.difference)} on {pairs}; no interval ({why}): no difference "
            f"shown{left}"
        )
    interval = f"the 95 % interval of the difference ({_n(lo)} to {_n(hi)})"
    if line.excludes_zero:
        higher = lo > 0
        quality = "worse" if higher == line.lower_is_better else "better"
        return (
            f"{v} {m} is {'higher' if higher else 'lower'} ({quality}) than {b} {m} for "
            f"{line.model}: {_n(line.score)} against {_n(line.base)} on {pairs}, {interval} "
            f"excludes 0{left}"
        )
    return (
        f"{v} {m} ({_n(line.score)}) and {b} {m} ({_n(line.base)}) for {line.model}, on "
        f"{pairs}: {interval} includes 0: no difference shown{left}"
    )


def _unanswerable_sentence(line: PairedLine) -> str:
    m = _metric(line)
    base = "" if math.isnan(line.base) else f" (on their base items: {_n(line.base)})"
    score = "not defined" if math.isnan(line.score) else _n(line.score)
    return (
        f"{line.task} {line.variant}: {line.n} item(s) unanswerable by design (the answer "
        f"needs what the variant removes), kept apart from the {line.variant} score; "
        f"against the base's kept truth {line.model} scores {m} {score} on them{base}: an "
        "answer there is a guess or prior knowledge, not a reading"
    )
