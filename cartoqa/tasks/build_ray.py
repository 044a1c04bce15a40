"""A build's workers as Ray actors (``cartoqa build --ray auto|ADDRESS``; the ``ray`` extra).

The same shards as the local pool (``cartoqa.tasks.build_shards``), each run by a
``BuildWorker`` actor that opens its engine (database, Mapnik maps, road labels) once, and
the results merged in the same order, so the bytes equal a single-process build's.

- ``auto`` joins the Ray cluster this machine belongs to (``RAY_ADDRESS`` or a running
  ``ray start``) or else starts a local one; an address (``HOST:PORT``, ``ray://...``) joins
  that cluster.  Ray is shut down after the build only when the build started it.
- One actor per CPU of the cluster (one CPU each), or ``workers`` actors.
- The database: the one given with --dsn on every node; else the parent's private cluster on
  its own machine and, on other nodes, each node's own private cluster (imported there
  once).  The extract, carto files and cache are read at the same paths on every node
  (a shared file system, or the same layout on each); the tile cache is per node.
- An actor that dies (``RayActorError``: killed, its node lost) has its shard run again
  once on a new actor (the same shard gives the same bytes); a shard whose second actor
  dies too fails the build (``WorkerLostError``): no dataset is written.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cartoqa.errors import CartoqaError, MissingDependencyError

from .build_groups import GroupResult, GroupShard
from .build_shards import BuildWorker, EngineSpec, WorkerLostError, chunks

if TYPE_CHECKING:
    from maps import View

__all__ = ["ACTOR_PREFIX", "RayPool", "connect", "import_ray"]

log = logging.getLogger(__name__)

#: the names of a build's actors start with this (``ray.util.list_named_actors``)
ACTOR_PREFIX = "cartoqa-build-"
#: times a shard is run on a new actor after its actor died
RETRIES = 1


def import_ray() -> Any:
    """The ``ray`` module, or ``MissingDependencyError`` naming the extra."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray", "cartoqa build --ray") from None
    return ray


def connect(address: str) -> bool:
    """Join (or, for "auto" with no cluster about, start) Ray; True when this call started or
    joined it (and so should shut it down), False when Ray was running here already."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    try:
        if address == "auto":
            ray.init(include_dashboard=False, logging_level=logging.WARNING)
        else:
            ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        why = " ".join(str(exc).split())[:300]
        raise CartoqaError(
            f"--ray {address}: cannot join a Ray cluster there ({why}); "
            "start one with 'ray start --head' and give its address, or use --ray auto"
        ) from None
    return True


class RayPool:
    """``size`` ``BuildWorker`` actors (one per CPU of the cluster when None)."""

    def __init__(self, spec: EngineSpec, *, address: str, size: int | None) -> None:
        self.ray = import_ray()
        self._started = connect(address)
        self.spec = spec
        self.retried: list[str] = []
        self.actors: list[Any] = []
        self._name = f"{ACTOR_PREFIX}{uuid.uuid4().hex[:8]}-"
        self._made = 0
        try:
            if size is None:
                size = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
            self.size = size
            self._actor_class = self.ray.remote(num_cpus=1, max_restarts=0)(BuildWorker)
            self.actors = [self._new_actor() for _ in range(size)]
        except BaseException:
            self.close(failed=True)
            raise

    def _new_actor(self) -> Any:
        self._made += 1
        return self._actor_class.options(name=f"{self._name}{self._made}").remote(self.spec)

    def sample(
        self,
        shards: Sequence[GroupShard],
        *,
        on_done: Callable[[GroupShard, GroupResult], None] | None = None,
    ) -> list[GroupResult]:
        out = self._run("sample", list(shards), [f"sampling {'+'.join(s.members)}" for s in shards])
        if on_done:
            for shard, result in zip(shards, out, strict=True):
                on_done(shard, result)
        return out

    def render(self, views: Sequence[View]) -> list[bytes]:
        parts = chunks(views, self.size)
        what = [f"rendering {p[0].id} to {p[-1].id}" for p in parts]
        return [png for part in self._run("render", parts, what) for png in part]

    def _run(self, method: str, items: list[Any], what: list[str]) -> list[Any]:
        """Each item through ``method`` on a free actor; results in the items' order."""
        from ray.exceptions import RayActorError

        ray = self.ray
        results: list[Any] = [None] * len(items)
        tries = [0] * len(items)
        todo = list(range(len(items)))
        idle = list(self.actors)
        running: dict[Any, tuple[int, Any]] = {}
        while todo or running:
            while todo and idle:
                i, actor = todo.pop(0), idle.pop(0)
                running[getattr(actor, method).remote(items[i])] = (i, actor)
            (ref,), _ = ray.wait(list(running), num_returns=1)
            i, actor = running.pop(ref)
            try:
                results[i] = ray.get(ref)
            except RayActorError as exc:
                why = " ".join(str(exc).split())[:200]
                if tries[i] >= RETRIES:
                    raise WorkerLostError(
                        f"a Ray actor died while {what[i]}, and again on a new actor ({why}), "
                        "so no dataset was written. Check the Ray nodes (memory, 'ray status') "
                        "and rerun"
                    ) from None
                tries[i] += 1
                self.retried.append(f"{what[i]}: actor died ({why}); run again on a new actor")
                log.warning("a Ray actor died while %s; running it again on a new actor", what[i])
                new = self._new_actor()
                self.actors[self.actors.index(actor)] = new
                idle.append(new)
                todo.insert(0, i)
                continue
            idle.append(actor)
        return results

    def close(self, *, failed: bool) -> None:
        for actor in self.actors:
            with contextlib.suppress(Exception):  # an actor already gone
                self.ray.kill(actor)
        if self._started:
            self.ray.shutdown()
