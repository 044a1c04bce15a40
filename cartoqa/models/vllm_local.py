"""``vllm:MODEL``: vLLM's engine on the GPUs of one node, or of a Ray cluster (the ``gpu`` extra).

Parallelism is vLLM's own, set by two sizes:

- ``tensor_parallel`` (``--tensor-parallel``/``--tp``): one copy of the model split over
  that many GPUs (vLLM's ``tensor_parallel_size``), for a model too big for one GPU;
- ``data_parallel`` (``--data-parallel``/``--dp``): that many copies (engines), each on
  ``tensor_parallel`` GPUs (vLLM's ``data_parallel_size``).  vLLM starts the engines and
  its own load balancer sends each request to the least busy one; a node of 8 GPUs is
  filled by ``tp * dp = 8``.

The engine is vLLM's ``AsyncLLM`` (``vllm.v1.engine.async_llm``), the one ``vllm serve``
runs, driven in this process: vLLM's offline ``LLM`` class refuses ``data_parallel_size >
1`` (it points to a launcher of one process per rank).  ``parallel_backend`` says where the
engines run: ``"mp"`` (default) starts them as processes of this node; ``"ray"`` makes them
Ray actors that vLLM places over the Ray cluster this process joins (``ray start`` on each
node first; vLLM's ``data_parallel_backend="ray"``, and its Ray executor for the GPUs of
one copy when ``tensor_parallel > 1``).  No pool of our own: cartoqa hands every request
to the one engine client and vLLM spreads them.  Needs vLLM 0.9.2 or later (data-parallel
load balancing in ``AsyncLLM``, the Ray backend); an older one is refused with a message.

Prompts are built as the ``hf`` adapter builds them (the model's own processor and chat
template, images as decoded pictures), so ``vllm:X`` and ``hf:X`` see the same prompt.  A
text-only model (its processor is a bare tokenizer: GPS questions) gets plain-text
messages, and a question with an image fails alone.  A BOS that the template writes and the
tokenizer adds anyway is sent once.

Batch sizing: each engine runs at most ``max_num_seqs`` sequences at once (vLLM's
scheduler limit, as the engine resolved it: 256 on most GPUs, 1,024 on H100/H200-class ones
unless given), so a batch of ``data_parallel * max_num_seqs`` requests fills every engine's
running set at once.  That is the default ``batch_size`` (what the runner hands to
``generate`` per call); all of a batch is submitted together and vLLM queues what does not
fit.  Between batches the engines drain (the slowest answers of a batch end with fewer
sequences running); ``--batch-size`` larger, e.g. twice the default, keeps a queue behind
each engine at the cost of memory: this process holds every image of a batch decoded
(about 3 MB for a 1366x768 map), and vLLM its processed pixels, until the batch ends.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cartoqa.errors import MissingDependencyError, ModelError

from ._types import Request, Response
from .hf_local import _messages as hf_messages

__all__ = ["MIN_VLLM", "PARALLEL_BACKENDS", "VLLMModel", "default_batch_size", "engine_args"]

MIN_VLLM = (0, 9, 2)
"""The oldest vLLM with data-parallel load balancing in ``AsyncLLM`` and the Ray backend."""
PARALLEL_BACKENDS = ("mp", "ray")


def _messages(request: Request, *, multimodal: bool = True) -> list[dict[str, Any]]:
    """The chat as the ``hf`` adapter writes it (content parts); plain strings for a text-only
    model, whose chat template may print a list of parts as it is."""
    if not multimodal:
        plain: list[dict[str, Any]] = []
        if request.system:
            plain.append({"role": "system", "content": request.system})
        return [*plain, {"role": "user", "content": request.text}]
    return hf_messages(request)


def _bos_the_tokenizer_adds(tokenizer: Any) -> str | None:
    """The BOS text this tokenizer puts before whatever it encodes, or None.  vLLM encodes a
    text prompt with the special tokens, so a BOS that the chat template also wrote would be
    there twice: the prompt is sent without the template's."""
    bos, bos_id = getattr(tokenizer, "bos_token", None), getattr(tokenizer, "bos_token_id", None)
    if not bos or bos_id is None:
        return None
    try:
        ids = list(tokenizer("x")["input_ids"])
    except Exception:
        return None
    return bos if ids[:1] == [bos_id] else None


