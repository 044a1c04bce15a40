#!/usr/bin/env bash
# Set up everything the tests need (see scripts/setup.sh test), then run them.
# Extra arguments go to pytest:  bash scripts/test.sh -k geodesy
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh" test
cd "$ROOT"
exec "${CARTOQA_VENV:-$ROOT/.venv}/bin/python" -m pytest "$@"
