"""Contact sheets of the legend: every image of a category with its name and tag, so that a
person can check the catalogue at a glance (issue 16, item 7).

    contact_sheet(entries, legend.images, "symbol", Path("docs/legend-symbol.png"))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .catalogue import CatalogueEntry

__all__ = ["contact_sheet"]

ATTRIBUTION = "© OpenStreetMap contributors"


def contact_sheet(
    entries: Sequence[CatalogueEntry],
    images: Mapping[str, Path],
    category: str,
    out: Path,
    *,
    columns: int = 10,
    cell: int = 120,
) -> int:
    """Write the sheet of ``category``'s images (sorted by tag), each captioned with its
    preset name and tag; returns how many it shows."""
    from PIL import Image, ImageDraw, ImageFont

    mine = [e for e in entries if e.category == category and f"{category}:{e.key}" in images]
    mine.sort(key=lambda e: e.key)
    font = ImageFont.load_default()
    caption = 26
    rows = max(1, -(-len(mine) // columns))
    sheet = Image.new("RGB", (columns * cell, rows * (cell + caption) + 20), "white")
    d = ImageDraw.Draw(sheet)
    d.text((4, 4), f"cartoqa legend: {category} ({len(mine)})  ·  {ATTRIBUTION}", fill="black")
    for n, e in enumerate(mine):
        x, y = (n % columns) * cell, 20 + (n // columns) * (cell + caption)
        im = Image.open(images[f"{category}:{e.key}"]).convert("RGB")
        im.thumbnail((cell, cell))
        sheet.paste(im, (x, y))
        d.text((x + 2, y + cell), e.name[:22], fill="black", font=font)
        d.text((x + 2, y + cell + 12), e.key[:24], fill=(90, 90, 90), font=font)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    return len(mine)
