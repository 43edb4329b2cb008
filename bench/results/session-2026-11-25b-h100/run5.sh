#!/usr/bin/env bash
# Device call 5: the last block's thread 0 begins the reserve as soon as it
# arrives (an acq_rel count instead of fences), warp 1 scans meanwhile.
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3;
# profiles at 16, 32, 64^3 and the arena's steps at 32^3; memcheck and
# racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r5
arena_checks
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32 64
MC_RACE=1 mc_sanitize
mc_summary
