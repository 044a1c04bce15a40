"""The published CartoMapQA release: read, scored item for item, written.

- ``release_forms()``: the release's task folders, as the registered tasks name them
  (``TaskSpec.release``; ``form.ReleaseForm``);
- ``score_release(responses)``: a model's stored responses in the release's layout, scored
  by the published arithmetic (``evaluators.published``) and by cartoqa's own scorers,
  item by item (``scoring``);
- ``import_release(root, out)``: the release's questions as a cartoqa dataset
  (``importing``); ``cartoqa.exports.cartomapqa`` writes one back.
"""

from __future__ import annotations

from .form import RELEASE_IMAGES, ReleaseForm, Reply
from .forms import form_for, release_forms
from .importing import import_release, read_release
from .scoring import ReleaseScores, score_release

__all__ = [
    "RELEASE_IMAGES",
    "ReleaseForm",
    "ReleaseScores",
    "Reply",
    "form_for",
    "import_release",
    "read_release",
    "release_forms",
    "score_release",
]
