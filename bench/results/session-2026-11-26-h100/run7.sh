#!/usr/bin/env bash
# Device call 7: the head's code, the whole check.  Issue 3: test_arena_gpu
# under memcheck, racecheck and synccheck; marching cubes at 16-64^3 twice
# and 128^3, a picture of a frame, the profiles at 32^3 and 64^3, memcheck,
# racecheck and synccheck of a small run and memcheck at 64^3.  Issue 6:
# test_pool_gpu and its memcheck (the pool's code is unchanged).
set -u
. "$(dirname "$0")/common.sh" r7
MC_RACE=1 full_call
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
step mc_memcheck_64 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --k=3 --frames=10 --reps=1
step mc_profile_64 150 "$A/marching_cubes" --profile=1 --n=64 --k=3 --frames=300 --md="$O/profile_64.md"
mc_grids "$O/mc128" 128
step mc_png 150 "$A/marching_cubes" --n=32 --k=3 --frames=60 --reps=1 --png="$O/mc_32.png"
step test_pool_gpu 120 "$A/test_pool_gpu"
step memcheck_pool 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
grep -E "^### |one committer a chain, ring, mirror on failure, graph|\(a\) worst case, one kernel|\(b\) sync \+ mallocAsync|Best" "$O"/mc.md "$O"/mc_again.md "$O"/mc128.md
grep -hE "identical|DIFFER" "$O"/mc_*.log | sort | uniq -c
cat "$O"/steps.txt
pack
