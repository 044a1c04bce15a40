"""A build's work in worker processes: the worker, what it is given, and the local pool.

``cartoqa build --workers N`` splits the map tasks' work two ways, both fixed by the
seed and not by N, so the bytes do not depend on N:

- sampling by view group (``build_groups.GroupShard``: the tasks that share views, sampled by one
  ``ViewSampler`` seeded from the build's seed and the group): one worker samples one group
  whole (a sampler's stream is sequential, so one group cannot be split);
- rendering by contiguous chunks of the merged list of accepted maps, one chunk a worker.

The parent merges the results in the order a single process makes them and writes them with
its one ``DatasetWriter`` (manifest last).  A ``BuildWorker`` opens its own ``MapEngine``
(database connection, Mapnik maps) and road labels once per process, and a browser per
chunk it renders; the same class serves this module's process pool and the Ray actors of
``cartoqa.tasks.build_ray``.  The database is the parent's (its private cluster, started
before any worker, or the DSN given); the tile and road-graph caches are shared on disk.

A worker process that dies (killed, out of memory) breaks the pool: the build stops with
``WorkerLostError`` (``BuildError`` to the caller), the other workers are ended, and no dataset is
written.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cartoqa.errors import CartoqaError

from .build_groups import GroupResult, GroupShard, sample_group

if TYPE_CHECKING:
    from maps import MapEngine, View
    from maps.extracts import Extract

__all__ = ["BuildWorker", "EngineSpec", "LocalPool", "Pool", "WorkerLostError", "chunks"]

log = logging.getLogger(__name__)


class WorkerLostError(CartoqaError):
    """A worker process or Ray actor died during a build; nothing was written."""


@dataclass(frozen=True)
class EngineSpec:
    """How a worker opens the parent's map engine (picklable: sent to each worker)."""

    extract: Extract
    carto_files: Path | None
    cache: Path | None
    dsn: str | None
    """The server given with --dsn (every worker uses it), or None."""
    parent_dsn: str
    """The parent's database server (its private cluster): used where it answers."""
    metatile: int
    style_key: str
    """The parent's prepared style (its folder's name): a worker must prepare the same."""

    @classmethod
    def of(
        cls,
        engine: MapEngine,
        *,
        carto_files: Path | None,
        cache: Path | None,
        dsn: str | None,
    ) -> EngineSpec:
        from cartoqa.settings import cache_dir, carto_files_dir, pg_dsn

        c = engine.database.connection
        return cls(
            extract=engine.extract,
            carto_files=carto_files or carto_files_dir(),
            cache=cache or cache_dir(),
            dsn=dsn or pg_dsn(),
            parent_dsn=f"host={c.host} port={c.port} user={c.user}",
            metatile=engine.tiles.metatile,
            style_key=engine.style.folder.name,
        )

    def open(self) -> MapEngine:
        """The engine in this process: the parent's database where it answers (the same
        machine), else this node's own private cluster (a Ray node elsewhere)."""
        from maps import MapEngine
        from maps.database import _parse_dsn, database_answers

        dsn = self.dsn
        if dsn is None and database_answers(_parse_dsn(self.parent_dsn, "postgres")) is None:
            dsn = self.parent_dsn
        engine = MapEngine(
            self.extract,
            carto_files=self.carto_files,
            cache=self.cache,
            dsn=dsn,
            metatile=self.metatile,
        )
        if engine.style.folder.name != self.style_key:
            raise CartoqaError(
                f"a build worker prepared the style {engine.style.folder.name}, not the "
                f"parent's {self.style_key}: give build_dataset the carto_files and cache the "
                "engine was made with (or set CARTOQA_CARTO_FILES and CARTOQA_CACHE)"
            )
        return engine


