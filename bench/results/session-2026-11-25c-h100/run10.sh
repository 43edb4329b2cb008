#!/usr/bin/env bash
# Device call 10: with the frames launched by PDL the commit chain is the
# limit (r9); the last block now awaits the baton while warp 1 scans, so
# only the read and the reserve's end follow it.  Marching cubes at
# 16-64^3 twice, profiles at 32^3 with every frame's stamps, memcheck and
# racecheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r10
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
MC_STAMPS_ALL=1 mc_profiles 32
MC_RACE=1 mc_sanitize
mc_summary
pack
