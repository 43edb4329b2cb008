# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the set-up, step and the marching-cubes steps of the session before
# (../session-2026-11-25b-h100/common.sh).  The call's files are written
# under /tmp and come back as one archive, $OUT/rN.tgz (pack, at the end):
# a call returns only a few files.
WH_REAL_OUT=${OUT:-out}
OUT=/tmp/wh_out
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-25b-h100/common.sh" "$1"
pack() { tar czf "$WH_REAL_OUT/$(basename "$O").tgz" -C "$OUT" "$(basename "$O")"; }
