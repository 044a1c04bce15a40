"""The GPS tests' way to score an answer: the sample's task's own scorer, from the registry
(``TaskSpec.score``), as ``cartoqa score`` does."""

from __future__ import annotations

from cartoqa.records import Sample, SampleScore
from cartoqa.tasks.spec import get_task


def score_gps(sample: Sample, answer: str | None) -> SampleScore:
    """The ``SampleScore`` of ``answer`` by the scorer of the sample's task."""
    spec = get_task(sample.task)
    assert spec is not None, sample.task
    return spec.score(sample, answer)


def level(score: SampleScore, key: str) -> bool | None:
    """A place answer's "province" or "country" verdict; None where it was not graded."""
    value = score.values.get(key)
    return None if value is None else bool(value)
