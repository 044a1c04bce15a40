"""What one task folder of the published CartoMapQA release is to cartoqa: a ``ReleaseForm``.

The release (``Dataset/CartoMapQA/``, about 2,251 questions) keeps each task in its own
folders and files, and a model's answers under ``Responses/<TASK>/<model>/``.  A form reads
both into cartoqa's terms (samples; the stored response records beside the samples their
questions become), scores the stored records by the published arithmetic
(``evaluators.published``), and writes cartoqa samples and replies back in the same layout.
A task's spec names its form (``TaskSpec.release``); the commands ``import-release``,
``score-release`` and ``export --to cartomapqa`` go through the forms the specs name, so no
command names a task.

Images of an imported release are named ``release/<path in the release>``: the dataset holds
a link named ``release`` to the release's root (or a copy of its images).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa.records import Sample
from cartoqa.tasks.templates import PromptSet
from evaluators.published import Evaluation

__all__ = ["RELEASE_IMAGES", "ReleaseForm", "Reply"]

#: the folder of an imported dataset its samples' images are named under
RELEASE_IMAGES = "release"


@dataclass(frozen=True)
class Reply:
    """One stored response record of the release's layout, beside the question it answers."""

    key: str
    """The response file's name ("12.json", "route_3_meters_Simple.json"; MFS: the question
    id in the one file)."""
    record: Any
    """The record as stored (a dict; MTMF: a list, or the text of a ``.txt`` file)."""
    sample: Sample
    """The cartoqa sample its question becomes (as ``read_questions`` makes it)."""
    response: str | None
    """The raw reply (the record's ``Response``; an MTMF ``.txt``: its text)."""


@dataclass(frozen=True)
class ReleaseForm:
    """One task folder of the release, read and written (see the module docstring)."""

    folder: str
    """The release's name for it, the folder under ``Responses/``: "MFS", "STMF", "MTMF",
    "RLE", "MML" or "SRN"."""
    top: str
    """Where its questions lie in the release ("MapNavigation", "MapFeatureUnderstanding/
    MFS_task"): a release without it does not hold the task."""
    tasks: tuple[str, ...]
    """The cartoqa tasks its questions become."""
    read_questions: Callable[[Path, PromptSet], list[Sample]]
    """(the release root, the folder holding ``MapFeatureUnderstanding/``, ...; the prompt
    templates to ask with) -> samples, their images named ``release/<path under the root>``.
    The prompts are the templates ``map.release.<task>`` (``cartoqa/tasks/prompts/map.toml``
    says which fields each gets); a question record holding a "cartoqa" key (written by
    ``write_questions``) gives back that sample as it was, its prompt included.  A missing or
    renamed folder or file raises ``DatasetError`` naming what was expected where."""
    read_replies: Callable[[Path, Path | None], list[Reply]]
    """(a model's response folder, the release root or None) -> its replies, by key."""
    detect: Callable[[Path], bool]
    """Whether a folder holds this form's response files."""
    evaluate: Callable[[Sequence[Reply], int], list[Evaluation]]
    """The published arithmetic over the stored records (the seed of its random draws)."""
    write_questions: Callable[[Sequence[Sample], Path, Path], None]
    """(samples of its tasks, the dataset folder their images are under, the release root to
    write): question and truth files and images in the release's layout."""
    write_replies: Callable[[Sequence[Sample], Mapping[str, str | None], Path], None]
    """(samples, sample id -> raw reply, the model's response folder to write): the records the
    published ``get_response_*.py`` would have saved for these replies."""
