#!/usr/bin/env bash
# Device call 21: racecheck and synccheck of marching cubes at r20's code
# (b7ff276: the window awaited by warp 1 beside the look-back), a small run.
set -u
. "$(dirname "$0")/common.sh" r21
step mc_synccheck 60 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
step mc_racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|identical" "$O"/mc_*.log
cat "$O/steps.txt"
pack
