"""Where cartoqa keeps and finds things, read from the environment when asked (never at import).

- CARTOQA_CACHE: tiles, the style copy, cleaned extracts (default ~/.cache/cartoqa).
- CARTOQA_PG_DIR: the private PostgreSQL cluster (default <cache>/postgres; see below).
- CARTOQA_DSN: a PostgreSQL server to use instead of a private cluster.
- CARTOQA_CARTO_FILES: a folder with carto 5.7.0's patterns/ and symbols/shields/
  (default: fetch them from upstream where a network exists, else placeholders).
- CARTOQA_ASSETS: the node_modules folder with the map page's JS and CSS
  (default <checkout>/node_modules).
- CARTOQA_CLIP_CHECKPOINT: a CLIP weights file for the MFS distractors and the
  ``nearest-clip`` baseline (default: none; give one, a hub tag or random weights).
- CARTOQA_CHROMIUM: the Chromium binary (default: chromium-headless-shell, else chromium,
  on PATH).

PostgreSQL refuses to run as root, so as root the cluster runs as the
``postgres`` user and must live where that user can reach it: the default
is then ``/var/tmp/cartoqa-postgres`` (``/root`` is private).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "assets_dir",
    "cache_dir",
    "carto_files_dir",
    "clip_checkpoint",
    "pg_dir",
    "pg_dsn",
    "running_as_root",
]


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def cache_dir() -> Path:
    """The cache root (created on demand)."""
    base = os.environ.get("CARTOQA_CACHE")
    if base:
        path = Path(base).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        path = (Path(xdg) if xdg else Path.home() / ".cache") / "cartoqa"
    path.mkdir(parents=True, exist_ok=True)
    return path


def pg_dir() -> Path:
    """Folder of the private PostgreSQL cluster (data and socket)."""
    env = os.environ.get("CARTOQA_PG_DIR")
    if env:
        return Path(env).expanduser()
    if running_as_root():
        return Path("/var/tmp/cartoqa-postgres")
    return cache_dir() / "postgres"


def pg_dsn() -> str | None:
    """A user-given PostgreSQL connection string, or None for the private cluster."""
    return os.environ.get("CARTOQA_DSN") or None


def carto_files_dir() -> Path | None:
    """The folder with carto's patterns/ and symbols/shields/ that Debian leaves out, if set."""
    env = os.environ.get("CARTOQA_CARTO_FILES")
    return Path(env).expanduser() if env else None


def clip_checkpoint() -> Path | None:
    """The CLIP weights file named by CARTOQA_CLIP_CHECKPOINT, if set."""
    env = os.environ.get("CARTOQA_CLIP_CHECKPOINT")
    return Path(env).expanduser() if env else None


def assets_dir() -> Path:
    """node_modules with Leaflet and the other page assets."""
    env = os.environ.get("CARTOQA_ASSETS")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parent.parent / "node_modules"
