# SPDX-License-Identifier: MIT
# Shared by perf-gpu.sh and fused-gpu.sh (sourced; BUILD and OUT set).
# The commit the binaries were built at (a build copied to another machine may come with an older .git).
wh_heap_commit() { cat "$BUILD/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown; }
# GPU, driver, memory; CUDA (last $1 lines of nvcc --version); date; commit
# (for the results README) into $OUT/info.txt.
wh_heap_info() {
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version 2>/dev/null | tail -"$1"
    date -u +%Y-%m-%dT%H:%M:%SZ
    echo "commit $commit"; } > "$OUT/info.txt" 2>&1
}
# wh_heap_timed SECONDS LOG CMD...: run under timeout into LOG, then append
# its status and wall time.
wh_heap_timed() {
  local limit=$1 log=$2 t
  shift 2
  t=$(date +%s)
  timeout "$limit" "$@" > "$log" 2>&1
  echo "rc=$? wall=$(( $(date +%s) - t )) s" >> "$log"
}
# heap_bench.md from heap_bench.csv (best effort).
wh_heap_report() { python3 "$(dirname "${BASH_SOURCE[0]}")/report.py" "$OUT/heap_bench.csv" >> "$OUT/heap_bench.md" 2>/dev/null || true; }
