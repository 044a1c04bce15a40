"""A CLIP baseline, ``nearest-clip``: it picks the option whose text embedding is nearest the
image's (zero-shot CLIP), for multiple-choice questions with one image (MFS).

    nearest-clip                  weights from CARTOQA_CLIP_CHECKPOINT
    nearest-clip:PATH             a local open_clip weights file
    nearest-clip:hub:TAG          an open_clip pretrained tag (downloaded: needs a network)
    nearest-clip:random[:SEED]    random weights, knowingly (warned about loudly)

Each option's name is embedded as it is shown; the image with CLIP's own
preprocessing; the nearest by Euclidean distance between unit vectors (the
same as the largest cosine) is answered by its letter.  It reads the option
texts from the sample, which are in the prompt too, never the answer.  The
model is the sample's ``clip_model`` (what the dataset was built with),
else ``ViT-B-32``.  A question that is not multiple choice on one image gets
``DECLINE``, which scores as unreadable.  With random weights its accuracy is
chance (0.2 on five options): the code path is the one real weights take.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cartoqa.errors import ModelError
from cartoqa.records import ChoiceTruth
from cartoqa.settings import clip_checkpoint

from ._types import Request
from .baselines import _Baseline, _sample

__all__ = ["DECLINE", "NearestClipModel", "parse_weights"]

DECLINE = "nearest-clip answers multiple-choice questions on one image only."
DEFAULT_MODEL = "ViT-B-32"


def parse_weights(rest: str) -> dict[str, Any]:
    """The ``ClipWeights`` fields (less the model) a spec's part after ``nearest-clip:``
    names; "" reads CARTOQA_CLIP_CHECKPOINT.  ``ModelError`` when none is given."""
    if rest.startswith("random"):
        _, _, seed = rest.partition(":")
        try:
            return {"random_weights": True, "seed": int(seed) if seed else 0}
        except ValueError:
            raise ModelError(
                f"nearest-clip:{rest}: the seed must be an integer (nearest-clip:random:7)"
            ) from None
    if rest.startswith("hub:"):
        return {"hub": rest[4:]}
    path = Path(rest).expanduser() if rest else clip_checkpoint()
    if path is None:
        raise ModelError(
            "nearest-clip needs CLIP weights: nearest-clip:PATH (a local weights file), "
            "nearest-clip:hub:TAG (needs a network), nearest-clip:random (chance accuracy), "
            "or set CARTOQA_CLIP_CHECKPOINT"
        )
    from symbols.embed import ClipWeights

    try:
        ClipWeights(checkpoint=path).check()
    except ModelError as exc:
        raise ModelError(f"nearest-clip: {exc}") from None
    return {"checkpoint": path}


class NearestClipModel(_Baseline):
    """Zero-shot CLIP over the options (module docstring)."""

    batch_size = 16
    thread_safe = False
    failures = (OSError, ValueError)  # an unreadable image

    def __init__(self, rest: str = "") -> None:
        self.spec = f"nearest-clip:{rest}" if rest else "nearest-clip"
        self._weights = parse_weights(rest)  # refused at once, before any question
        self._clips: dict[str, Any] = {}
        self._texts: dict[tuple[str, str], np.ndarray] = {}

    def _clip(self, model: str) -> Any:
        if model not in self._clips:
            from symbols.embed import Clip, ClipWeights

            self._clips[model] = Clip(ClipWeights(model=model, **self._weights))
        return self._clips[model]

    def _answer(self, request: Request) -> str:
        sample = _sample(request, self.spec)
        truth = sample.ground_truth
        if not isinstance(truth, ChoiceTruth) or len(request.images) != 1:
            return DECLINE
        model = str((sample.metadata.model_extra or {}).get("clip_model") or DEFAULT_MODEL)
        clip = self._clip(model)
        letters = list(truth.options)
        missing = [
            truth.options[k] for k in letters if (model, truth.options[k]) not in self._texts
        ]
        if missing:
            for name, vector in zip(missing, clip.texts(missing), strict=True):
                self._texts[(model, name)] = vector
        image = clip.images([request.images[0]])[0]
        texts = np.stack([self._texts[(model, truth.options[k])] for k in letters])
        return letters[int(np.argmin(np.linalg.norm(texts - image, axis=1)))]

    def close(self) -> None:
        self._clips.clear()
        self._texts.clear()
