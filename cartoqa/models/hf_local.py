"""``hf:MODEL``: transformers image-text-to-text models on the local CPU or GPU.

Any model ``AutoModelForImageTextToText`` loads with a processor that has a
chat template: Qwen2/2.5-VL, LLaVA(-OneVision), InternVL (HF format), Llama
3.2 Vision, SmolVLM, Gemma 3.  Requests are batched (left padding), images
go through the model's own processor, and each response reports how many
image tokens its prompt held.  Needs ``pip install 'cartoqa[local]'``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cartoqa.errors import MissingDependencyError, ModelError

from ._types import Request, Response

__all__ = ["HFModel"]

log = logging.getLogger(__name__)


def _messages(request: Request) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": [{"type": "text", "text": request.system}]})
    content: list[dict[str, Any]] = [{"type": "image"} for _ in request.images]
    content.append({"type": "text", "text": request.text})
    messages.append({"role": "user", "content": content})
    return messages


class HFModel:
    """A transformers vision-language model, batched."""

    thread_safe = False

    def __init__(
        self,
        model_id: str,
        *,
        dtype: str = "auto",
        device_map: str | None = None,
        batch_size: int = 4,
        trust_remote_code: bool = False,
    ) -> None:
        try:
            import torch
            import transformers
        except ImportError:
            raise MissingDependencyError("transformers", "local", "the hf adapter") from None
        if batch_size < 1:
            raise ModelError(f"batch_size={batch_size} must be at least 1")
        self.spec = f"hf:{model_id}"
        self.batch_size = batch_size
        self._torch = torch
        if device_map is None:
            device_map = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.processor = transformers.AutoProcessor.from_pretrained(
                model_id, trust_remote_code=trust_remote_code
            )
            if not isinstance(self.processor, transformers.ProcessorMixin):
                # AutoProcessor falls back to the bare tokenizer when it finds no processor: the
                # images would be dropped without a word and the model would answer blind
                raise ModelError(
                    f"{model_id!r} loaded a {type(self.processor).__name__}, not a multimodal "
                    "processor: images would never reach the model. Is it a vision-language model "
                    "with its processor files (processor_config.json / preprocessor_config.json)?"
                )
            # one device: load and move (no accelerate needed); "auto" and friends spread a big
            # model over the GPUs through accelerate
            single = device_map == "cpu" or device_map.startswith("cuda")
            self.model = transformers.AutoModelForImageTextToText.from_pretrained(
                model_id,
                dtype=dtype,
                device_map=None if single else device_map,
                trust_remote_code=trust_remote_code,
            ).eval()
            if single:
                self.model.to(device_map)
        except ImportError as exc:  # accelerate for device_map="auto"
            raise ModelError(f"{exc} (or pass --device-map cpu / cuda)") from None
        except OSError as exc:
            raise ModelError(
                f"cannot load {model_id!r}: {str(exc).splitlines()[0][:300]} (give a local folder, "
                "or a hub id with network access or a filled Hugging Face cache)"
            ) from None
        tokenizer = self.processor.tokenizer
        tokenizer.padding_side = "left"
        self._pad_id = tokenizer.pad_token_id
        if self._pad_id is None:
            self._pad_id = tokenizer.eos_token_id
        self._image_token_id = next(
            (
                v
                for v in (
                    getattr(self.model.config, "image_token_id", None),
                    getattr(self.model.config, "image_token_index", None),
                    getattr(self.processor, "image_token_id", None),
                )
                if isinstance(v, int)
            ),
            None,
        )
        log.info("%s on %s, dtype %s", model_id, self.model.device, self.model.dtype)

    @property
    def device(self) -> str:
        return str(self.model.device)

    def _run(self, requests: Sequence[Request]) -> list[Response]:
        from PIL import Image

        torch = self._torch
        t0 = time.perf_counter()
        texts = [
            self.processor.apply_chat_template(
                _messages(r), tokenize=False, add_generation_prompt=True
            )
            for r in requests
        ]
        images = [[Image.open(Path(p)).convert("RGB") for p in r.images] for r in requests]
        kwargs: dict[str, Any] = {"text": texts, "padding": True, "return_tensors": "pt"}
        if any(images):
            kwargs["images"] = images
        inputs = self.processor(**kwargs).to(self.model.device)
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        s = requests[0].settings
        gen: dict[str, Any] = {"max_new_tokens": s.max_tokens, "pad_token_id": self._pad_id}
        if s.temperature > 0:
            gen.update(do_sample=True, temperature=s.temperature)
            if s.seed is not None:
                torch.manual_seed(s.seed)
        else:
            gen["do_sample"] = False
        with torch.inference_mode():
            out = self.model.generate(**inputs, **gen)
        prompt_len = inputs["input_ids"].shape[1]
        new = out[:, prompt_len:]
        decoded = self.processor.batch_decode(new, skip_special_tokens=True)
        latency = time.perf_counter() - t0
        eos = self.model.generation_config.eos_token_id
        stop = set(eos if isinstance(eos, list) else [eos]) | {self._pad_id}
        responses = []
        for i, text in enumerate(decoded):
            row = new[i].tolist()
            n_out = next((j + 1 for j, t in enumerate(row) if t in stop), len(row))
            n_img = None
            if self._image_token_id is not None:
                n_img = int((inputs["input_ids"][i] == self._image_token_id).sum())
            responses.append(
                Response(
                    text=text,
                    latency_s=latency,
                    input_tokens=int(inputs["attention_mask"][i].sum()),
                    output_tokens=n_out,
                    image_tokens=n_img,
                )
            )
        return responses

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        settings = {r.settings for r in requests}
        if len(settings) > 1:  # one generate call takes one set of settings
            return [resp for r in requests for resp in self.generate([r])]
        try:
            return self._run(requests)
        except ModelError:
            raise
        except Exception as exc:  # out of memory, an image the processor refuses...
            if len(requests) > 1:
                log.warning("batch of %d failed (%s); trying one at a time", len(requests), exc)
                self._free()
                return [resp for r in requests for resp in self.generate([r])]
            self._free()
            return [Response(text=None, error=f"{type(exc).__name__}: {str(exc)[:300]}")]

    def _free(self) -> None:
        if self._torch.cuda.is_available():
            self._torch.cuda.empty_cache()

    def close(self) -> None:
        del self.model
        self._free()
