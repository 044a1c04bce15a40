#!/usr/bin/env bash
# The GPU check of the vllm adapter's data parallelism (issue 31, item 4): a tiny random
# Qwen2-VL, built offline, runs through REAL vLLM as DP engines (greedy, float32) and its
# answers must equal the transformers (hf) path's on the same questions and maps.
#
#   bash scripts/gpu_check_vllm_dp.sh        data parallelism 2: needs 2 CUDA GPUs
#   bash scripts/gpu_check_vllm_dp.sh 1      one engine: runs on a single GPU
#
# Needs the test install plus the gpu extra in the environment (CARTOQA_VENV, default .venv):
#   bash scripts/setup.sh test && .venv/bin/pip install -e '.[gpu]'
# Fails (exit 1) when the test fails or is skipped: a skipped check checked nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY="${CARTOQA_VENV:-$ROOT/.venv}/bin/python"
export CARTOQA_VLLM_DP="${1:-2}"
export HF_HUB_OFFLINE=1
"$PY" - <<'EOF'
import os
import sys

dp = int(os.environ["CARTOQA_VLLM_DP"])
try:
    import vllm
except ImportError:
    sys.exit("vllm is not installed here: pip install -e '.[gpu]'")
import torch

gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
print(f"vllm {vllm.__version__}, torch {torch.__version__}, {gpus} CUDA GPU(s), dp={dp}")
if gpus < dp:
    sys.exit(f"data parallelism {dp} needs {dp} CUDA GPUs; this machine has {gpus}")
EOF
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set +e
"$PY" -m pytest -q -rs -p no:cacheprovider \
    "tests/cartoqa/test_vllm_parallel.py::test_tiny_model_through_real_vllm_data_parallel" \
    2>&1 | tee "$out"
set -e
grep -q "1 passed" "$out" || { echo "gpu check: NOT passed (see above)"; exit 1; }
echo "gpu check: passed (vLLM data parallelism ${CARTOQA_VLLM_DP} answers = hf answers)"
