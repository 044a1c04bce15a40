"""The ``Sample``: one question with its prompt, ground truth, metadata and provenance."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .tasks import declared_tasks, truth_kinds_for
from .truths import GroundTruth

__all__ = ["SAMPLE_SCHEMA_VERSION", "Metadata", "Prompt", "Provenance", "Sample", "Split"]

#: Bump when a field changes meaning or a required field is added.
SAMPLE_SCHEMA_VERSION = 1

Split = Literal["train", "dev", "test"]

#: The attribution every map image and dataset derived from OSM data carries.
OSM_ATTRIBUTION = "© OpenStreetMap contributors"


class Prompt(BaseModel):
    """What the model is shown: text and zero or more images."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    text: str = Field(min_length=1)
    """The user message."""
    system: str | None = None
    """The system prompt, if the task has one."""
    images: list[str] = Field(default_factory=list)
    """Image paths relative to the dataset folder (for example "images/rle-0001.png")."""

    @field_validator("images")
    @classmethod
    def _relative_posix_paths(cls, images: list[str]) -> list[str]:
        for p in images:
            pp = PurePosixPath(p)
            if pp.is_absolute() or ".." in pp.parts or "\\" in p:
                raise ValueError(
                    f"image path {p!r} must be relative to the dataset folder, with '/' and no '..'"
                )
        return images


class Metadata(BaseModel):
    """Facts about a sample that results can be broken down by.

    The named fields are the common ones; any other key is allowed and kept
    (a string, number or boolean), so reports can group by it too.
    """

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)

    city: str | None = None
    """The city or extract the sample comes from."""
    zoom: int | None = Field(default=None, ge=0, le=22)
    """Map zoom level (map tasks)."""
    colour: str | None = None
    """Marker colour, where a task has one ("blue", "red")."""
    difficulty: str | None = None
    """Difficulty label ("simple", "complex", "easy", "medium", "hard")."""
    unit: str | None = None
    """Unit asked for in the answer ("m", "ft", "km", "mi")."""
    region: str | None = None
    """Continent or subregion (GPS tasks)."""

    @model_validator(mode="after")
    def _extra_values_are_scalars(self) -> Metadata:
        for key, value in (self.model_extra or {}).items():
            if value is not None and not isinstance(value, str | int | float | bool):
                raise ValueError(
                    f"metadata {key!r} is a {type(value).__name__}; metadata values must be "
                    "strings, numbers or booleans so that results can be grouped by them"
                )
        return self


class Provenance(BaseModel):
    """Where a sample came from, enough to make it again."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    generator: str
    """The generator that made the sample, with cartoqa's version ("cartoqa 0.1.0 gps.distance")."""
    seed: int | None = None
    """The seed the generator was given."""
    extract_hash: str | None = None
    """SHA-256 of the OSM extract the sample was made from (map tasks)."""
    style_version: str | None = None
    """Version of the openstreetmap-carto style the map was rendered with."""
    source: str | None = None
    """The data source, with its licence and attribution ("GeoNames cities15000, CC BY 4.0")."""
    prompts_sha256: str | None = None
    """The hash of the prompt templates the question was worded from
    (``cartoqa.tasks.templates.PromptSet.sha256``; the manifest names their source)."""


class Sample(BaseModel):
    """One benchmark question."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    schema_version: int = SAMPLE_SCHEMA_VERSION
    """Version of this record's layout."""
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._:-]+(@[a-z0-9-]+)?$")
    """Unique within a dataset; letters, digits and . _ : - only (it names files); a paired
    variant's copy of a sample adds "@" and the variant's tag ("srn-0004@text",
    ``cartoqa.tasks.variants``)."""
    task: str
    """Task name: a registered task's (``cartoqa.records.declared_tasks()``)."""
    split: Split = "test"
    """train, dev or test."""
    prompt: Prompt
    """What the model is shown."""
    ground_truth: GroundTruth
    """The correct answer, typed by task."""
    metadata: Metadata = Field(default_factory=Metadata)
    """Facts to break results down by."""
    provenance: Provenance
    """How the sample was made."""

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v > SAMPLE_SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {v} is newer than this cartoqa reads ({SAMPLE_SCHEMA_VERSION}); "
                "upgrade cartoqa"
            )
        return v

    @model_validator(mode="after")
    def _truth_fits_task(self) -> Sample:
        kinds = truth_kinds_for(self.task)
        if kinds is None:
            raise ValueError(
                f"unknown task {self.task!r}; known tasks: {', '.join(declared_tasks())} "
                "(a task of a plug-in needs its distribution installed: see 'Adding a task' "
                "in the docs)"
            )
        if self.ground_truth.kind not in kinds:
            raise ValueError(
                f"task {self.task!r} takes ground truth of kind {sorted(kinds)}, "
                f"got {self.ground_truth.kind!r}"
            )
        return self
