#!/usr/bin/env bash
# Device call 11: the reserve's state read by a whole warp into a ticket in
# shared memory (wh_arena_ring_reserve_read_warp), the lock by its lane 0
# (marching cubes' last block; test_arena_gpu every other frame).
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3;
# profiles at 16 and 32^3 and the arena's steps at 32^3; memcheck and
# racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r11
arena_checks
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32
MC_RACE=1 mc_sanitize
mc_summary
