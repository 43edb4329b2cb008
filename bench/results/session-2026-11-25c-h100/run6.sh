#!/usr/bin/env bash
# Device call 6: a reserve the lock was handed to reads only the quote's
# words (wh_arena_ring_reserve_read_handed: the plan current by
# construction); the row with the commit on an SM of its own taken out
# (call 5: no gain).  test_arena_gpu with memcheck and racecheck; marching
# cubes at 16-64^3, twice; profiles at 32^3; memcheck and racecheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r6
MC_RACE=1 MC_STAMPS_ALL=1 full_call
pack
