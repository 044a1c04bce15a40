"""Map tiles: aligned metatiles rendered by Mapnik, sliced into 256 px PNG tiles, cached on disk.

Rendering 8 × 8 tiles at once (as renderd does) avoids labels cut or doubled
at tile seams and is several times faster than tile by tile.  A rendered
metatile stays in memory (the last ``keep`` of them) and its tiles are cut
and PNG-encoded when they are asked for: a view uses about half of the
tiles of the metatiles it touches, and encoding is a third of the work.
Tiles live at ``<cache>/tiles/<style key>/<extract hash>/<z>/<x>/<y>.png``.
Every metatile is drawn with a ``LabelCollisionDetector`` and the boxes of
what it placed (icons, labels, glyphs) are kept beside its tiles
(``<z>/meta-<mx>-<my>.boxes.json``): the label checks (``maps.labels``,
``maps.feature_pixels``) compare their colour-coded renders with them instead of
drawing the metatile a second time (``placements``); the render stays in memory, and
``keep_tiles`` stores an accepted view's tiles from it, so that one Mapnik render of a
metatile serves its tiles, its boxes and the label checks.
A metatile is rendered under an exclusive file lock, so two processes asking
for the same tiles render them once; files appear atomically (written, then
renamed).

Cached files are checked (issue 27): each tile and boxes file has its SHA-256
beside it (``cartoqa.stores.cache_files``), a tile is handed out only after it
decodes as a 256 px PNG (a freshly encoded one too), and an entry that is cut
short, empty or holds the wrong bytes is dropped with a warning and drawn
again. Temporary files that killed writers left are cleared when a renderer
first opens the folder; a full disk is a ``RenderStackError`` naming the cache.

When Mapnik fails (loading the style or drawing a metatile) the renderer asks
the database whether it still answers: if not, it raises ``DatabaseError``
naming the connection, at once, instead of a ``RenderStackError`` per tile.  A
Mapnik map that failed to load is not counted as made, so no other thread
waits for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from cartoqa.errors import CartoqaError, DatabaseError, RenderStackError
from cartoqa.settings import cache_dir
from cartoqa.stores.cache_files import (
    BadCacheEntry,
    clean_stale_tmp,
    decoded_png,
    png_check,
    read_cache_file,
    write_cache_file,
)

from .database import ExtractDatabase, lost_database
from .projection import TILE_PX, tile_bounds_m
from .style import CartoStyle, load_map

__all__ = ["METATILE", "TileRenderer", "sorted_boxes"]

log = logging.getLogger(__name__)

METATILE = 8
BUFFER_PX = 128  # rendered around the metatile so that labels near its edge are placed whole
MIN_ZOOM, MAX_ZOOM = 0, 20
_CHECK_TILE = png_check((TILE_PX, TILE_PX))
_CLEANED: set[Path] = set()  # tile folders whose stale temporary files this process cleared
_CLEANED_LOCK = threading.Lock()


class TileRenderer:
    """Tiles of one extract in one style.  ``tile(z, x, y)`` returns PNG bytes.

    ``metatile=1`` renders single tiles (slow; for comparison).  ``use_cache``
    False renders every request afresh (the naive baseline).  Thread-safe:
    up to ``workers`` metatiles render at once, each with its own Mapnik map
    (Mapnik releases the GIL while it draws); one metatile is never rendered
    twice at once, in this process or another (a file lock per metatile).
    """

    def __init__(
        self,
        style: CartoStyle,
        database: ExtractDatabase,
        *,
        cache: Path | None = None,
        metatile: int = METATILE,
        use_cache: bool = True,
        image_format: str = "png:z=1",
        workers: int = 1,
        keep: int = 16,
    ) -> None:
        self.style = style
        self.database = database
        self.metatile = metatile
        self.use_cache = use_cache
        self.image_format = image_format
        key = f"{style.folder.name}-m{metatile}-checked"  # tiles with their SHA-256 beside
        self.folder = (cache or cache_dir()) / "tiles" / key / database.extract.sha256[:16]
        if use_cache:
            with _CLEANED_LOCK:
                if self.folder not in _CLEANED:
                    clean_stale_tmp(self.folder)
                    _CLEANED.add(self.folder)
        self.workers = max(1, workers)
        self._free: list[Any] = []  # Mapnik maps not in use (the last given back first)
        self._made = 0  # maps made or being made; at most ``workers``
        self._pool = threading.Condition()  # guards _free and _made
        self._images: OrderedDict[tuple[int, int, int], Any] = OrderedDict()  # rendered metatiles
        self.keep = keep
        self._lock = threading.Lock()  # guards _images and the counters
        self.rendered_metatiles = 0
        self.render_seconds = 0.0
        #: the placement boxes of the metatiles drawn without a cache (``placements``)
        self._last_boxes: dict[tuple[int, int, int], list[Any]] = {}

    def _new_map(self) -> Any:
        size = self.metatile * TILE_PX
        m = load_map(self.style, self.database.connection, size, size)
        m.buffer_size = BUFFER_PX  # type: ignore[attr-defined]
        return m

    def _take_map(self) -> Any:
        """A free Mapnik map, a new one while fewer than ``workers`` exist, else wait for one."""
        with self._pool:
            while not self._free and self._made >= self.workers:
                self._pool.wait()
            if self._free:
                return self._free.pop()
            self._made += 1
        try:
            return self._new_map()
        except Exception as exc:
            with self._pool:  # not made after all: a waiting thread may make one instead
                self._made -= 1
                self._pool.notify()
            raise self._failure(exc, "loading the map style") from None

    def _give_back(self, m: Any) -> None:
        with self._pool:
            self._free.append(m)
            self._pool.notify()

    def _failure(self, exc: Exception, during: str) -> Exception:
        """What to raise for a Mapnik failure: ``DatabaseError`` when the database stopped
        answering, else ``exc`` itself (a ``CartoqaError``) or a ``RenderStackError`` quoting it."""
        if isinstance(exc, DatabaseError):
            return exc
        lost = lost_database(self.database.connection, during=f"{during} for map tiles")
        if lost is not None:
            return lost
        if isinstance(exc, CartoqaError):
            return exc
        return RenderStackError(f"Mapnik failed {during}: {str(exc)[:600]}")

    @staticmethod
    def tiles_for(z: int, x0: float, y0: float, x1: float, y1: float) -> list[tuple[int, int, int]]:
        """The tiles that the pixel box (x0, y0)-(x1, y1) at zoom z touches, row by row."""
        last = 2**z - 1
        return [
            (z, tx, ty)
            for ty in range(max(int(y0 // TILE_PX), 0), min(int(y1 // TILE_PX), last) + 1)
            for tx in range(max(int(x0 // TILE_PX), 0), min(int(x1 // TILE_PX), last) + 1)
        ]

    def warm(self) -> TileRenderer:
        """Load the style into every worker's Mapnik map now, not on the first tiles."""
        maps = [self._take_map() for _ in range(self.workers)]
        for m in maps:
            self._give_back(m)
        return self

    def path(self, z: int, x: int, y: int) -> Path:
        return self.folder / str(z) / str(x) / f"{y}.png"

    @staticmethod
    def check(z: int, x: int, y: int) -> None:
        if not (MIN_ZOOM <= z <= MAX_ZOOM) or not (0 <= x < 2**z and 0 <= y < 2**z):
            raise RenderStackError(
                f"tile {z}/{x}/{y} does not exist (zoom 0-{MAX_ZOOM}, x and y in [0, 2^z))"
            )

    def metatile_of(self, z: int, x: int, y: int) -> tuple[int, int, int]:
        """(z, mx, my): the metatile holding tile (x, y), by its top-left tile."""
        n = min(self.metatile, 2**z)
        return z, x - x % n, y - y % n

    @contextlib.contextmanager
    def _metatile_lock(self, z: int, mx: int, my: int) -> Iterator[None]:
        """Held while a metatile is rendered: by one thread of one process at a time."""
        lock_path = self.folder / str(z) / f"meta-{mx}-{my}.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "a") as lock:
            # each open() is its own holder, so threads of this process exclude each other too
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def tile(self, z: int, x: int, y: int) -> bytes:
        """The PNG bytes of one tile, from the cache or rendered with its metatile."""
        self.check(z, x, y)
        p = self.path(z, x, y)
        if self.use_cache:
            # outside the lock a bad entry is only passed over: a writer may be replacing it
            cached = read_cache_file(p, what="map tile", check=_CHECK_TILE, drop=False)
            if cached is not None:
                return cached
        key = self.metatile_of(z, x, y)
        _, mx, my = key
        if not self.use_cache:
            return self._encode(self._render_image(*key), x - mx, y - my)
        with self._metatile_lock(*key):
            cached = read_cache_file(p, what="map tile", check=_CHECK_TILE)
            if cached is not None:
                return cached
            with self._lock:
                image = self._images.get(key)
                if image is not None:
                    self._images.move_to_end(key)
            if image is None:
                image = self._render_image(*key)
                with self._lock:
                    self._images[key] = image
                    while len(self._images) > self.keep:
                        self._images.popitem(last=False)
            data = self._encode(image, x - mx, y - my)
            self._store(p, data)
            return data

    def boxes_path(self, z: int, mx: int, my: int) -> Path:
        """Where the placement boxes of metatile (z, mx, my) are kept."""
        return self.folder / str(z) / f"meta-{mx}-{my}.boxes.json"

    def placements(
        self, z: int, mx: int, my: int, wanted: Iterable[tuple[int, int]] = ()
    ) -> list[tuple[float, float, float, float]]:
        """The collision boxes (x0, y0, x1, y1, metatile pixels, sorted) of what Mapnik placed
        when it drew metatile (z, mx, my) for its tiles: read from beside the tiles, or drawn
        now (under the metatile's lock), storing the ``wanted`` tiles (x, y) of it on the
        way, so that the view that needs them does not draw the metatile again."""
        p = self.boxes_path(z, mx, my)
        boxes = _read_boxes(p, drop=False) if self.use_cache else None
        if boxes is None:
            key = self.metatile_of(z, mx, my)
            with self._metatile_lock(*key):
                boxes = _read_boxes(p) if self.use_cache else None
                if boxes is None:
                    image = self._render_image(*key)
                    if not self.use_cache:
                        with self._lock:
                            return self._last_boxes.pop(key)
                    with self._lock:
                        self._images[key] = image
                        while len(self._images) > self.keep:
                            self._images.popitem(last=False)
                    for x, y in wanted:
                        if self.metatile_of(z, x, y) == key and not self.path(z, x, y).is_file():
                            self._store(self.path(z, x, y), self._encode(image, x - mx, y - my))
                    boxes = _read_boxes(p)
                    if boxes is None:
                        raise RenderStackError(
                            f"the placement boxes of {z}/{mx}/{my} were not stored"
                        )
        return boxes

    def keep_tiles(self, z: int, wanted: Iterable[tuple[int, int]]) -> int:
        """Store the tiles (x, y) at zoom ``z`` not stored yet whose metatiles are still in
        memory (drawn for their placement boxes, ``placements``), so that a view accepted
        after its label check needs no second render; tiles of metatiles no longer kept are
        left to the render of the view.  Returns how many tiles were stored."""
        if not self.use_cache:
            return 0
        groups: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
        for x, y in wanted:
            groups.setdefault(self.metatile_of(z, x, y), []).append((x, y))
        stored = 0
        for key, todo in groups.items():
            with self._lock:
                image = self._images.get(key)
            if image is None or all(self.path(z, x, y).is_file() for x, y in todo):
                continue
            with self._metatile_lock(*key):
                for x, y in todo:
                    p = self.path(z, x, y)
                    if not p.is_file():
                        self._store(p, self._encode(image, x - key[1], y - key[2]))
                        stored += 1
        return stored

    def make_tiles(self, z: int, wanted: Iterable[tuple[int, int]]) -> None:
        """Render the metatile of these tiles (all in one metatile) once and store each of them.

        For batches that know their tiles in advance: nothing is encoded that
        no view needs, and the metatile is not kept in memory afterwards.
        """
        todo = [(x, y) for x, y in wanted if not self.path(z, x, y).is_file()]
        if not todo:
            return
        key = self.metatile_of(z, *todo[0])
        _, mx, my = key
        if any(self.metatile_of(z, x, y) != key for x, y in todo):
            raise RenderStackError(f"make_tiles: the tiles {todo} are not all in one metatile")
        with self._metatile_lock(*key):
            todo = [(x, y) for x, y in todo if not self.path(z, x, y).is_file()]
            if not todo:
                return
            with self._lock:
                image = self._images.get(key)
            if image is None:
                image = self._render_image(*key)
            for x, y in todo:
                self._store(self.path(z, x, y), self._encode(image, x - mx, y - my))

    def _store(self, p: Path, data: bytes) -> None:
        """Write a cache entry (its SHA-256 beside it); a full or read-only disk is a
        ``RenderStackError`` naming the cache (the temporary file is removed)."""
        try:
            write_cache_file(p, data)
        except OSError as exc:
            raise RenderStackError(
                f"cannot store map tiles in the cache {self.folder}: {exc.strerror} ({p.name}); "
                "free some space there, or point CARTOQA_CACHE at a disk with room"
            ) from None

    def _encode(self, image: Any, i: int, j: int) -> bytes:
        """The PNG of tile (i, j) of a metatile image, checked by decoding it."""
        data: bytes = image.view(i * TILE_PX, j * TILE_PX, TILE_PX, TILE_PX).to_string(
            self.image_format
        )
        try:
            decoded_png(data, size=(TILE_PX, TILE_PX))
        except BadCacheEntry as exc:
            raise RenderStackError(
                f"Mapnik encoded a tile that is not a whole PNG: {exc}"
            ) from None
        return data

    def _render_image(self, z: int, mx: int, my: int) -> Any:
        """Render the metatile whose top-left tile is (mx, my); returns the Mapnik image."""
        import mapnik

        n = min(self.metatile, 2**z)
        size = n * TILE_PX
        t0 = time.perf_counter()
        m = self._take_map()
        try:
            if (m.width, m.height) != (size, size):
                m.resize(size, size)
            m.zoom_to_box(mapnik.Box2d(*tile_bounds_m(z, mx, my, n, n)))
            image = mapnik.Image(size, size)
            detector = mapnik.LabelCollisionDetector(m)
            try:
                mapnik.render_with_detector(m, image, detector)
            except RuntimeError as exc:
                raise self._failure(exc, f"drawing tiles {z}/{mx}/{my}+{n}") from None
        finally:
            self._give_back(m)
        boxes = sorted_boxes(detector.boxes())
        if self.use_cache:
            self._store(self.boxes_path(z, mx, my), json.dumps(boxes).encode())
        else:
            with self._lock:
                self._last_boxes[(z, mx, my)] = boxes
        with self._lock:
            self.render_seconds += time.perf_counter() - t0
            self.rendered_metatiles += 1
        return image


def _check_boxes(data: bytes) -> None:
    boxes = json.loads(data)
    if not isinstance(boxes, list) or not all(
        isinstance(b, list) and len(b) == 4 and all(isinstance(v, int | float) for v in b)
        for b in boxes
    ):
        raise BadCacheEntry("not a list of (x0, y0, x1, y1) boxes")


def _read_boxes(p: Path, *, drop: bool = True) -> list[tuple[float, float, float, float]] | None:
    """The placement boxes kept at ``p``; None when missing or bad (``read_cache_file``)."""
    data = read_cache_file(p, what="placement boxes", check=_check_boxes, drop=drop)
    if data is None:
        return None
    return [(b[0], b[1], b[2], b[3]) for b in json.loads(data)]


def sorted_boxes(found: Iterable[Any]) -> list[tuple[float, float, float, float]]:
    """Mapnik's collision boxes as sorted (x0, y0, x1, y1) tuples rounded to 1/1000 px: the
    detector lists the same boxes in a varying order from one render to the next (seen about
    once in ten renders of one metatile); the set is what counts."""
    return sorted(
        (round(b.minx, 3), round(b.miny, 3), round(b.maxx, 3), round(b.maxy, 3)) for b in found
    )
