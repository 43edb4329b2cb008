#!/usr/bin/env bash
# Device call 6: as call 5, with the reserve begun after the barrier that
# tells the block it is last (in call 5 the block waited for it to scan).
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3;
# profiles at 16, 32, 64^3 and the arena's steps at 32^3; memcheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r6
arena_checks
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32 64
mc_sanitize
mc_summary
