#!/usr/bin/env bash
# Device call 2 (issue 3): one committer for a chain of frames
# (wh_arena_ring_commit_chain_block: the image kept in smem, a commit
# reloads only the reserve's words and only allocates) beside the commit a
# frame, in the same binary.  The whole check: test_arena_gpu (its new
# kind-5 rounds) under memcheck, racecheck and synccheck; marching cubes at
# 16-64^3 twice and 128^3; the profiles at 32^3; marching cubes under
# memcheck, racecheck and synccheck.
set -u
. "$(dirname "$0")/common.sh" "${1:-r2}"   # run3.sh: the same call again as r3
MC_RACE=1 full_call
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
MC_TAG= mc_grids "$O/mc128" 128
grep -E "one committer|Best" "$O"/mc128.md
grep -E "arena \(ring, mirror on failure\)" "$O"/mc_*.log | head -12
tail -3 "$O"/steps.txt
pack
