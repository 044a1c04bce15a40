"""What a model is given and what it returns: the ``Model`` protocol and its records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from cartoqa.records import Sample

__all__ = ["GenerationSettings", "Model", "Request", "Response"]


@dataclass(frozen=True)
class GenerationSettings:
    """How a model should generate; part of a run's identity (they change the answers)."""

    temperature: float = 0.0
    """0 (the default) asks for greedy decoding."""
    max_tokens: int = 1024
    """Most tokens the model may write in one answer."""
    seed: int | None = None
    """Sampling seed, where the model takes one."""

    def __post_init__(self) -> None:
        if not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature={self.temperature} must be between 0 and 2")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens={self.max_tokens} must be at least 1")

    def as_dict(self) -> dict[str, float | int | None]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}


@dataclass(frozen=True)
class Request:
    """One question for a model."""

    id: str
    """The sample's id; adapters use it only in logs and errors."""
    text: str
    """The user message."""
    system: str | None = None
    """The system prompt, if any."""
    images: tuple[Path, ...] = ()
    """Image files shown before the text, in order."""
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    """Generation settings."""
    sample: Sample | None = None
    """The whole sample. Only the baselines read it (the oracle answers from its ground
    truth); no adapter sends anything from it but ``text``, ``system`` and ``images``."""


@dataclass(frozen=True)
class Response:
    """A model's answer to one request, or why there is none."""

    text: str | None
    """The answer; None when the request failed."""
    latency_s: float = 0.0
    """Wall-clock seconds for this request, retries and waits included."""
    input_tokens: int | None = None
    """Prompt tokens, where the model reports them."""
    output_tokens: int | None = None
    """Answer tokens, where the model reports them."""
    error: str | None = None
    """Why the request failed (after all retries), or None."""
    retries: int = 0
    """Tries that failed before the last one (429, 5xx, timeouts, malformed replies)."""
    image_tokens: int | None = None
    """Tokens the images took in the prompt, where a local model can tell."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


@runtime_checkable
class Model(Protocol):
    """Anything that answers batches of requests.

    ``generate`` returns one ``Response`` per request, in order, and puts a
    failure of one request in that request's ``Response.error``; it raises
    ``cartoqa.errors.ModelError`` only when no request can succeed (a
    refused key, an unknown model).  The runner sends at most ``batch_size``
    requests per call, and calls from several threads at once only when
    ``thread_safe`` is true.
    """

    spec: str
    batch_size: int
    thread_safe: bool

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...

    def close(self) -> None: ...
