# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the set-up, step and the marching-cubes steps of the session before
# (../session-2026-11-25b-h100/common.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-25b-h100/common.sh" "$1"
