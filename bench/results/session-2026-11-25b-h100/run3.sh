#!/usr/bin/env bash
# Device call 3: the block commit writes back from registers while thread 0
# makes the next plan (one barrier instead of a write-back then a plan), and
# the one-kernel frame at four blocks an SM (so 64^3 runs bricks of 8x8x8).
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3 and
# at 64^3 with the 8x8x16 bricks; profiles at 16, 32, 64^3 and the arena's
# steps at 32^3; memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r3
arena_checks
mc_grids "$O/mc" 16 24 32 64
MC_ARGS=--bz=16 MC_TAG=_bz16 mc_grids "$O/mc_bz16" 64
mc_profiles 16 32 64
mc_sanitize
mc_summary
