#!/usr/bin/env bash
# Device call 10: the one-kernel frame with the commit on a side stream
# takes the arena's lock in the first block to arrive (its verdict in a
# word tagged with the frame's barrier epoch); the last block only reads
# the state (wh_arena_ring_reserve_read) while warp 1 scans.
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3;
# profiles at 16 and 32^3 and the arena's steps at 32^3; memcheck and
# racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r10
arena_checks
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32
MC_RACE=1 mc_sanitize
mc_summary
