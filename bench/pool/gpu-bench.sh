#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host pool benchmark on the GPU (called by scripts/gpu-check.sh --bench with
# BUILD and OUT set): wh_pool_bench writes pool_bench.csv and pool_bench.md to
# $OUT; the block core's CPU trace comparison goes next to them; then the
# PyTorch workload (torch_workload.py: a transformer on PyTorch's allocators
# and on warpheap's plug-in from $BUILD) writes $OUT/torch/, and its trace
# replayed on the CPU backend under each footprint policy, with the Python
# that has PyTorch: PYTHON (default /opt/torch/.venv/bin/python, else
# python3); without PyTorch it says so and is skipped.
set -euo pipefail
BUILD=${BUILD:-build}
OUT=${OUT:-out/pool}
mkdir -p "$OUT"
export WH_COMMIT=$("$(dirname "$0")/../../scripts/commit.sh" "$BUILD")
timeout 300 "$BUILD/bin/wh_pool_bench" --out="$OUT" "$@"
timeout 60 "$BUILD/bin/wh_blocks_bench" --csv="$OUT/blocks_cpu.csv" --md="$OUT/blocks_cpu.md"
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
command -v "$PYTHON" >/dev/null || PYTHON=python3
if "$PYTHON" -c "import torch" 2>/dev/null; then
  WARPHEAP_PLUGIN=${WARPHEAP_PLUGIN:-$(cd "$BUILD" && pwd)/lib/libwarpheap_plugin.so} \
    timeout 900 "$PYTHON" "$(dirname "$0")/torch_workload.py" --out "$OUT/torch"
  # the same workload's allocations replayed on the CPU backend, policy by policy (a run of
  # its own: the memory history would slow the timed native runs)
  timeout 300 "$PYTHON" "$(dirname "$0")/torch_workload.py" --trace "$OUT/torch_trace.txt"
  { echo "# the PyTorch workload's trace replayed (wh_pool_replay --trace, CPU backend, 2 MiB granule)"; echo
    echo "The native run's allocations and frees (PyTorch's memory history), 16 traces: as recorded, then each"
    echo "size less 0..511 random bytes.  Busy: every stream has work queued until the pool waits for it, as"
    echo "on a GPU the host runs ahead of; idle: work done at once.  Modelled driver time: wh_vmm_cost's medians."
    echo; timeout 120 "$BUILD/bin/wh_pool_replay" --trace="$OUT/torch_trace.txt" --seeds=16 --md; } > "$OUT/torch_replay.md"
  rm -f "$OUT/torch_trace.txt"
else
  echo "torch_workload: skipped: $PYTHON has no PyTorch (set PYTHON to a Python that has it)"
fi
