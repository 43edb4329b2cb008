#!/usr/bin/env bash
# Sixth call, after the review's refactor (wh__seg_flag): the heap's GPU test
# at full size and compute-sanitizer memcheck, racecheck and synccheck of its
# small configuration (8-way heaps included).
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/check.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
step test_heap_gpu 150 "$B/bin/test_heap_gpu"
for tool in memcheck racecheck synccheck; do
  step "$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 1 "$B/bin/test_heap_gpu" --small
done
grep -hE "ERROR SUMMARY|test_heap_gpu: " "$R"/*.log
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
