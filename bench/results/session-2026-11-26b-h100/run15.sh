#!/usr/bin/env bash
# Device call 15: r14 showed round 0 of the forecast-ring test failing: on a
# fresh arena (allocs + frees = 0) a producer read the committer's forecast
# half written, with a zero stamp, as current.  Fixed (made whole, then
# written; stamps offset by one).  test_arena_gpu alone, whole, and under
# memcheck, racecheck and synccheck on --small.
set -u
. "$(dirname "$0")/common.sh" r15
step posts_small 60 "$A/test_arena_gpu" --posts --small --verbose
step test_arena_gpu 150 "$A/test_arena_gpu"
step memcheck_arena 150 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 150 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
step synccheck_arena 80 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
grep -v "CHECK failed" "$O/posts_small.log" | tail -8
grep -h "gpu ring\|test_arena_gpu" "$O/test_arena_gpu.log"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed\|FAILED" "$O"/*check*.log
cat "$O/steps.txt"
pack
