#!/usr/bin/env bash
# Device call 2: the commit launched ahead as one library call
# (wh_arena_ring_commit_ahead_block: no second look at the reservation, one
# fence), and the reserve's lock polled at the shortest backoff (the lock's
# own backoff grew to 2 us between tries).  test_arena_gpu with memcheck
# and racecheck; marching cubes at 16-64^3; profiles at 16 and 32^3 and the
# arena's steps at 32^3; memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r2
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16 24 32 64
step mc_profile 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile.md"
step mc_profile_16 150 "$A/marching_cubes" --profile=1 --n=16 --k=3 --frames=300 --md="$O/profile_16.md"
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile-prof.md"
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -E "stamps|arena steps" "$O/mc_prof.log" "$O/mc_profile_16.log"
grep -E "identical|DIFFER" "$O"/mc_*.log
tail -3 "$O/test_arena_gpu.log"
cat "$O/steps.txt"
