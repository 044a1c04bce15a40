"""CLIP embeddings of legend images with open_clip, for choosing MFS distractors (issue 16,
item 4).

    clip = ClipWeights(checkpoint=Path("ViT-B-32.pt"))          # or hub="laion2b_s34b_b79k"
    vectors, info = embed_images(paths, clip)                  # (n, d) unit vectors

Weights are the user's to give: a local checkpoint file, or a tag of the
open_clip hub where a network exists. Random weights are used only when asked
for (``ClipWeights(random_weights=True)``): their distances are not semantic,
so a loud warning is printed and logged, and ``info["random_weights"]`` is
True for the manifest and every sample built with them to record. Distances
are Euclidean between unit vectors, compared within a category only.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cartoqa.errors import ModelError

__all__ = [
    "RANDOM_WEIGHTS_WARNING",
    "Clip",
    "ClipWeights",
    "embed_images",
    "embed_texts",
    "warn_random_weights",
]

log = logging.getLogger(__name__)

RANDOM_WEIGHTS_WARNING = (
    "CLIP IS RUNNING WITH RANDOM WEIGHTS: its distances are not semantic, so the distractors "
    "are not the paper's nearest neighbours. Give --clip-checkpoint FILE (or a hub tag) for "
    "real ones; every sample built now records random_weights=true."
)


@dataclass(frozen=True)
class ClipWeights:
    """Which CLIP to embed with: a model name and where its weights come from."""

    model: str = "ViT-B-32"
    """An open_clip model name."""
    checkpoint: Path | None = None
    """A local weights file (no network needed)."""
    hub: str | None = None
    """An open_clip pretrained tag ("laion2b_s34b_b79k"): downloaded, so a network is needed."""
    random_weights: bool = False
    """Random weights, only when asked: for tests and for machines with no weights at all."""
    seed: int = 0
    """The seed of random weights (the same seed, the same embeddings)."""

    def check(self) -> None:
        """``ModelError`` naming the file when the checkpoint given is not one (asked
        before any work, so a typo costs nothing)."""
        if self.checkpoint is not None and not self.checkpoint.is_file():
            raise ModelError(
                f"the CLIP checkpoint {self.checkpoint} does not exist: give the path of a "
                f"{self.model} weights file (open_clip's .pt or .safetensors), or a hub tag"
            )

    def describe(self) -> dict[str, Any]:
        """What a manifest records of these weights."""
        return {
            "model": self.model,
            "checkpoint": str(self.checkpoint) if self.checkpoint else None,
            "hub": self.hub,
            "random_weights": self.random_weights,
            "seed": self.seed if self.random_weights else None,
        }


def warn_random_weights() -> None:
    """Say loudly, on stderr, in the log and as a Python warning, that CLIP's weights are
    random."""
    print(f"WARNING: {RANDOM_WEIGHTS_WARNING}", file=sys.stderr)
    log.warning(RANDOM_WEIGHTS_WARNING)
    warnings.warn(RANDOM_WEIGHTS_WARNING, stacklevel=3)


def _load(weights: ClipWeights) -> tuple[Any, Any]:
    try:
        import open_clip
        import torch
    except ImportError as exc:
        raise ModelError(
            f"open_clip is not installed ({exc}): pip install -e '.[symbols]'"
        ) from None
    weights.check()
    if weights.checkpoint is not None:
        pretrained: str | None = str(weights.checkpoint)
    elif weights.hub is not None:
        pretrained = weights.hub
    elif weights.random_weights:
        pretrained = None
        warn_random_weights()
        torch.manual_seed(weights.seed)
    else:
        raise ModelError(
            "no CLIP weights given: a checkpoint file (checkpoint=PATH), a hub tag (hub=TAG, "
            "needs a network) or, knowingly, random weights (random_weights=True)"
        )
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(
            weights.model, pretrained=pretrained
        )
    except Exception as exc:  # open_clip raises RuntimeError, HTTP and file errors alike
        raise ModelError(
            f"open_clip could not load {weights.model} with weights {pretrained!r}: "
            f"{str(exc)[:300]}"
        ) from None
    model.eval()
    return model, preprocess


class Clip:
    """A loaded CLIP: image and text embeddings, unit length, as numpy arrays."""

    def __init__(self, weights: ClipWeights) -> None:
        import open_clip

        self.weights = weights
        self.model, self.preprocess = _load(weights)
        self.tokenizer = open_clip.get_tokenizer(weights.model)

    def images(self, paths: Sequence[Path], *, batch: int = 16) -> np.ndarray:
        """(len(paths), d) embeddings of the images at ``paths``, in order."""
        import torch
        from PIL import Image

        out = []
        with torch.no_grad():
            for i in range(0, len(paths), batch):
                images = [
                    self.preprocess(Image.open(p).convert("RGB")) for p in paths[i : i + batch]
                ]
                features = self.model.encode_image(torch.stack(images)).float()
                out.append(torch.nn.functional.normalize(features, dim=-1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)

    def texts(self, texts: Sequence[str], *, batch: int = 64) -> np.ndarray:
        """(len(texts), d) embeddings of ``texts`` (CLIP's text tower), in order."""
        import torch

        out = []
        with torch.no_grad():
            for i in range(0, len(texts), batch):
                tokens = self.tokenizer(list(texts[i : i + batch]))
                features = self.model.encode_text(tokens).float()
                out.append(torch.nn.functional.normalize(features, dim=-1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def embed_images(
    paths: Sequence[Path], weights: ClipWeights, *, batch: int = 16
) -> tuple[np.ndarray, dict[str, Any]]:
    """Unit-length CLIP image embeddings of ``paths``, in order, and what made them."""
    return Clip(weights).images(paths, batch=batch), weights.describe()


def embed_texts(texts: Sequence[str], weights: ClipWeights) -> tuple[np.ndarray, dict[str, Any]]:
    """Unit-length CLIP text embeddings of ``texts``, in order, and what made them."""
    return Clip(weights).texts(texts), weights.describe()
