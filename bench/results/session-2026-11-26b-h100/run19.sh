#!/usr/bin/env bash
# Device call 19: the review's commit (helpers for the stack limit, the tests'
# twins, streams and span checks; no library logic changed): test_arena_gpu
# whole, its memcheck on --small, and marching cubes at 16^3 and 128^3 with
# its memcheck where the bricks are not all resident.
set -u
. "$(dirname "$0")/common.sh" r19
step test_arena_gpu 120 "$A/test_arena_gpu"
step memcheck_arena 100 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16
mc_grids "$O/mc128" 128
step mc_memcheck_onepass 60 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 \
     --k=3 --frames=20 --reps=1
grep -h "gpu ring posts\|test_arena_gpu" "$O/test_arena_gpu.log"
grep -h "ERROR SUMMARY" "$O"/*check*.log
grep -hE "Best" "$O"/mc*.md
grep -h "one pass:\|identical\|DIFFER" "$O"/mc_*.log | sort | uniq -c
cat "$O/steps.txt"
pack
