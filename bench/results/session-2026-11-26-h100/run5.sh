#!/usr/bin/env bash
# Device call 5 (issue 3): the commit kernels with __launch_bounds__(THREADS, 1)
# (no register spills), marching cubes at 16-64^3 twice, 64^3 with bricks
# of 8x8x16 (--bz=16: 256 bricks, half the blocks) beside the default 8x8x8,
# 128^3, a picture of a frame, and memcheck, racecheck and synccheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r5
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
MC_TAG=_bz16 MC_ARGS=--bz=16 mc_grids "$O/mc_bz16" 64
mc_grids "$O/mc128" 128
step mc_png 150 "$A/marching_cubes" --n=32 --k=3 --frames=60 --reps=1 --png="$O/mc_32.png"
MC_RACE=1 mc_sanitize
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
grep -E "^### |one committer|commit on a side stream, ring, mirror on failure, graph|\(a\) worst case, one kernel|\(b\) sync \+ mallocAsync \||Best" "$O"/mc.md "$O"/mc_again.md "$O"/mc_bz16.md
grep -E "Best" "$O"/mc128.md
grep -hE "identical|DIFFER" "$O"/mc_*.log | sort | uniq -c
cat "$O"/steps.txt
pack
