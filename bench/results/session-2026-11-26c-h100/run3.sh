#!/usr/bin/env bash
# Device call 3 (issue 6): the head after the review (wh__spot in
# O(pieces), the same placements): test_pool_gpu and its memcheck, and
# random_allocations at max 1 GiB with every baseline.
set -u
. "$(dirname "$0")/common.sh" r3
step test_pool_gpu 60 "$A/test_pool_gpu"
tail -2 "$O/test_pool_gpu.log"
step memcheck_pool 90 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
tail -2 "$O/memcheck_pool.log"
pool_1g "$A/wh_pool_bench" pool_1g
cat "$O/steps.txt"
pack
