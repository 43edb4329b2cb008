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
