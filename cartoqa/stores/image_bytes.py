"""Whether image bytes are whole, read from their own structure.

PIL decodes a cut-short image without complaint once anything in the process has set
``PIL.ImageFile.LOAD_TRUNCATED_IMAGES`` (``lmms_eval`` sets it when imported), so a decode
alone cannot tell a whole image from a truncated one.  ``cut_short`` reads the container
itself: every PNG chunk present with its CRC up to ``IEND``; a JPEG ending in its EOI
marker; a WebP whose RIFF size is the file's.  The callers decode with PIL as well.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["cut_short"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png(data: bytes) -> str | None:
    at = len(PNG_SIGNATURE)
    while True:
        if at + 12 > len(data):
            return f"the PNG ends inside a chunk header at byte {at} of {len(data)}"
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        end = at + 12 + length
        if end > len(data):
            return f"the PNG's {kind!r} chunk needs {end} bytes; the file has {len(data)}"
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(data[at + 4 : end - 4]) != crc:
            return f"the PNG's {kind!r} chunk at byte {at} fails its CRC"
        if kind == b"IEND":
            return None
        at = end


def cut_short(data: bytes) -> str | None:
    """What is missing or damaged in ``data`` (a PNG, JPEG or WebP), or None when its
    container is whole; formats not named here are left to the decoder (None)."""
    if data.startswith(PNG_SIGNATURE):
        return _png(data)
    if data.startswith(b"\xff\xd8"):
        return None if data.rstrip(b"\x00").endswith(b"\xff\xd9") else "the JPEG has no end marker"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        (size,) = struct.unpack("<I", data[4:8])
        return None if size + 8 <= len(data) else "the WebP is shorter than its RIFF size"
    return None
