#!/usr/bin/env bash
# Device call 6: as call 5, with the reserve begun after the barrier that
# tells the block it is last (in call 5 the block waited for it to scan).
# test_arena_gpu with memcheck and racecheck; marching cubes at 16-64^3;
# profiles at 16, 32, 64^3 and the arena's steps at 32^3; memcheck of a
# small run.
set -u
. "$(dirname "$0")/common.sh" r6
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16 24 32 64
for n in 16 32 64; do
  step mc_profile_$n 150 "$A/marching_cubes" --profile=1 --n=$n --k=3 --frames=300 --md="$O/profile_$n.md"
done
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile-prof.md"
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -E "stamps, \(c\) one kernel, commit on|stamps, \(a\)|arena steps, \(c\) one kernel, commit on" "$O/mc_prof.log" "$O"/mc_profile_*.log
grep -E "identical|DIFFER" "$O"/mc_*.log
tail -3 "$O/test_arena_gpu.log"
cat "$O/steps.txt"
