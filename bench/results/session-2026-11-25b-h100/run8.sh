#!/usr/bin/env bash
# Device call 8: the block commit reads the next slot's span (for the plan)
# while thread 0 replaces, and a commit launched ahead polls every 64 ns.
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3;
# profiles at 16 and 32^3 and the arena's steps at 32^3; memcheck and
# racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r8
arena_checks
mc_grids "$O/mc" 16 24 32 64
mc_profiles 16 32
MC_RACE=1 mc_sanitize
mc_summary
