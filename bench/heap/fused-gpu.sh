#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fused circular kinds on the GPU, in one run: the heap GPU test
# (full size: every kind, WRAP, the 12 GiB fused heaps), memcheck on its small
# configuration (as scripts/sanitize.d/heap.txt), then wh_heap_bench --quick
# with the time that is left (its CSV is written row by row, so a cut-off run
# still leaves every finished row).  BUILD=build-fused OUT=out bench/heap/fused-gpu.sh
set -u
BUILD=${BUILD:-build-fused}
OUT=${OUT:-out}
TOTAL=${TOTAL:-185}            # seconds for the whole script
. "$(dirname "$0")/gpu-common.sh"
mkdir -p "$OUT"
start=$(date +%s)
commit=$(wh_heap_commit)
wh_heap_info 2
wh_heap_timed 70 "$OUT/test_heap_gpu.log" "$BUILD/bin/test_heap_gpu"
wh_heap_timed 60 "$OUT/memcheck.log" compute-sanitizer --tool memcheck --error-exitcode 99 "$BUILD/bin/test_heap_gpu" --small
left=$(( TOTAL - ($(date +%s) - start) ))
[ "$left" -gt 10 ] || left=10
timeout "$left" "$BUILD/bin/wh_heap_bench" --quick --out="$OUT" --commit="$commit" > "$OUT/heap_bench.log" 2>&1
echo "rc=$? (timeout $left s)" >> "$OUT/heap_bench.log"
wh_heap_report
exit 0
