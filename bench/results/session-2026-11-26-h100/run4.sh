#!/usr/bin/env bash
# Device call 4 (issue 3): the chain committer with one barrier fewer in a
# frame's commit (the status out in the commit's own phase), and where the
# frame's time goes at 64^3, the one grid still under 2x in r3.  The whole
# check again: test_arena_gpu under memcheck, racecheck and synccheck;
# marching cubes at 16-64^3 twice; profiles at 32^3 and 64^3 (stamps and
# the arena's steps); marching cubes under memcheck, racecheck, synccheck.
set -u
. "$(dirname "$0")/common.sh" r4
MC_RACE=1 full_call
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
step mc_profile_64 150 "$A/marching_cubes" --profile=1 --n=64 --k=3 --frames=300 --md="$O/profile_64.md"
step mc_prof_64 150 "$A/marching_cubes_prof" --profile=1 --n=64 --k=3 --frames=300 --md="$O/profile-prof_64.md"
grep -E "stamps, |arena steps" "$O"/mc_prof_64.log | cut -c1-400
grep -E "one committer|\(b\) sync \+ mallocAsync \||Best" "$O"/mc.md "$O"/mc_again.md
tail -4 "$O"/steps.txt
pack
