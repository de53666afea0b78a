#!/usr/bin/env bash
# The verifier on a GPU machine, in under 5 minutes: CPU and CUDA verdicts side by side
# for the torch bad fixtures (benchmarks/gpu_check.py prints the table).
#
#   bash benchmarks/gpu_check.sh            (from the repository root)
#
# Sets up .venv-gpu: torch from a wheel in $TORCH_WHEEL (or ./wheels/torch-*.whl) when
# there is one, else a CUDA torch the system Python already has (the venv sees the system
# site-packages), else `pip install torch==2.13.0` from the index; then the repository
# itself (editable, no extras). Needs nvidia-smi to see a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT_S=${GPU_CHECK_SECONDS:-280}
nvidia-smi -L || { echo "gpu_check: no NVIDIA GPU visible (nvidia-smi)"; exit 2; }
VENV=.venv-gpu
[ -x "$VENV/bin/python" ] || python3 -m venv --system-site-packages "$VENV"
PY="$VENV/bin/python"
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  WHEEL=${TORCH_WHEEL:-$(ls wheels/torch-*.whl 2>/dev/null | head -1 || true)}
  if [ -n "$WHEEL" ]; then "$PY" -m pip install -q "$WHEEL"; else "$PY" -m pip install -q 'torch==2.13.0'; fi
fi
"$PY" -m pip install -q --no-build-isolation -e . 2>/dev/null || "$PY" -m pip install -q -e .
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
timeout "$LIMIT_S" "$PY" benchmarks/gpu_check.py --jobs "$(nproc)" --timeout 60 "$@"
