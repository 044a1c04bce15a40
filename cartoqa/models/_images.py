"""Image files as the APIs want them: bytes, a media type, base64 data URIs."""

from __future__ import annotations

import base64
from pathlib import Path

from cartoqa.errors import ModelError

__all__ = ["data_uri", "image_bytes"]

_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF8": "image/gif",
    b"RIFF": "image/webp",
}


def image_bytes(path: Path) -> tuple[bytes, str]:
    """The file's bytes and media type (PNG, JPEG, GIF or WebP, told by content)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelError(
            f"cannot read image {path}: {exc.strerror}; is the dataset complete?"
        ) from None
    for magic, media in _MAGIC.items():
        if data.startswith(magic):
            return data, media
    raise ModelError(f"{path} is not a PNG, JPEG, GIF or WebP image (first bytes {data[:8]!r})")


def data_uri(path: Path) -> str:
    """``data:image/png;base64,...`` for the file."""
    data, media = image_bytes(path)
    return f"data:{media};base64,{base64.b64encode(data).decode('ascii')}"
