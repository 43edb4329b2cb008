#!/usr/bin/env bash
# Device call 8: call 7's check again after the reserve's slow path went
# back inline (out of line, synccheck found the calling warp divergent at
# test_arena_gpu's next block barrier): test_arena_gpu with synccheck,
# initcheck, memcheck and racecheck; marching cubes at 16-64^3 twice and
# 128^3, profiles at 32^3, memcheck and racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r8
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step initcheck_arena 300 compute-sanitizer --tool initcheck --error-exitcode 1 "$A/test_arena_gpu" --small
MC_RACE=1 full_call
mc_grids "$O/mc128" 128
pack
