"""cartoqa: a benchmark suite for map question answering.

Subpackages: ``cartoqa.geodesy`` (the shared geodesy core), ``cartoqa.records``
(samples and run records), ``cartoqa.stores`` (dataset and run stores) and
``cartoqa.cli`` (the ``cartoqa`` command).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cartoqa")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
