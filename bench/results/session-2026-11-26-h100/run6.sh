#!/usr/bin/env bash
# Device call 6 (issue 3): a warp scans up to 512 brick totals, so at 64^3
# (512 bricks) thread 0 reserves beside the scan instead of holding a
# block-wide scan back (r4's stamps: the scan phase 1.25 us against (a)'s
# 0.87).  Marching cubes at 16-64^3 twice, the profiles at 64^3, memcheck
# and synccheck at 64^3 (the 16-a-lane scan) and at 16^3, racecheck at 16^3.
set -u
. "$(dirname "$0")/common.sh" r6
mc_grids "$O/mc" 16 24 32 64
MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
step mc_profile_64 150 "$A/marching_cubes" --profile=1 --n=64 --k=3 --frames=300 --md="$O/profile_64.md"
step mc_prof_64 150 "$A/marching_cubes_prof" --profile=1 --n=64 --k=3 --frames=300 --md="$O/profile-prof_64.md"
step mc_memcheck_64 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --k=3 --frames=10 --reps=1
step mc_synccheck_64 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=64 --k=3 --frames=10 --reps=1
MC_RACE=1 mc_sanitize
step mc_synccheck 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
grep -E "stamps, " "$O"/mc_prof_64.log | cut -c1-330
grep -E "^### |one committer a chain, ring, mirror on failure, graph|\(a\) worst case, one kernel|\(b\) sync \+ mallocAsync|Best" "$O"/mc.md "$O"/mc_again.md
grep -hE "identical|DIFFER" "$O"/mc_*.log | sort | uniq -c
cat "$O"/steps.txt
pack
