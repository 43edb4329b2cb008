#!/usr/bin/env bash
# Device call 2: the arena's lock handed from each side-stream commit to
# the next frame's reserve (wh_arena_ring_baton, folded into the word the
# frame's blocks arrive on), so the last block takes no lock and reads the
# plan in the round trip of its arrival.  test_arena_gpu (a chain of
# handed locks among its rounds) with memcheck and racecheck; marching
# cubes at 16-64^3, twice; profiles at 32^3; memcheck and racecheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r2
MC_RACE=1 full_call
pack
