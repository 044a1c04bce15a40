#!/usr/bin/env bash
# Set up cartoqa on a Debian 12 machine.
#
#   bash scripts/setup.sh main   Debian packages, npm assets, and a virtual environment (.venv)
#                                with the core install: what `cartoqa demo` and API runs use.
#   bash scripts/setup.sh test   the same plus every extra but `gpu`: local (torch, transformers),
#                                symbols (open_clip), api (anthropic, google-genai), review (fastapi,
#                                uvicorn: the review tool), export (pyarrow),
#                                dev (pytest..., datasets), docs (mkdocs-material, mkdocstrings:
#                                the tests build the documentation site, strict),
#                                and Tesseract (tesseract-ocr, tesseract-ocr-eng) for the `ocr` baseline.
#
# Idempotent: a second run checks what is there and installs nothing new.
# Settings: CARTOQA_VENV (default .venv), PYTHON (default: the newest python3.11+ on PATH),
# CARTOQA_SKIP_APT=1 (skip Debian packages, e.g. on a machine you do not administer).
set -euo pipefail

MODE=${1:-main}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${CARTOQA_VENV:-$ROOT/.venv}

case "$MODE" in
  main) EXTRAS="" ;;
  test) EXTRAS="local,symbols,api,review,export,ray,dev,docs" ;;
  *) echo "setup: unknown mode '$MODE'; use 'main' or 'test'" >&2; exit 2 ;;
esac

# Debian packages: the rendering stack (PostgreSQL + PostGIS, osm2pgsql, the openstreetmap-carto
# style, fonts, Chromium for screenshots, osmium, GDAL) and Node.js for the map page assets.
APT_PACKAGES=(
  postgresql postgresql-15-postgis-3 postgis osm2pgsql openstreetmap-carto-common
  fonts-noto-core fonts-noto-ui-core fonts-dejavu-core chromium chromium-headless-shell osmium-tool gdal-bin
)
# the test setup's extras: Tesseract for the `ocr` baseline model (the main install never needs it)
if [ "$MODE" = test ]; then APT_PACKAGES+=(tesseract-ocr tesseract-ocr-eng); fi

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
die() { printf 'setup: FAILED: %s\n' "$*" >&2; exit 1; }

# ------------------------------------------------------------------ Debian packages
apt_step() {
  if [ "${CARTOQA_SKIP_APT:-0}" = 1 ]; then say "skipping Debian packages (CARTOQA_SKIP_APT=1)"; return; fi
  command -v apt-get >/dev/null || die "apt-get not found: this script needs Debian 12 (or set CARTOQA_SKIP_APT=1 and install ${APT_PACKAGES[*]} yourself)"
  local want=("${APT_PACKAGES[@]}") missing=() p
  command -v npm >/dev/null || want+=(nodejs npm)
  python_ok || want+=(python3 python3-venv)
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then say "Debian packages: all ${#want[@]} present"; return; fi
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  say "Debian packages: installing ${missing[*]}"
  $SUDO apt-get update -q || die "apt-get update failed (network or apt sources?)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" \
    || die "apt-get install ${missing[*]} failed; see the messages above"
}

# ------------------------------------------------------------------ Python
PY=""
python_ok() {
  local c
  for c in ${PYTHON:-} python3.13 python3.12 python3.11 python3; do
    if command -v "$c" >/dev/null && "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PY=$(command -v "$c"); return 0
    fi
  done
  return 1
}

venv_step() {
  python_ok || die "no Python 3.11 or newer with the venv module found; install python3 and python3-venv"
  if [ ! -x "$VENV/bin/python" ]; then
    say "virtual environment: creating $VENV with $PY"
    "$PY" -m venv "$VENV" || die "could not create a virtual environment at $VENV"
  fi
  local stamp_dir="$VENV/.cartoqa-setup" key
  key=$( { cat "$ROOT/pyproject.toml"; echo "extras=$EXTRAS"; } | sha256sum | cut -c1-16)
  mkdir -p "$stamp_dir"
  # a test install is a superset of the main install
  if [ -e "$stamp_dir/$key" ] || { [ "$MODE" = main ] && [ -e "$stamp_dir/test-$(test_key)" ]; }; then
    say "Python packages: up to date in $VENV"
    return
  fi
  local target="$ROOT"
  [ -n "$EXTRAS" ] && target="$ROOT[$EXTRAS]"
  say "Python packages: pip install -e '$target' (torch 2.14.1 + torchvision 0.29.1 for local/symbols)"
  "$VENV/bin/python" -m pip install -q --upgrade pip || die "could not upgrade pip in $VENV"
  "$VENV/bin/python" -m pip install -e "$target" || die "pip install -e '$target' failed; see the messages above"
  rm -f "$stamp_dir"/*
  touch "$stamp_dir/$key"
  [ "$MODE" = test ] && touch "$stamp_dir/test-$key"
  return 0
}

test_key() { { cat "$ROOT/pyproject.toml"; echo "extras=local,symbols,api,review,export,ray,dev,docs"; } | sha256sum | cut -c1-16; }

# ------------------------------------------------------------------ npm assets
npm_step() {
  command -v npm >/dev/null || die "npm not found; install Debian's nodejs and npm packages"
  local key stamp="$ROOT/node_modules/.cartoqa-stamp"
  key=$(sha256sum "$ROOT/package-lock.json" | cut -c1-16)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then say "npm assets: up to date"; return; fi
  say "npm assets: npm ci (leaflet, awesome-markers, bootstrap, jquery, fontawesome)"
  (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed; see the messages above"
  echo "$key" > "$stamp"
}

apt_step
venv_step
npm_step
say "done ($MODE). Activate with: source $VENV/bin/activate"
