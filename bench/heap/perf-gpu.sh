#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The heap's performance goals in one GPU run: the heap GPU test (correctness of
# every kind, DEFAULT's bump segments included), then wh_heap_bench limited to
# the goal workloads (one allocation per thread, fill 90%, utilisation) for
# BUMP, DEFAULT and CUDA's malloc in the same run (the ratios need all three).
#   BUILD=build-perf OUT=out bench/heap/perf-gpu.sh
set -u
BUILD=${BUILD:-build-perf}
OUT=${OUT:-out}
KINDS=${KINDS:-bump,default,cuda-malloc}
. "$(dirname "$0")/gpu-common.sh"
mkdir -p "$OUT"
commit=$(wh_heap_commit)
wh_heap_info 1
wh_heap_timed 75 "$OUT/test_heap_gpu.log" "$BUILD/bin/test_heap_gpu"
timeout 105 "$BUILD/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds="$KINDS" --out="$OUT" --commit="$commit" \
  > "$OUT/heap_bench.log" 2>&1
echo "rc=$?" >> "$OUT/heap_bench.log"
wh_heap_report
