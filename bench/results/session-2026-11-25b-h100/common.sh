# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the first session's set-up and step (../session-2026-11-25-h100/common.sh:
# $A, $O, gpu.txt, step NAME SECONDS CMD...), and the steps these calls share.
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-25-h100/common.sh" "$1"
# Marching cubes at grids N..., 300 frames, median of 5, into $1.csv and $1.md;
# extra arguments from MC_ARGS (e.g. --bz=16), log names suffixed by MC_TAG.
mc_grids() {
  local out=$1; shift
  for n in "$@"; do
    step "mc_$n${MC_TAG:-}" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 ${MC_ARGS:-} \
         --csv="$out.csv" --md="$out.md"
  done
}
# test_arena_gpu, and memcheck and racecheck on --small.
arena_checks() {
  step test_arena_gpu 200 "$A/test_arena_gpu"
  step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
  step racecheck_arena 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
}
# Marching cubes' profile at grids N... (profile_N.md), the arena's steps at 32^3.
mc_profiles() {
  for n in "$@"; do
    step mc_profile_$n 150 "$A/marching_cubes" --profile=1 --n=$n --k=3 --frames=300 --md="$O/profile_$n.md"
  done
  step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile-prof.md"
}
# memcheck (and racecheck with MC_RACE=1) of a small marching-cubes run.
mc_sanitize() {
  step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
  [ "${MC_RACE:-0}" = 1 ] && step mc_racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 1 \
       "$A/marching_cubes" --n=16 --k=3 --frames=10 --reps=1
  return 0
}
# What the call's output shows: the grids' key rows, the profiles' stamps, the mesh checks.
mc_summary() {
  grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O"/mc*.md
  grep -E "stamps, \(c\) one kernel, commit on|stamps, \(a\)|arena steps, \(c\) one kernel, commit on" "$O"/mc_prof*.log
  grep -E "identical|DIFFER" "$O"/mc_*.log
  tail -3 "$O/test_arena_gpu.log"
  cat "$O/steps.txt"
}
