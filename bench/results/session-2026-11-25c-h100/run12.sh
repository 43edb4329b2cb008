#!/usr/bin/env bash
# Device call 12: the review's refactor (one predicate for the image words
# others change outside the lock, used by the copy and both write-backs):
# test_arena_gpu with memcheck and racecheck, test_pool_gpu, marching
# cubes at 16-64^3 and memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r12
arena_checks
step test_pool_gpu 120 "$A/test_pool_gpu"
mc_grids "$O/mc" 16 24 32 64
mc_sanitize
mc_summary
pack
