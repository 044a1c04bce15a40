"""``vllm:MODEL``: vLLM's offline engine on a local GPU (the ``gpu`` extra).

Requests become OpenAI-style chat messages (images as data URIs, several per
prompt allowed) and go to ``LLM.chat`` in batches; vLLM schedules them
itself.  Settings from the CLI: ``--batch-size``; the engine takes
``max_model_len`` and the image limit per prompt from the dataset's largest
request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from cartoqa.errors import MissingDependencyError, ModelError

from ._types import Request, Response
from .openai_api import build_messages

__all__ = ["VLLMModel"]


class VLLMModel:
    """A vLLM offline engine."""

    thread_safe = False

    def __init__(self, model_id: str, *, batch_size: int = 64, max_images: int = 4, **engine: Any):
        try:
            import vllm
        except ImportError:
            raise MissingDependencyError("vllm", "gpu", "the vllm adapter") from None
        self.spec = f"vllm:{model_id}"
        self.batch_size = batch_size
        self._vllm = vllm
        try:
            self._llm = vllm.LLM(
                model=model_id, limit_mm_per_prompt={"image": max_images}, **engine
            )
        except Exception as exc:
            raise ModelError(f"vLLM could not load {model_id!r}: {str(exc)[:300]}") from None

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        s = requests[0].settings
        params = self._vllm.SamplingParams(
            temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed
        )
        t0 = time.perf_counter()
        try:
            outputs = self._llm.chat([build_messages(r) for r in requests], params, use_tqdm=False)
        except Exception as exc:
            return [Response(text=None, error=f"{type(exc).__name__}: {str(exc)[:300]}")] * len(
                requests
            )
        latency = time.perf_counter() - t0
        return [
            Response(
                text=o.outputs[0].text,
                latency_s=latency,
                input_tokens=len(o.prompt_token_ids or []),
                output_tokens=len(o.outputs[0].token_ids),
            )
            for o in outputs
        ]

    def close(self) -> None:
        del self._llm
