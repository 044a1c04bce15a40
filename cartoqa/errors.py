"""The few exception classes cartoqa raises.

Every message names the bad value and says how to fix it.  Invalid numeric
input to the geodesy core raises plain ``ValueError`` (``CoordinateError`` is
a subclass) so that callers can catch it the usual way.
"""

from __future__ import annotations

__all__ = [
    "CartoqaError",
    "CoordinateError",
    "DatasetError",
    "MissingDependencyError",
    "ModelError",
    "RunStoreError",
]


class CartoqaError(Exception):
    """Base class of cartoqa's own errors."""


class CoordinateError(CartoqaError, ValueError):
    """A coordinate, angle or distance that the geodesy core cannot use."""


class DatasetError(CartoqaError):
    """A dataset folder that is missing, malformed or inconsistent."""


class RunStoreError(CartoqaError):
    """A run store that cannot be opened, read or appended to."""


class ModelError(CartoqaError):
    """A model that cannot be loaded or cannot answer at all (bad spec, refused key, unknown
    model): the run stops, keeping every response already stored.  A failure of one request
    is not this: it is recorded with its sample and the run goes on."""


class MissingDependencyError(CartoqaError, ImportError):
    """An optional dependency is not installed; the message names the install command."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package {package!r}, which is not installed. "
            f"Install it with: pip install 'cartoqa[{extra}]'"
        )
        self.package = package
        self.extra = extra