class BuildWorker:
    """One worker: samples view groups and renders chunks of views with its own engine,
    opened on first use and kept for the worker's life."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self._opened: tuple[Any, Any, Any] | None = None

    def _open(self) -> tuple[Any, Any, Any]:
        if self._opened is None:
            from maps.labels import RoadLabels
            from maps.roads import load_road_graph

            engine = self.spec.open()
            roads = load_road_graph(engine.extract, cache=self.spec.cache)
            self._opened = (engine, roads, RoadLabels(engine))
        return self._opened

    def sample(self, shard: GroupShard) -> GroupResult:
        engine, roads, labels = self._open()
        return sample_group(shard, roads, labels, engine.extract)

    def render(self, views: Sequence[View]) -> list[bytes]:
        """The PNGs of ``views``, in order (one browser for the chunk)."""
        engine, _, _ = self._open()
        return [shot.png for shot in engine.render_many(list(views), progress=False)]


def chunks(items: Sequence[Any], n: int) -> list[list[Any]]:
    """``items`` in at most ``n`` contiguous runs of nearly equal length, in order."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    out, at = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(list(items[at : at + step]))
        at += step
    return out


class Pool(Protocol):
    size: int
    retried: list[str]

    def sample(
        self,
        shards: Sequence[GroupShard],
        *,
        on_done: Callable[[GroupShard, GroupResult], None] | None = None,
    ) -> list[GroupResult]: ...

    def render(self, views: Sequence[View]) -> list[bytes]: ...


# the process's worker (made by the pool's initializer, once per process)
_WORKER: BuildWorker | None = None


def _start(spec: EngineSpec) -> None:
    global _WORKER
    _WORKER = BuildWorker(spec)


def _sample(shard: GroupShard) -> GroupResult:
    assert _WORKER is not None
    return _WORKER.sample(shard)


def _render(views: list[View]) -> list[bytes]:
    assert _WORKER is not None
    return _WORKER.render(views)


class LocalPool:
    """``size`` worker processes on this machine (spawned: Mapnik and Chromium do not
    survive a fork)."""

    def __init__(self, spec: EngineSpec, size: int) -> None:
        self.size = size
        self.retried: list[str] = []
        self._procs: dict[int, Any] = {}  # pid -> Process, kept to say which died
        self._pool = ProcessPoolExecutor(
            max_workers=size,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(spec,),
        )

    def sample(
        self,
        shards: Sequence[GroupShard],
        *,
        on_done: Callable[[GroupShard, GroupResult], None] | None = None,
    ) -> list[GroupResult]:
        futures = [self._pool.submit(_sample, s) for s in shards]
        self._procs |= getattr(self._pool, "_processes", None) or {}
        out = []
        for shard, future in zip(shards, futures, strict=True):
            out.append(self._result(future, f"sampling {'+'.join(shard.members)}"))
            if on_done:
                on_done(shard, out[-1])
        return out

    def render(self, views: Sequence[View]) -> list[bytes]:
        parts = chunks(views, self.size)
        futures = [self._pool.submit(_render, part) for part in parts]
        self._procs |= getattr(self._pool, "_processes", None) or {}
        out: list[bytes] = []
        for part, future in zip(parts, futures, strict=True):
            out += self._result(future, f"rendering {part[0].id} to {part[-1].id}")
        return out

    def _result(self, future: Future, what: str) -> Any:
        try:
            return future.result()
        except BrokenProcessPool:
            raise WorkerLostError(
                f"a build worker process died while {what} ({self._deaths()}), so no dataset "
                "was written. Rerun the build; if the machine ran out of memory, use fewer "
                "--workers"
            ) from None

    def _deaths(self) -> str:
        procs = list(self._procs.values())
        for p in procs:
            p.join(timeout=5)  # the pool ends the others: wait for their exit codes
        # the others were ended by the pool (SIGTERM, -15) after the first died
        dead = [
            f"pid {p.pid} "
            + (f"killed by signal {-p.exitcode}" if p.exitcode < 0 else f"exit {p.exitcode}")
            for p in procs
            if p.exitcode not in (None, 0, -15)
        ]
        return ", ".join(dead) or "terminated abruptly"

    def close(self, *, failed: bool) -> None:
        if not failed:
            self._pool.shutdown(wait=True)
            return
        # a failure or Ctrl-C: end the workers now rather than let them finish their shards
        procs = list(self._procs.values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=10)
