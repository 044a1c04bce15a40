"""``SampleScore``: one answer scored, the same shape for every task."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["SCORE_SCHEMA_VERSION", "SampleScore"]

SCORE_SCHEMA_VERSION = 1


class SampleScore(BaseModel):
    """What a task's scorer makes of one response: its verdict, its metric values, what it
    read and why it failed."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    schema_version: int = SCORE_SCHEMA_VERSION
    """Version of this record's layout."""
    correct: bool | None
    """The verdict (exact match, within tolerance); None where the task has no single
    verdict per answer."""
    values: dict[str, float | None] = {}
    """Per-sample metric values the task's metrics reduce (for example SRN's
    ``step_accuracy``, RLE's ``predicted``, a GPS task's ``closeness``); None where a value
    does not apply to this answer."""
    parsed: str | None = None
    """The answer as the scorer read it, written as text; None when nothing was read."""
    why: str | None = None
    """Why it is not right: "no response", "unreadable: ...", "wrong", "out of tolerance",
    ...; None when right."""
