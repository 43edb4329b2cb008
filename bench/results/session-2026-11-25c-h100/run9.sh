#!/usr/bin/env bash
# Device call 9: the one-kernel frames launched by PDL after each other
# (the next frame's blocks wait resident in griddepcontrol.wait while this
# one's emit), beside the same binary with it off (MC_NO_FUSED_PDL=1, rows
# mc_nopdl).  Marching cubes at 16-64^3, twice with and once without;
# profiles at 32^3; memcheck, racecheck and synccheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r9
mc_grids "$O/mc" 16 24 32 64
MC_NO_FUSED_PDL=1 MC_TAG=_nopdl mc_grids "$O/mc_nopdl" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
mc_profiles 32
MC_RACE=1 mc_sanitize
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
mc_summary
pack
