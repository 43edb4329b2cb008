#!/usr/bin/env bash
# Device call 20: the window awaited by warp 1 beside warp 0's look-back (r19:
# one after the other).  Marching cubes at 16, 32 and 64^3 twice and 128^3;
# memcheck of the one-pass frames at 64^3 in 1024 bricks.
set -u
. "$(dirname "$0")/common.sh" r20
mc_grids "$O/mc" 16 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 32 64
mc_grids "$O/mc128" 128
step mc_memcheck_onepass 60 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 \
     --k=3 --frames=20 --reps=1
grep -hE "Best" "$O"/mc*.md
grep -h "one pass:\|identical\|DIFFER\|timeouts" "$O"/mc_*.log | sort | uniq -c
grep -h "ERROR SUMMARY" "$O"/mc_memcheck_onepass.log
cat "$O/steps.txt"
pack
