"""Tiny, randomly initialised VLMs (Qwen2-VL, LLaVA), built offline, for tests of ``hf``.

No model hub is reachable in CI, so this builds a real transformers
image-text-to-text model from a config (about 0.2 M parameters, two text
layers, a two-layer vision tower) with a BPE tokenizer trained here on
generated text, and saves model, tokenizer, image processor and chat
template to a folder that ``AutoProcessor`` and
``AutoModelForImageTextToText`` load like any hub model.  It writes noise;
it exists so the whole local-inference path (chat template, image
preprocessing, image tokens, batched generation with left padding) runs
for real.  Needs the ``local`` extra (torch, torchvision, transformers).
"""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["IMAGE_PAD", "build_tiny_llava", "build_tiny_qwen2vl"]

IMAGE_PAD = "<|image_pad|>"
_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    IMAGE_PAD,
    "<|vision_end|>",
    "<|video_pad|>",
]


def _chatml_template(image: str) -> str:
    """A ChatML chat template that writes ``image`` for each image item."""
    return (
        "{% for message in messages %}"
        "<|im_start|>{{ message['role'] }}\n"
        "{% if message['content'] is string %}{{ message['content'] }}"
        "{% else %}{% for item in message['content'] %}"
        f"{{% if item['type'] == 'image' %}}{image}"
        "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
        "{% endfor %}{% endif %}<|im_end|>\n"
        "{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


# as Qwen2-VL's own template writes it: each image becomes vision_start, one image_pad (the
# processor widens it to the image's token count) and vision_end
CHAT_TEMPLATE = _chatml_template("<|vision_start|><|image_pad|><|vision_end|>")


_WORDS = (
    "map road street route turn left right straight blue red marker scale metres feet "
    "north south east west park river bank school station answer final distance km the "
    "a of to and is at on in which what how many name names count zoom"
)


def _corpus(seed: int) -> list[str]:
    rng = random.Random(seed)
    words = _WORDS.split()
    lines = []
    for _ in range(400):
        n = rng.randint(4, 14)
        line = " ".join(rng.choice(words) for _ in range(n))
        lines.append(line + f" {rng.randint(0, 9999)}.")
    return lines


def _tokenizer(seed: int, special: list[str] | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    special = special or _SPECIAL

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(seed), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[t for t in special if t not in ("<|endoftext|>", "<|im_end|>")],
        padding_side="left",
        model_max_length=32768,
    )


def _save(folder: Path, model: object, processor: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)  # type: ignore[attr-defined]
    processor.save_pretrained(folder)  # type: ignore[attr-defined]
    return folder


def build_tiny_qwen2vl(folder: str | Path, *, seed: int = 0, max_pixels: int = 448 * 448) -> Path:
    """Build and save a tiny random Qwen2-VL to ``folder``; the same seed gives the same files.

    ``max_pixels`` caps the image size the processor feeds the vision tower
    (Qwen2-VL's default would turn a 1366x768 map into about 1,300 image
    tokens).
    """
    import torch
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
    )

    folder = Path(folder)
    tokenizer = _tokenizer(seed)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in _SPECIAL}
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "rope_parameters": {
                "rope_type": "default",
                "mrope_section": [2, 3, 3],
                "rope_theta": 10000.0,
            },
            "bos_token_id": None,
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 2,
            "embed_dim": 32,
            "num_heads": 2,
            "hidden_size": 64,
            "mlp_ratio": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "in_channels": 3,
        },
        image_token_id=ids[IMAGE_PAD],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    image_processor = Qwen2VLImageProcessor(
        min_pixels=56 * 56, max_pixels=max_pixels, patch_size=14, merge_size=2
    )
    try:
        from transformers import Qwen2VLVideoProcessor

        video_processor = Qwen2VLVideoProcessor()
    except (ImportError, ValueError):  # pragma: no cover - older transformers
        video_processor = None
    processor = Qwen2VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    )
    return _save(folder, model, processor)


LLAVA_IMAGE = "<image>"
LLAVA_CHAT_TEMPLATE = _chatml_template("<image>\n")


def build_tiny_llava(folder: str | Path, *, seed: int = 0) -> Path:
    """Build and save a tiny random LLaVA (CLIP vision tower, Llama text model): every image
    becomes 256 image tokens (224 px, patch 14, the CLS token dropped)."""
    import torch
    from transformers import (
        CLIPImageProcessor,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    folder = Path(folder)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", LLAVA_IMAGE]
    tokenizer = _tokenizer(seed, special)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in special}
    config = LlavaConfig(
        vision_config={
            "model_type": "clip_vision_model",
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": 224,
            "patch_size": 14,
        },
        text_config={
            "model_type": "llama",
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 2048,
            "bos_token_id": None,
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        image_token_index=ids[LLAVA_IMAGE],
        image_seq_length=256,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=LLAVA_CHAT_TEMPLATE,
        image_token=LLAVA_IMAGE,
    )
    return _save(folder, model, processor)
