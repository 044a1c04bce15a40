"""A writer process for the dataset kill and race tests: N samples, slowly, into a dataset.

Usage: python dataset_writer.py FOLDER N PAUSE_S [--overwrite]
Prints "writing" once the writer holds the folder, and "done" after finish().
"""

import sys
import time

from cartoqa.errors import DatasetError
from cartoqa.records import NumberTruth, Prompt, Provenance, Sample
from cartoqa.stores import DatasetWriter


def _png(n: int) -> bytes:
    """A tiny PNG that differs by ``n`` (a dataset holds only images that decode)."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (n % 256, 0, 0)).save(buf, "PNG")
    return buf.getvalue()


def main() -> None:
    folder, n, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    try:
        writer = DatasetWriter(folder, name=f"w{n}", overwrite="--overwrite" in sys.argv)
    except DatasetError as exc:
        print(f"refused: {exc}", flush=True)
        sys.exit(2)
    print("writing", flush=True)
    with writer:
        rel = writer.add_image("map.png", _png(n))
        for i in range(n):
            writer.add(
                Sample(
                    id=f"s-{i:05d}",
                    task="distance",
                    prompt=Prompt(text=f"question {i} of {n}", images=[rel] if i == 0 else []),
                    ground_truth=NumberTruth(value=float(i), unit="km"),
                    provenance=Provenance(generator="dataset_writer", seed=n),
                )
            )
            time.sleep(pause)
        writer.finish(seeds=[n])
    print("done", flush=True)


if __name__ == "__main__":
    main()
