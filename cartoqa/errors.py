"""The few exception classes cartoqa raises, each by what the user does about it.

Every message names the bad value and says how to fix it.  Invalid numeric
input to the geodesy core raises plain ``ValueError`` (``CoordinateError`` is
a subclass) so that callers can catch it the usual way.

A subclass exists only where code catches it apart from its base to answer
differently: ``DatabaseError`` (a render batch stops at once on it),
``RouteError`` (its ``reason`` counts a rejected candidate), ``StoreBusyError``
(the review tool answers 503, try again) and ``StaleEditError`` (it shows the
decision that came first).  ``cartoqa.tasks.build.BuildError`` (a build that
made nothing of a task; ``cartoqa build`` prints the report it carries) stays
beside the build.

Exceptions that never reach a user stay beside the code that raises and catches
them, as control flow: ``cartoqa.stores._locks.LockBusy``,
``cartoqa.stores.cache_files.BadCacheEntry``, ``cartoqa.tasks.views.Reject``,
``cartoqa.models._api.MalformedReplyError`` and ``TryTimeoutError``,
``cartoqa.tasks.build_shards.WorkerLostError`` (a build worker or Ray actor died: the build
answers with ``BuildError``),
``annotations.label_studio._RefusedError``, and
``evaluators.errors.AnswerParseError`` (an answer that holds no value: scored,
not raised to the user).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CartoqaError",
    "CoordinateError",
    "DatabaseError",
    "DatasetError",
    "MapDataError",
    "MissingDependencyError",
    "ModelError",
    "RenderStackError",
    "ReviewError",
    "RouteError",
    "RunStoreError",
    "StaleEditError",
    "StoreBusyError",
]


class CartoqaError(Exception):
    """Base class of cartoqa's own errors: catch it to report any of them (the CLI prints
    the message, which says what to do, and exits non-zero)."""


class CoordinateError(CartoqaError, ValueError):
    """A coordinate, angle or distance that the geodesy core cannot use: give the value the
    message asks for."""


class DatasetError(CartoqaError):
    """A dataset folder that is missing, malformed or inconsistent: point at the right
    folder, or build the dataset again."""


class RunStoreError(CartoqaError):
    """A run store that cannot be opened, read or appended to: free or fix the file the
    message names (another run holding it, a full disk, a run of another dataset)."""


class ModelError(CartoqaError):
    """A model that cannot be loaded or cannot answer at all (bad spec, refused key, unknown
    model, CLIP weights that are missing or do not load): the run stops, keeping every
    response already stored.  Fix the model spec, key, weights or install the message
    names, then run again.  A failure of one request is not this: it is recorded with its
    sample and the run goes on."""


class MissingDependencyError(CartoqaError, ImportError):
    """An optional dependency is not installed; the message names the install command."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package {package!r}, which is not installed. "
            f"Install it with: pip install 'cartoqa[{extra}]'"
        )
        self.package = package
        self.extra = extra


class RenderStackError(CartoqaError):
    """A part of the map-rendering stack is missing, broken or failed: PostgreSQL and
    PostGIS, osm2pgsql, Mapnik, the openstreetmap-carto style, the tile cache, the page
    assets (npm packages), Chromium, the symbols' schema and legend, or the colour-coded
    renders that read what a map shows.  Install, start or repair the part the message
    names (``bash scripts/setup.sh main``, ``npm ci``, ``CARTOQA_CHROMIUM``), then rerun."""


class DatabaseError(RenderStackError):
    """The PostgreSQL database could not be started, reached or filled, or stopped
    answering: start it (rerun; cartoqa's private cluster starts again, ``cartoqa maps
    db`` shows it) or fix the server given with ``--dsn``.  A render batch stops at once
    on it, where other failures are reported with their view."""


class MapDataError(CartoqaError):
    """The OSM extract, or what was asked of it, cannot give what was asked: an extract
    that is missing, unreadable, empty or needs repair, one with no drivable roads, a view
    off the map or outside the extract, a route that cannot be made.  Give another
    extract, place, box or view, as the message says."""


class RouteError(MapDataError):
    """No usable route: unreachable, an unnamed road on it, origin equal to destination."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        """A short code to count rejections by: unreachable, unnamed_road, same_node."""


class ReviewError(CartoqaError):
    """The review tool refused what was asked: a correction form that does not make a
    truth, a decision that cannot be stored as given (verdict, truth, reviewer, store), or a
    server that cannot start or act.  Fix the field, decision or file the message names."""


class StoreBusyError(ReviewError):
    """The review store is held by another process (a long write, a lock) past the busy
    timeout: try again."""


class StaleEditError(ReviewError):
    """A decision made on a version of the sample that another has since changed: look at
    the sample again (``latest`` is the decision that came in first) and decide again."""

    def __init__(self, message: str, latest: Any) -> None:
        super().__init__(message)
        self.latest = latest
        """The ``annotations.decisions.Decision`` that came in since."""
