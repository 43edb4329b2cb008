#!/usr/bin/env bash
# Device call 11, the check of the final code (r10's): marching cubes at
# 16-64^3 twice and 128^3, a PNG of the 32^3 mesh, synccheck and memcheck
# of a small run; test_arena_gpu (the library as r8 checked it) once more.
set -u
. "$(dirname "$0")/common.sh" r11
step test_arena_gpu 200 "$A/test_arena_gpu"
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
mc_grids "$O/mc128" 128
step mc_png 150 "$A/marching_cubes" --n=32 --k=3 --frames=60 --reps=1 --png="$O/mc_32.png"
mc_sanitize
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
mc_summary
pack
