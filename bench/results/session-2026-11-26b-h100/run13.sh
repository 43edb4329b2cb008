#!/usr/bin/env bash
# Device call 13: marching cubes at the head, the session's figures: 16, 24,
# 32 and 64^3 twice (the spread between runs of one binary), 128^3, 300
# frames, median of 5; a PNG of the 32^3 mesh.
set -u
. "$(dirname "$0")/common.sh" r13
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
mc_grids "$O/mc128" 128
step mc_png 60 "$A/marching_cubes" --n=32 --k=3 --frames=60 --reps=1 --png="$O/mc_32.png"
onepass_summary
pack
