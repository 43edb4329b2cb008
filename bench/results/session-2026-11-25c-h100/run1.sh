#!/usr/bin/env bash
# Device call 1: the one-kernel frame's reservation announced after the
# fence that opens its barrier (wh_arena_ring_reserve_end_deferred and
# _publish: one fence fewer on the last block's path), the reserve's slow
# path out of line.  test_arena_gpu with memcheck and racecheck; marching
# cubes at 16-64^3, twice (the spread between runs of one binary);
# profiles at 32^3; memcheck and racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r1
MC_RACE=1 full_call
pack
