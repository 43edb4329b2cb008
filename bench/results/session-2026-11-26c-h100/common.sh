# This session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the set-up of the sessions before (../session-2026-11-26b-h100/common.sh
# and the chain it sources: $A, $O, gpu.txt, step NAME SECONDS CMD...,
# and pack, which returns the call's folder as $OUT/rN.tgz).
. "$(dirname "${BASH_SOURCE[0]}")/../session-2026-11-26b-h100/common.sh" "$1"
# The pool at max 1 GiB: random_allocations by a binary ($1), into $O/$2,
# extra arguments after; the key rows shown as it ends.
pool_1g() {
  local bin=$1 name=$2; shift 2
  mkdir -p "$O/$name"
  step "$name" 120 "$bin" --out="$O/$name" --random-max=1024 "$@"
  grep -E "^\| 1[0]+ \| 1024" "$O/$name/pool_bench.md"
}
