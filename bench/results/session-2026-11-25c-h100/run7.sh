#!/usr/bin/env bash
# Device call 7, the session's check of its last code (the head's
# library and marching cubes; only device scripts and notes after it):
# test_arena_gpu with memcheck, racecheck, synccheck and initcheck;
# test_pool_gpu with memcheck (the block core's copy of the image
# changed); marching cubes at 16-64^3 twice and at 128^3 (two-kernel
# frames only), a PNG of the 32^3 mesh, the profile at 32^3, memcheck
# and racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r7
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step initcheck_arena 300 compute-sanitizer --tool initcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step test_pool_gpu 120 "$A/test_pool_gpu"
step memcheck_pool 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
MC_RACE=1 full_call
mc_grids "$O/mc128" 128
step mc_png 150 "$A/marching_cubes" --n=32 --k=3 --frames=60 --reps=1 --png="$O/mc_32.png"
pack
