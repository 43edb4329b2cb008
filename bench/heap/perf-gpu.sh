#!/usr/bin/env bash
# Issue 7 performance goals in one GPU call: the heap GPU test (correctness of
# every kind, DEFAULT's bump segments included), then wh_heap_bench limited to
# the goal workloads (one allocation per thread, fill 90%, utilisation) for
# BUMP, DEFAULT and CUDA's malloc in the same run (the ratios need all three).
#   BUILD=build-perf OUT=out bench/heap/perf-gpu.sh
set -u
BUILD=${BUILD:-build-perf}
OUT=${OUT:-out}
KINDS=${KINDS:-bump,default,cuda-malloc}
mkdir -p "$OUT"
commit=$(cat "$BUILD/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
# GPU, driver, memory; CUDA; date; commit (for the results README)
( nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -1
  date -u +%Y-%m-%dT%H:%M:%SZ; echo "commit $commit" ) > "$OUT/info.txt" 2>&1
t0=$(date +%s)
timeout 75 "$BUILD/bin/test_heap_gpu" > "$OUT/test_heap_gpu.log" 2>&1
echo "rc=$? wall=$(( $(date +%s) - t0 )) s" >> "$OUT/test_heap_gpu.log"
timeout 105 "$BUILD/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds="$KINDS" --out="$OUT" --commit="$commit" \
  > "$OUT/heap_bench.log" 2>&1
echo "rc=$?" >> "$OUT/heap_bench.log"
python3 "$(dirname "$0")/report.py" "$OUT/heap_bench.csv" >> "$OUT/heap_bench.md" 2>/dev/null || true
