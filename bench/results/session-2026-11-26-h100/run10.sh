#!/usr/bin/env bash
# Device call 10: the review's commit (the side-commit rows measured in one
# loop; the warp scan's limit named): marching cubes at 16^3 and 64^3, and
# its memcheck and racecheck on a small run.
set -u
. "$(dirname "$0")/common.sh" r10
mc_grids "$O/mc" 16 64
MC_RACE=1 mc_sanitize
grep -E "^### |commit on a side stream|one committer|\(b\) sync \+ mallocAsync \||Best" "$O"/mc.md
grep -hE "identical|DIFFER" "$O"/mc_*.log | sort | uniq -c
cat "$O"/steps.txt
pack
