#!/usr/bin/env bash
# Issue 7, the fused circular kinds on the GPU, in one call: the heap GPU test
# (full size: every kind, WRAP, the 12 GiB fused heaps), memcheck on its small
# configuration (as scripts/sanitize.d/heap.txt), then wh_heap_bench --quick
# with the time that is left (its CSV is written row by row, so a cut-off run
# still leaves every finished row).  BUILD=build-fused OUT=out bench/heap/fused-gpu.sh
set -u
BUILD=${BUILD:-build-fused}
OUT=${OUT:-out}
TOTAL=${TOTAL:-185}            # seconds for the whole script
mkdir -p "$OUT"
start=$(date +%s)
# the commit the binaries were built at (the device's copy may carry an older .git)
commit=$(cat "$BUILD/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version 2>/dev/null | tail -2
  date -u +%Y-%m-%dT%H:%M:%SZ
  echo "commit $commit"
} > "$OUT/info.txt" 2>&1
timeout 70 "$BUILD/bin/test_heap_gpu" > "$OUT/test_heap_gpu.log" 2>&1
echo "rc=$? wall=$(( $(date +%s) - start )) s" >> "$OUT/test_heap_gpu.log"
t1=$(date +%s)
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 "$BUILD/bin/test_heap_gpu" --small > "$OUT/memcheck.log" 2>&1
echo "rc=$? wall=$(( $(date +%s) - t1 )) s" >> "$OUT/memcheck.log"
left=$(( TOTAL - ($(date +%s) - start) ))
[ "$left" -gt 10 ] || left=10
timeout "$left" "$BUILD/bin/wh_heap_bench" --quick --out="$OUT" --commit="$commit" > "$OUT/heap_bench.log" 2>&1
echo "rc=$? (timeout $left s)" >> "$OUT/heap_bench.log"
python3 "$(dirname "$0")/report.py" "$OUT/heap_bench.csv" >> "$OUT/heap_bench.md" 2>/dev/null || true
exit 0
