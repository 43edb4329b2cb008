#!/usr/bin/env bash
# Device call 4: the ring arenas on a block core without an index
# (WH_BLOCKS_LIST: the ring walks, so no TLSF upkeep, and an image of a few
# KiB for 64 blocks instead of ~11), and the reserve polls the lock by CAS.
# test_arena_gpu (one ring on each core) with memcheck and racecheck;
# marching cubes at 16-64^3; profiles at 16, 32, 64^3 and the arena's steps
# at 32^3; memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r4
arena_checks
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32 64
mc_sanitize
mc_summary
