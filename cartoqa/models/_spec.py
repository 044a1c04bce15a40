"""Model spec strings ("openai:gpt-4o", "hf:Qwen/...", "oracle") to models."""

from __future__ import annotations

from typing import Any

from cartoqa.errors import ModelError

from ._api import check_base_url
from ._retry import RetryPolicy
from ._types import Model

__all__ = ["SPEC_FORMS", "load_model", "split_base_url"]

SPEC_FORMS = (
    "openai:MODEL (OPENAI_API_KEY), openai:MODEL@http://HOST:PORT/v1 (any OpenAI-compatible "
    "server), anthropic:MODEL (ANTHROPIC_API_KEY), anthropic:MODEL@http://HOST:PORT (a server "
    "speaking the Anthropic Messages API, without /v1), google:MODEL (GOOGLE_API_KEY), "
    "google:MODEL@http://HOST:PORT (a server speaking the Gemini API), hf:HUB_ID_OR_FOLDER, "
    "vllm:HUB_ID_OR_FOLDER, oracle, ocr (Tesseract), nearest-clip[:PATH|:hub:TAG|:random] "
    "(zero-shot CLIP over the options), random[:SEED], constant:TEXT"
)


def _looks_like_address(text: str) -> bool:
    """Whether the text after the last '@' of a spec is meant as a server address (it has a
    port, a path, a dot or is localhost) rather than part of a model name ("claude@2024")."""
    return any(c in text for c in ":/.") or text.lower().startswith("localhost")


def split_base_url(spec: str, provider: str, rest: str) -> tuple[str, str | None]:
    """(model, base URL or None) from the part of a spec after ``provider:``.

    ``MODEL@URL`` takes a base URL when URL is http:// or https://; an address without
    either (``m@127.0.0.1:8000/v1``) is an error that says to add http://, not a model name.
    """
    name, at, url = rest.rpartition("@")
    if not at or not (url.startswith(("http://", "https://")) or _looks_like_address(url)):
        return rest, None
    if not name:
        raise ModelError(
            f"model spec {spec!r} names no model before '@'; write {provider}:MODEL@{url}"
        )
    return name, check_base_url(url, spec)


def load_model(
    spec: str,
    *,
    retry: RetryPolicy | None = None,
    api_key_env: str | None = None,
    batch_size: int | None = None,
    dtype: str = "auto",
    device_map: str | None = None,
    trust_remote_code: bool = False,
    tensor_parallel: int | None = None,
    data_parallel: int | None = None,
    parallel_backend: str | None = None,
) -> Model:
    """Make the model a spec names; the keyword options go to the adapters that take them.

    ``tensor_parallel``, ``data_parallel`` and ``parallel_backend`` are vLLM's (``vllm:``
    specs only; None leaves vLLM's default): given with another model they are an error."""
    provider, sep, rest = spec.partition(":")
    parallel = {
        "--tensor-parallel": tensor_parallel,
        "--data-parallel": data_parallel,
        "--parallel-backend": parallel_backend,
    }
    given = [f"{flag} {value}" for flag, value in parallel.items() if value is not None]
    if given and provider != "vllm":
        hint = " (hf: spreads one model over GPUs with --device-map auto)" * (provider == "hf")
        raise ModelError(
            f"{', '.join(given)} applies only to vllm:MODEL (vLLM's engines), not to {spec!r}; "
            f"drop it, or run the model as vllm:MODEL{hint}"
        )
    if provider == "oracle" and not sep:
        from .baselines import OracleModel

        return OracleModel()
    if provider == "ocr" and not sep:
        from .ocr import OcrModel

        return OcrModel()
    if provider == "nearest-clip":
        from .nearest_clip import NearestClipModel

        return NearestClipModel(rest)
    if provider == "random":
        from .baselines import RandomModel

        try:
            return RandomModel(int(rest) if rest else 0)
        except ValueError:
            raise ModelError(f"random:{rest} needs an integer seed, e.g. random:7") from None
    if provider == "constant" and sep:
        from .baselines import ConstantModel

        return ConstantModel(rest)
    if not sep or not rest:
        raise ModelError(f"model spec {spec!r} is not one of: {SPEC_FORMS}")
    keys: dict[str, Any] = {"api_key_env": api_key_env} if api_key_env else {}
    if provider in ("openai", "anthropic", "google"):
        name, url = split_base_url(spec, provider, rest)
        if provider == "openai":
            from .openai_api import OpenAIModel

            return OpenAIModel(name, base_url=url, retry=retry, **keys)
        if provider == "anthropic":
            from .anthropic_api import AnthropicModel

            return AnthropicModel(name, base_url=url, retry=retry, **keys)
        from .google_api import GoogleModel

        return GoogleModel(name, base_url=url, retry=retry, **keys)
    if provider == "hf":
        from .hf_local import HFModel

        return HFModel(
            rest,
            dtype=dtype,
            device_map=device_map,
            batch_size=batch_size or 4,
            trust_remote_code=trust_remote_code,
        )
    if provider == "vllm":
        from .vllm_local import VLLMModel

        return VLLMModel(
            rest,
            tensor_parallel=1 if tensor_parallel is None else tensor_parallel,
            data_parallel=1 if data_parallel is None else data_parallel,
            parallel_backend="mp" if parallel_backend is None else parallel_backend,
            batch_size=batch_size,
            dtype=dtype,
            trust_remote_code=trust_remote_code,
        )
    raise ModelError(f"unknown model provider {provider!r} in {spec!r}; use one of: {SPEC_FORMS}")
