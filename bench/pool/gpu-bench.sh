#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host pool benchmark on the GPU (called by scripts/gpu-check.sh --bench with
# BUILD and OUT set): wh_pool_bench writes pool_bench.csv and pool_bench.md to
# $OUT; the block core's CPU trace comparison goes next to them; then the
# PyTorch workload (torch_workload.py: a transformer on PyTorch's allocators
# and on warpheap's plug-in from $BUILD) writes $OUT/torch/, with the Python
# that has PyTorch: PYTHON (default /opt/torch/.venv/bin/python, else
# python3); without PyTorch it says so and is skipped.
set -euo pipefail
BUILD=${BUILD:-build}
OUT=${OUT:-out/pool}
mkdir -p "$OUT"
export WH_COMMIT=${WH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || cat "$BUILD/COMMIT" 2>/dev/null || echo unknown)}
timeout 300 "$BUILD/bin/wh_pool_bench" --out="$OUT" "$@"
timeout 60 "$BUILD/bin/wh_blocks_bench" --csv="$OUT/blocks_cpu.csv" --md="$OUT/blocks_cpu.md"
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
command -v "$PYTHON" >/dev/null || PYTHON=python3
if "$PYTHON" -c "import torch" 2>/dev/null; then
  WARPHEAP_PLUGIN=${WARPHEAP_PLUGIN:-$(cd "$BUILD" && pwd)/lib/libwarpheap_plugin.so} \
    timeout 600 "$PYTHON" "$(dirname "$0")/torch_workload.py" --out "$OUT/torch"
else
  echo "torch_workload: skipped: $PYTHON has no PyTorch (set PYTHON to a Python that has it)"
fi
