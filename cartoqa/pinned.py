"""The dataset a run started on, pinned: its manifest's hashes, and the image bytes it sends.

A run answers one dataset, the one it loaded, and files every answer under that dataset's
hash.  ``cartoqa build DS --overwrite`` may swap a new dataset into the same folder while
the run is going; then the run must neither send the new maps with the old questions nor
store anything under the old dataset that was not asked from it.  ``PinnedDataset``:

- ``check()`` compares the folder's manifest with the one the run loaded (a ``stat`` each
  time, a read only when the file changed) and raises ``DatasetError`` saying what changed
  and what to do when the questions or the images are no longer the pinned ones.  A rebuild
  that makes the same dataset (the same samples and images) is no change.
- ``pin_images(sample, folder)`` reads each image of a sample once, checks its bytes against
  the pinned manifest's SHA-256, and writes those very bytes to a private copy in
  ``folder``: the request names the copy, so what a model reads (now, or on a retry) is
  what was checked, whatever happens to the dataset folder meanwhile.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from cartoqa.errors import CartoqaError, DatasetError
from cartoqa.records import Sample
from cartoqa.stores import Dataset, Manifest

__all__ = ["PinnedDataset"]

MANIFEST_FILE = "manifest.json"


class PinnedDataset:
    """``dataset`` as it was loaded; ``store`` (the run store's path) is named in messages."""

    def __init__(self, dataset: Dataset, *, store: Path | None = None) -> None:
        self.dataset = dataset
        self.store = store
        self._manifest_path = dataset.path / MANIFEST_FILE
        self._seen: tuple[int, ...] | None = None
        """The manifest file's (device, inode, size, mtime) when it last matched."""
        self._lock = threading.Lock()

    # ------------------------------------------------------------ the manifest

    def check(self, *, force: bool = False) -> None:
        """Raise ``DatasetError`` when the folder no longer holds the pinned dataset."""
        with self._lock:
            try:
                st = os.stat(self._manifest_path)
                key: tuple[int, ...] | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            except OSError:
                key = None
            if key is not None and key == self._seen and not force:
                return
            now = self._read_manifest() if key is not None else None
            change = self._change(now)
            if change is None:
                self._seen = key
                return
        raise DatasetError(self._message(now, change))

    def _read_manifest(self) -> Manifest | None:
        try:
            return Manifest.model_validate_json(self._manifest_path.read_bytes())
        except (OSError, ValueError):
            return None

    def _change(self, now: Manifest | None) -> str | None:
        was = self.dataset.manifest
        if now is None:
            return (
                f"it has no {MANIFEST_FILE} that can be read now (the dataset is being "
                "replaced, or was deleted)"
            )
        if now.samples_sha256 != was.samples_sha256:
            return "it was rebuilt or replaced with other questions"
        if now.images_sha256 != was.images_sha256:
            changed = sorted(
                rel
                for rel in set(now.images_sha256) | set(was.images_sha256)
                if now.images_sha256.get(rel) != was.images_sha256.get(rel)
            )
            shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
            return (
                f"it was rebuilt with the same questions but {len(changed)} other image(s) "
                f"({shown}); answers already in this run's store were given on the old maps "
                "and are kept for their samples: to ask every question on the new maps, run "
                "with a new --runs-dir"
            )
        return None

    def _message(self, now: Manifest | None, change: str) -> str:
        was = self.dataset.manifest
        new = now.samples_sha256[:12] + "..." if now is not None else "none"
        where = f" in {self.store}" if self.store else ""
        fix = (
            "Run the same command again to answer the dataset as it is now: it resumes (what "
            "its own run store already holds is skipped)"
            if now is not None
            else "Restore the dataset or build it again, then run the same command again: it "
            "resumes (what its own run store already holds is skipped)"
        )
        return (
            f"the dataset {was.name} ({self.dataset.path}) changed while this run was going: "
            f"the run started on samples sha256 {was.samples_sha256[:12]}..., the folder now "
            f"holds {new}; {change}. Nothing was stored against the wrong dataset: the "
            f"answers of this run so far are kept{where}, under the dataset they were asked "
            f"from. {fix}"
        )

    # ------------------------------------------------------------ the images

    def read_image(self, rel: str) -> tuple[bytes | None, str | None]:
        """(the image's bytes, None), or (None, why they cannot be sent): the bytes are
        checked against the SHA-256 the pinned manifest recorded (a dataset made before
        cartoqa recorded them is not checked)."""
        want = self.dataset.manifest.images_sha256.get(rel)
        try:
            data = self.dataset.image_path(rel).read_bytes()
        except OSError as exc:
            return None, (
                f"cannot read image {rel} of {self.dataset.path}: {exc.strerror}; restore it "
                "from the original dataset or build the dataset again, then run again"
            )
        if want is not None:
            got = hashlib.sha256(data).hexdigest()
            if got != want:
                return None, (
                    f"image {rel} of {self.dataset.path} is not the image this sample was made "
                    f"with (sha256 {got[:12]}..., the manifest says {want[:12]}...): it was "
                    "replaced or changed after the dataset was made. Restore the original file "
                    "(or build the dataset again), then run the same command again to answer "
                    "this sample; not sent"
                )
        return data, None

    def pin_images(self, sample: Sample, folder: Path) -> tuple[tuple[Path, ...], str | None]:
        """The sample's images as private copies in ``folder`` (made here) of the bytes
        checked, or ((), why not).  An image that does not match is first put down to the
        dataset having changed (``check`` raises ``DatasetError``), else to that one file."""
        paths: list[Path] = []
        for i, rel in enumerate(sample.prompt.images):
            data, problem = self.read_image(rel)
            if problem is not None:
                self.check(force=True)  # the whole dataset replaced: stop, store nothing
                return (), problem
            assert data is not None
            path = folder / f"{i}-{Path(rel).name}"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            except OSError as exc:
                raise CartoqaError(
                    f"cannot write the copy of image {rel} that this run sends, in {folder}: "
                    f"{exc.strerror}; free some space there (or point TMPDIR at a folder with "
                    "room), then run the same command again: it resumes"
                ) from None
            paths.append(path)
        return tuple(paths), None
