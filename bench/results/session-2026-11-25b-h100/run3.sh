#!/usr/bin/env bash
# Device call 3: the block commit writes back from registers while thread 0
# makes the next plan (one barrier instead of a write-back then a plan), and
# the one-kernel frame at four blocks an SM (so 64^3 runs bricks of 8x8x8).
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3 and
# at 64^3 with the 8x8x16 bricks; profiles at 16, 32, 64^3 and the arena's
# steps at 32^3; memcheck of a small run.
set -u
. "$(dirname "$0")/common.sh" r3
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16 24 32 64
MC_ARGS=--bz=16 MC_TAG=_bz16 mc_grids "$O/mc_bz16" 64
for n in 16 32 64; do
  step mc_profile_$n 150 "$A/marching_cubes" --profile=1 --n=$n --k=3 --frames=300 --md="$O/profile_$n.md"
done
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile-prof.md"
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md" "$O/mc_bz16.md"
grep -E "stamps|arena steps" "$O/mc_prof.log" "$O"/mc_profile_*.log
grep -E "identical|DIFFER|fused kernel" "$O"/mc_*.log
tail -3 "$O/test_arena_gpu.log"
cat "$O/steps.txt"