def _version(text: str) -> tuple[int, ...]:
    """(0, 10, 1) from "0.10.1", "0.10.1rc2" or "0.10.1.dev12+gabc"; missing parts are 0."""
    parts = [int(m.group()) for m in (re.match(r"\d+", p) for p in text.split(".")[:3]) if m]
    return tuple(parts + [0] * (3 - len(parts)))


def engine_args(
    model_id: str,
    *,
    tensor_parallel: int = 1,
    data_parallel: int = 1,
    parallel_backend: str = "mp",
    dtype: str = "auto",
    trust_remote_code: bool = False,
    max_images: int = 4,
) -> dict[str, Any]:
    """The keyword arguments of vLLM's ``AsyncEngineArgs`` for these settings."""
    for name, value in (("tensor_parallel", tensor_parallel), ("data_parallel", data_parallel)):
        if not isinstance(value, int) or value < 1:
            flag = name.replace("_", "-")
            raise ModelError(f"--{flag} {value!r} for vllm:{model_id}: give a whole number >= 1")
    if parallel_backend not in PARALLEL_BACKENDS:
        raise ModelError(
            f"--parallel-backend {parallel_backend!r}: use mp (processes on this node) or ray "
            "(actors on the Ray cluster this machine joined)"
        )
    args: dict[str, Any] = {
        "model": model_id,
        "tensor_parallel_size": tensor_parallel,
        "data_parallel_size": data_parallel,
        "data_parallel_backend": parallel_backend,
        "dtype": dtype,
        "trust_remote_code": trust_remote_code,
        "limit_mm_per_prompt": {"image": max_images},
        "disable_log_stats": True,
    }
    if parallel_backend == "ray" and tensor_parallel > 1:
        args["distributed_executor_backend"] = "ray"  # the GPUs of one copy may span nodes
    return args


def default_batch_size(data_parallel: int, max_num_seqs: int) -> int:
    """Requests per ``generate`` call: every engine's running set full (module docstring)."""
    return data_parallel * max_num_seqs


def _local_gpus() -> int | None:
    """GPUs vLLM sees on this machine, or None where it cannot say."""
    try:
        from vllm.platforms import current_platform

        return int(current_platform.device_count())
    except Exception:
        return None


