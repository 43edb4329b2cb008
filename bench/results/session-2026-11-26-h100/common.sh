# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the set-up of the sessions before (../session-2026-11-25c-h100/common.sh:
# $A, $O, gpu.txt, step NAME SECONDS CMD..., the marching-cubes steps,
# full_call, and pack, which returns the call's folder as $OUT/rN.tgz).
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-25c-h100/common.sh" "$1"
