#!/usr/bin/env bash
# Device call 2: the commit launched ahead as one library call
# (wh_arena_ring_commit_ahead_block: no second look at the reservation, one
# fence), and the reserve's lock polled at the shortest backoff (the lock's
# own backoff grew to 2 us between tries).  test_arena_gpu with memcheck
# and racecheck; marching cubes at 16-64^3; profiles at 16 and 32^3 (the
# 32^3 one as profile.md) and the arena's steps at 32^3; memcheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r2
arena_checks
mc_grids "$O/mc" 16 24 32 64
step mc_profile 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile.md"
mc_profiles 16
mc_sanitize
mc_summary