class VLLMModel:
    """vLLM engines (``data_parallel`` copies of ``tensor_parallel`` GPUs each) behind one
    client; ``generate`` submits a whole batch at once and waits for all of it."""

    thread_safe = False

    def __init__(
        self,
        model_id: str,
        *,
        tensor_parallel: int = 1,
        data_parallel: int = 1,
        parallel_backend: str = "mp",
        batch_size: int | None = None,
        dtype: str = "auto",
        max_images: int = 4,
        trust_remote_code: bool = False,
    ) -> None:
        try:
            import vllm
        except ImportError:
            raise MissingDependencyError("vllm", "gpu", "the vllm adapter") from None
        have = str(getattr(vllm, "__version__", "0"))
        if _version(have) < MIN_VLLM:
            need = ".".join(map(str, MIN_VLLM))
            raise ModelError(
                f"vllm {have} is installed; the vllm adapter needs vLLM {need} or later (data "
                f"parallelism through its engine's load balancer). Upgrade it: "
                f"pip install -U 'vllm>={need}'"
            )
        if batch_size is not None and batch_size < 1:
            raise ModelError(f"--batch-size {batch_size} must be at least 1")
        args = engine_args(
            model_id,
            tensor_parallel=tensor_parallel,
            data_parallel=data_parallel,
            parallel_backend=parallel_backend,
            dtype=dtype,
            trust_remote_code=trust_remote_code,
            max_images=max_images,
        )
        # one engine on one device is vLLM's to place (a CPU build of vLLM included)
        needed = tensor_parallel * data_parallel
        gpus = _local_gpus() if parallel_backend == "mp" and needed > 1 else None
        if gpus is not None and needed > gpus:
            raise ModelError(
                f"--tensor-parallel {tensor_parallel} x --data-parallel {data_parallel} needs "
                f"{tensor_parallel * data_parallel} GPUs; this machine has {gpus}. Give sizes "
                "whose product fits, or --parallel-backend ray on a Ray cluster with more"
            )
        self.spec = f"vllm:{model_id}"
        self.tensor_parallel = tensor_parallel
        self.data_parallel = data_parallel
        self.engine_args = args
        self._vllm = vllm
        self._ids = itertools.count()
        try:
            import transformers

            self.processor = transformers.AutoProcessor.from_pretrained(
                model_id, trust_remote_code=trust_remote_code
            )
        except Exception as exc:
            raise ModelError(
                f"cannot load the processor of {model_id!r}: {str(exc)[:300]} (give a local "
                "folder, or a hub id with network access or a filled Hugging Face cache)"
            ) from None
        # a text-only model (GPS questions) loads a bare tokenizer: it takes no image
        self._multimodal = isinstance(self.processor, transformers.ProcessorMixin)
        tokenizer = getattr(self.processor, "tokenizer", None) if self._multimodal else None
        self._bos = _bos_the_tokenizer_adds(tokenizer or self.processor)
        token = getattr(self.processor, "image_token_id", None)
        self._image_token_id = token if isinstance(token, int) else None

        # one event loop, in its own thread, owns the engine client (AsyncLLM is asyncio)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="vllm-engine-client", daemon=True
        )
        self._thread.start()
        try:
            self._engine = self._call(self._start(args))
        except Exception as exc:
            self._stop_loop()
            raise ModelError(f"vLLM could not load {model_id!r}: {str(exc)[:300]}") from None
        self.max_num_seqs = int(self._engine.vllm_config.scheduler_config.max_num_seqs)
        self.batch_size = batch_size or default_batch_size(data_parallel, self.max_num_seqs)

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _start(self, args: dict[str, Any]) -> Any:
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        return AsyncLLM.from_engine_args(AsyncEngineArgs(**args))

    def _prompt(self, request: Request) -> dict[str, Any]:
        from PIL import Image

        if request.images and not self._multimodal:
            raise ValueError(
                f"{self.spec} loaded no image processor (a text-only model?): it cannot be "
                f"shown the {len(request.images)} image(s) of this question"
            )
        text = self.processor.apply_chat_template(
            _messages(request, multimodal=self._multimodal),
            tokenize=False,
            add_generation_prompt=True,
        )
        if self._bos and text.startswith(self._bos):
            text = text[len(self._bos) :]
        prompt: dict[str, Any] = {"prompt": text}
        if request.images:
            images = [Image.open(Path(p)).convert("RGB") for p in request.images]
            prompt["multi_modal_data"] = {"image": images if len(images) > 1 else images[0]}
        return prompt

    async def _one(self, request: Request) -> Response:
        s = request.settings
        t0 = time.perf_counter()
        try:
            params = self._vllm.SamplingParams(
                temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed
            )
            final = None
            async for out in self._engine.generate(
                self._prompt(request), params, f"cartoqa-{next(self._ids)}"
            ):
                final = out
            if final is None:
                raise RuntimeError("the engine returned no output")
        except Exception as exc:  # an image the processor refuses, a prompt too long...
            return Response(text=None, error=f"{type(exc).__name__}: {str(exc)[:300]}")
        done = final.outputs[0]
        prompt_ids = list(final.prompt_token_ids or [])
        image_tokens = None
        if self._image_token_id is not None:
            image_tokens = sum(t == self._image_token_id for t in prompt_ids)
        return Response(
            text=done.text,
            latency_s=time.perf_counter() - t0,
            input_tokens=len(prompt_ids),
            output_tokens=len(done.token_ids),
            image_tokens=image_tokens,
        )

    async def _batch(self, requests: Sequence[Request]) -> list[Response]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        return self._call(self._batch(requests))

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        if not self._thread.is_alive():
            self._loop.close()

    def close(self) -> None:
        engine = getattr(self, "_engine", None)
        if engine is not None:
            self._loop.call_soon_threadsafe(engine.shutdown)
            self._engine = None
        self._stop_loop()
