#!/usr/bin/env bash
# Set up everything the tests need (see scripts/setup.sh test), then run them.
# Extra arguments go to pytest:  bash scripts/test.sh -k geodesy
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh" test
cd "$ROOT"
# The published CartoMapQA code (another project's, Apache-2.0: never copied into cartoqa), at
# the commit its arithmetic was read from: tests/release/test_published_code.py runs its own
# parsers and evaluate_*.py against cartoqa's.  Without it (no network) those tests skip.
if [ -z "${CARTOMAPQA_CODE:-}" ]; then
  sha=c5b6c65abcb5b6ae869d4912b3704f298d786812
  code="${XDG_CACHE_HOME:-$HOME/.cache}/cartoqa/cartomapqa-code-${sha:0:12}"
  if [ ! -f "$code/eval.py" ]; then
    rm -rf "$code.part" && mkdir -p "$code.part"
    if curl -fsSL --connect-timeout 10 --max-time 120 \
        "https://codeload.github.com/ungquanghuy-kddi/CartoMapQA/tar.gz/$sha" |
        tar -xz -C "$code.part" --strip-components=1 2>/dev/null; then
      mv "$code.part" "$code"
    else
      rm -rf "$code.part"
      echo "note: the published CartoMapQA code could not be fetched; its comparison tests skip" >&2
    fi
  fi
  if [ -f "$code/eval.py" ]; then export CARTOMAPQA_CODE="$code"; fi
fi
exec "${CARTOQA_VENV:-$ROOT/.venv}/bin/python" -m pytest "$@"
