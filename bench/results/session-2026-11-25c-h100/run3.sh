#!/usr/bin/env bash
# Device call 3: call 2's hand-off with the lock taken every frame beside
# it (the same binary, rows "lock every frame"), and a stamp of the first
# block to arrive.  Marching cubes at 16-64^3, twice; profiles at 32^3;
# memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r3
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
mc_profiles 32
mc_sanitize
mc_summary
pack
