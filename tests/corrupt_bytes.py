"""Ways to damage a cache file's bytes (shared by the cache-fault tests), and a size reader."""

from __future__ import annotations

import io


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _zero(data: bytes) -> bytes:
    return b""


def _flipped(data: bytes) -> bytes:
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0x5A for b in data[mid : mid + 64]) + data[mid + 64 :]


#: name -> damage: cut in half, emptied, 64 bytes in the middle flipped
CORRUPT = {"truncated": _truncated, "zero-length": _zero, "wrong bytes": _flipped}


def png_size(data: bytes) -> tuple[int, int]:
    """The size of an image once every pixel is decoded."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.load()
        return im.size
