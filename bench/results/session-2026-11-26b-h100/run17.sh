#!/usr/bin/env bash
# Device call 17: r16's whole test_arena_gpu failed one combined check of the
# forecast ring (timeouts, data, forecasts lost, valid at the end) while
# --posts --small passed; the checks one by one, the ring's test at 2000
# frames alone and the whole binary.
set -u
. "$(dirname "$0")/common.sh" r17
step posts_full 60 "$A/test_arena_gpu" --posts
step test_arena_gpu 120 "$A/test_arena_gpu"
tail -4 "$O/posts_full.log"; grep "CHECK\|posts\|test_arena_gpu" "$O/test_arena_gpu.log"
cat "$O/steps.txt"
pack
