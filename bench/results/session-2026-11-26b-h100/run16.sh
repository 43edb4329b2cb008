#!/usr/bin/env bash
# Device call 16: r14/r15's round 0 was the local-memory wait (the first
# committer's launch needed more stack than the limit; the driver grew it
# only once the producers that waited for the committer had timed out).
# The test raises the limit first now.  The head's checks: test_arena_gpu
# (--posts alone first), memcheck, racecheck, synccheck on --small;
# marching cubes at 16, 64 and 128^3 and its sanitizers.
set -u
. "$(dirname "$0")/common.sh" r16
step posts_small 60 "$A/test_arena_gpu" --posts --small --verbose
step test_arena_gpu 120 "$A/test_arena_gpu"
step memcheck_arena 100 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 100 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
step synccheck_arena 60 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16 64
mc_grids "$O/mc128" 128
step mc_synccheck 40 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
MC_RACE=1 mc_sanitize
step mc_memcheck_onepass 60 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 \
     --k=3 --frames=20 --reps=1
grep -v "CHECK failed" "$O/posts_small.log" | tail -4
grep -h "gpu ring\|test_arena_gpu" "$O/test_arena_gpu.log"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed\|FAILED" "$O"/*check*.log
grep -hE "one pass, open|sync \+ mallocAsync \||Best" "$O"/mc*.md
grep -h "one pass\|identical\|DIFFER" "$O"/mc_*.log | sort | uniq -c
cat "$O/steps.txt"
pack
