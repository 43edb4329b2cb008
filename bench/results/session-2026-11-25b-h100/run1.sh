#!/usr/bin/env bash
# Device call 1 of the second session of 2026-11-25: the reserve in two
# halves (the lock and the plan's loads during the last block's scan), the
# one-kernel frame's loads after the barrier in one round trip, one fence
# before the barrier opens, and bricks chosen per grid (8x8x4 at small
# grids).  test_arena_gpu (begin/end on two warps) with memcheck and
# racecheck; marching cubes at 16-64^3 with the auto bricks and at 16/32^3
# with the old 8x8x16 bricks, in the same call; profiles at 32^3 (both
# bricks, and the arena's steps); memcheck and racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r1
arena_checks
mc_grids "$O/mc" 16 24 32 64
MC_ARGS=--bz=16 MC_TAG=_bz16 mc_grids "$O/mc_bz16" 16 32
step mc_profile 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile.md"
step mc_profile_bz16 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --bz=16 --md="$O/profile_bz16.md"
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile-prof.md"
MC_RACE=1 mc_sanitize
mc_summary
