#!/usr/bin/env bash
# Device call 6: a reserve the lock was handed to reads only the quote's
# words (wh_arena_ring_reserve_read_handed: the plan current by
# construction); the row with the commit on an SM of its own taken out
# (call 5: no gain).  test_arena_gpu with memcheck and racecheck; marching
# cubes at 16-64^3, twice; profiles at 32^3; memcheck and racecheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r6
arena_checks
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
MC_STAMPS_ALL=1 mc_profiles 32
MC_RACE=1 mc_sanitize
mc_summary
pack
