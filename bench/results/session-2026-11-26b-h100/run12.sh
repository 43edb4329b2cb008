#!/usr/bin/env bash
# Device call 12: the checks of the head -- test_arena_gpu (now with the
# forecast ring's producers and committer on the GPU) and its memcheck,
# racecheck and synccheck on --small; marching cubes' memcheck, racecheck
# and synccheck of a small run, and memcheck of one-pass frames whose
# bricks are not all resident (64^3 in 8x8x4 bricks).
set -u
. "$(dirname "$0")/common.sh" r12
step test_arena_gpu 150 "$A/test_arena_gpu"
step memcheck_arena 120 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 120 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
step synccheck_arena 90 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step mc_synccheck 40 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
MC_RACE=1 mc_sanitize
step mc_memcheck_onepass 60 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 \
     --k=3 --frames=20 --reps=1
grep -h "gpu ring\|test_arena_gpu" "$O/test_arena_gpu.log"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed\|FAILED" "$O"/*check*.log
grep -h "one pass" "$O"/mc_*.log | sort | uniq -c
cat "$O/steps.txt"
pack
