#!/usr/bin/env bash
# Set up the core install (see scripts/setup.sh main), then run the main job on the embedded data.
# Extra arguments go to `cartoqa demo`:  bash scripts/demo.sh --per-task 10 --out /tmp/demo
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh" main
cd "$ROOT"
exec "${CARTOQA_VENV:-$ROOT/.venv}/bin/cartoqa" demo "$@"
