"""``RunRecord``: one model response to one sample, as the run store keeps it."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RUN_SCHEMA_VERSION", "RunRecord"]

RUN_SCHEMA_VERSION = 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class RunRecord(BaseModel):
    """A model's raw response to one sample (or the error that stopped it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    schema_version: int = RUN_SCHEMA_VERSION
    """Version of this record's layout."""
    sample_id: str = Field(min_length=1)
    """The sample answered."""
    model: str
    """The model spec that answered ("openai:gpt-4o", "oracle")."""
    response: str | None = None
    """The raw text the model returned, unparsed; None when the request failed."""
    error: str | None = None
    """Why the request failed, or None when it succeeded."""
    latency_s: float | None = Field(default=None, ge=0)
    """Wall-clock seconds from request to response."""
    input_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens, where the model reports them."""
    output_tokens: int | None = Field(default=None, ge=0)
    """Completion tokens, where the model reports them."""
    attempt: int = Field(default=1, ge=1)
    """1 for the first record of this sample; higher after earlier records that failed."""
    retries: int = Field(default=0, ge=0)
    """Failed tries within this attempt that the adapter retried (429, 5xx, timeouts)."""
    image_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens the images took, where a local model reports them."""
    note: str | None = None
    """What the runner had to mend to store this response (a negative token count read as
    unknown, unpaired surrogates escaped), or None."""
    created_at: str = Field(default_factory=_now)
    """UTC time the record was written (ISO 8601)."""

    @property
    def ok(self) -> bool:
        """True when the model answered (no error)."""
        return self.error is None
