#!/usr/bin/env bash
# Device call 18: r17 showed the one check was the committer status: a chain whose
# last frame failed (count 0) returns that frame's status, which the test
# counted as a timeout. Counted by WH_ERR_RETRY_LIMIT alone now; again,
# the test alone at 2000 frames and the whole binary.
set -u
. "$(dirname "$0")/common.sh" r18
step posts_full 60 "$A/test_arena_gpu" --posts
step test_arena_gpu 120 "$A/test_arena_gpu"
tail -4 "$O/posts_full.log"; grep "CHECK\|posts\|test_arena_gpu" "$O/test_arena_gpu.log"
cat "$O/steps.txt"
pack
