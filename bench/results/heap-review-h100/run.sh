#!/usr/bin/env bash
# The heap's GPU test and compute-sanitizer (memcheck, racecheck, synccheck)
# on the review's refactor of heap_slab.h (same behaviour, different code).
#   BUILD=build-final OUT=$OUT bench/results/heap-review-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
heap_gpu_checks
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|passed|FAILED" "$R"/memcheck.log "$R"/racecheck.log "$R"/synccheck.log "$R"/test_heap_gpu.log
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
