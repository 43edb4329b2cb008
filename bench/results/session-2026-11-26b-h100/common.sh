# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the set-up of the sessions before (../session-2026-11-26-h100/common.sh
# and the chain it sources: $A, $O, gpu.txt, step NAME SECONDS CMD...,
# mc_grids, arena_checks, mc_profiles, mc_sanitize, mc_summary, full_call,
# and pack, which returns the call's folder as $OUT/rN.tgz).
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-26-h100/common.sh" "$1"
# memcheck of the one-pass frames where the bricks are not all resident
# (64^3 in 8x8x4 bricks: 1024 blocks for the H100's 528 slots).
mc_sanitize_onepass() {
  step mc_memcheck_onepass 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 \
       --k=3 --frames=20 --reps=1
}
# The rows that compare (b) with the one-pass and one-kernel (c), and the mesh checks.
onepass_summary() {
  grep -E "^### |one pass|one committer a chain, ring, mirror on failure, graph|\(b\) sync \+ mallocAsync \||Best" "$O"/mc*.md
  grep -hE "identical|DIFFER|timeouts|off" "$O"/mc_*.log | sort | uniq -c
  cat "$O/steps.txt"
}
# The short check of calls r5-r11: marching cubes at 16, 64 and 128^3 (60
# frames, median of 3), each log's key rows shown as it ends (extra: more
# of the grep's alternatives), memcheck of a small run and of one-pass
# frames whose 1024 bricks are not all resident, the steps, the archive.
short_calls() {
  local extra=${1:-}
  show() { step "$@"; grep -E "one pass|one committer a chain|sync \+ mallocAsync  |identical|DIFFER|best|grid|timeouts$extra" "$O/$1.log"; }
  show mc_16_short 60 "$A/marching_cubes" --n=16 --k=3 --frames=60 --reps=3
  show mc_64_short 60 "$A/marching_cubes" --n=64 --k=3 --frames=60 --reps=3
  show mc_128_short 90 "$A/marching_cubes" --n=128 --k=3 --frames=60 --reps=3
  step mc_memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
  tail -3 "$O/mc_memcheck.log"
  step mc_memcheck_onepass 150 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 --k=3 --frames=20 --reps=1
  tail -3 "$O/mc_memcheck_onepass.log"
  cat "$O/steps.txt"
  pack
}
