"""A deterministic FAKE of the few parts of vLLM the ``vllm`` adapter touches, for tests only.

vLLM cannot run here (no GPU; it is not installed), so the tests of the adapter's plumbing
(engine arguments, batch sizing, prompts, failures) put this in ``sys.modules`` as ``vllm``
for the length of one test (the ``fake_vllm`` fixture).  It mirrors the names and call
shapes of vLLM 0.33 (``vllm.SamplingParams``, ``vllm.engine.arg_utils.AsyncEngineArgs``,
``vllm.v1.engine.async_llm.AsyncLLM.from_engine_args`` and its async ``generate``,
``vllm_config.scheduler_config.max_num_seqs``, ``vllm.platforms.current_platform``);
it generates nothing: each answer is a digest of the prompt it was given.  The real engine
is exercised by ``test_vllm_parallel.py::test_tiny_model_through_real_vllm_data_parallel``
on a GPU machine.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import types
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FakeVLLMState:
    """What a test sets (version, GPUs, the engine's max_num_seqs) and what the fake saw."""

    version: str = "0.33.0"
    gpus: int = 8
    max_num_seqs: int = 256
    fail_on: str | None = None
    """A request whose prompt holds this text fails in the engine."""
    engines: list[Any] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    shut_down: int = 0


class SamplingParams:
    def __init__(self, *, temperature: float = 1.0, max_tokens: int = 16, seed=None) -> None:
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed


@dataclass
class AsyncEngineArgs:
    """The fields of vLLM's own that the adapter may pass; any other keyword is a
    TypeError, as with the real dataclass."""

    model: str
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    data_parallel_backend: str = "mp"
    distributed_executor_backend: str | None = None
    dtype: str = "auto"
    trust_remote_code: bool = False
    limit_mm_per_prompt: dict[str, int] | None = None
    disable_log_stats: bool = False
    max_num_seqs: int | None = None


@dataclass
class _Completion:
    text: str
    token_ids: list[int]


@dataclass
class _RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[_Completion]
    finished: bool


def make_modules(state: FakeVLLMState) -> dict[str, types.ModuleType]:
    """The fake ``vllm`` package and its submodules, bound to ``state``."""

    class AsyncLLM:
        def __init__(self, args: AsyncEngineArgs) -> None:
            asyncio.get_running_loop()  # built in the adapter's event loop, like vllm serve's
            self.args = args
            seqs = args.max_num_seqs or state.max_num_seqs
            self.vllm_config = types.SimpleNamespace(
                scheduler_config=types.SimpleNamespace(max_num_seqs=seqs)
            )

        @classmethod
        def from_engine_args(cls, engine_args: AsyncEngineArgs) -> AsyncLLM:
            engine = cls(engine_args)
            state.engines.append(engine)
            return engine

        async def generate(self, prompt: dict[str, Any], sampling_params, request_id: str):
            state.prompts.append(prompt)
            state.params.append(sampling_params)
            state.request_ids.append(request_id)
            state.in_flight += 1
            state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                await asyncio.sleep(0)  # every request of a batch is in flight before any ends
                if state.fail_on and state.fail_on in prompt["prompt"]:
                    raise ValueError(f"the engine refused a prompt holding {state.fail_on!r}")
                digest = hashlib.sha256(prompt["prompt"].encode()).hexdigest()[:8]
                n = sampling_params.max_tokens
                ids = list(range(len(prompt["prompt"].split())))
                yield _RequestOutput(ids, [_Completion(digest[:2], [0])], finished=False)
                yield _RequestOutput(ids, [_Completion(f"answer {digest}", [0] * n)], True)
            finally:
                state.in_flight -= 1

        def shutdown(self) -> None:
            state.shut_down += 1

    platform = types.SimpleNamespace(device_count=lambda: state.gpus)
    mods = {
        name: types.ModuleType(name)
        for name in (
            "vllm",
            "vllm.platforms",
            "vllm.engine",
            "vllm.engine.arg_utils",
            "vllm.v1",
            "vllm.v1.engine",
            "vllm.v1.engine.async_llm",
        )
    }
    mods["vllm"].__version__ = state.version
    mods["vllm"].__path__ = []  # a package, so that its submodules import
    mods["vllm"].SamplingParams = SamplingParams
    mods["vllm.platforms"].current_platform = platform
    mods["vllm.engine.arg_utils"].AsyncEngineArgs = AsyncEngineArgs
    mods["vllm.v1.engine.async_llm"].AsyncLLM = AsyncLLM
    for name, mod in mods.items():
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(mods[parent], child, mod)
    return mods


def install(monkeypatch, state: FakeVLLMState) -> FakeVLLMState:
    """Put the fake in ``sys.modules`` until the test ends (``monkeypatch`` undoes it)."""
    for name in [n for n in sys.modules if n == "vllm" or n.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    for name, mod in make_modules(state).items():
        monkeypatch.setitem(sys.modules, name, mod)
    return state


__all__ = ["AsyncEngineArgs", "FakeVLLMState", "SamplingParams", "install"]
