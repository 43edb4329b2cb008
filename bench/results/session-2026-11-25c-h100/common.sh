# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the set-up, step and the marching-cubes steps of the session before
# (../session-2026-11-25b-h100/common.sh).  The call's files are written
# under /tmp and come back as one archive, $OUT/rN.tgz (pack, at the end):
# a call returns only a few files.
WH_REAL_OUT=${OUT:-out}
OUT=/tmp/wh_out
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-25b-h100/common.sh" "$1"
pack() { tar czf "$WH_REAL_OUT/$(basename "$O").tgz" -C "$OUT" "$(basename "$O")"; }
# The whole check of a change: test_arena_gpu with memcheck and racecheck,
# marching cubes at 16-64^3 twice (the spread between runs of one binary),
# profiles at 32^3 (every frame's stamps with MC_STAMPS_ALL=1), memcheck
# (and racecheck with MC_RACE=1) of a small run, the summary.  r1 and r2
# ran before pack existed (r1 came back partly: a call returns only a few
# files); run again, they pack.
full_call() {
  arena_checks
  mc_grids "$O/mc" 16 24 32 64
  MC_TAG=_again mc_grids "$O/mc_again" 16 24 32 64
  mc_profiles 32
  mc_sanitize
  mc_summary
}
