#!/usr/bin/env bash
# Device call 13: the head's code (r12's) under every sanitizer the earlier
# calls split between them: test_arena_gpu with synccheck; marching cubes
# with racecheck and synccheck on a small run.
set -u
. "$(dirname "$0")/common.sh" r13
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step mc_racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
pack
