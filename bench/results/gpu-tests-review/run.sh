#!/usr/bin/env bash
# The heap's and the pool's GPU tests after the review commit (device code of
# heap_slab.h touched), with compute-sanitizer memcheck and racecheck of the
# heap's and memcheck of the pool's small configurations.  Binaries in $B.
#   B=build-carry/final OUT=$OUT bench/results/gpu-tests-review/run.sh
set -u
B=${B:-build-carry/final}
OUT=${OUT:-out}
mkdir -p "$OUT"
cp "$B/COMMIT" "$OUT/COMMIT"
step() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout "$t" "$@" > "$OUT/$n.log" 2>&1;
         echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a "$OUT/steps.txt"; }
step test_heap_gpu 150 "$B/test_heap_gpu"
step test_pool_gpu 100 "$B/test_pool_gpu"
step memcheck-heap 150 compute-sanitizer --tool memcheck --error-exitcode 1 "$B/test_heap_gpu" --small
step racecheck-heap 150 compute-sanitizer --tool racecheck --error-exitcode 1 "$B/test_heap_gpu" --small
step memcheck-pool 100 compute-sanitizer --tool memcheck --error-exitcode 1 "$B/test_pool_gpu" --small
grep -hE "passed|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT"/*.log | sort | uniq -c
