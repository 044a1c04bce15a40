"""The one exception every answer parser raises."""

from __future__ import annotations

__all__ = ["AnswerParseError"]


class AnswerParseError(ValueError):
    """A model answer that holds no value of the kind asked for."""
