#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The commit a benchmark report names (scripts/commit.sh): the build records
# its sources' commit in bin/COMMIT (cmake/commit.cmake) and the script
# prefers that record to the checkout's git, so that binaries copied to
# another machine are named by the sources they were built from; WH_COMMIT
# overrides both; without a record, the checkout's HEAD.
#   test_commit.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2 fails=0
check() { # what got want
  if [ "$2" = "$3" ]; then echo "ok   $1: $2"; else echo "FAIL $1: '$2', want '$3'"; fails=$((fails + 1)); fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rec=$(head -1 "$build/bin/COMMIT" 2>/dev/null)
[ -n "$rec" ] || { echo "FAIL $build/bin/COMMIT: missing or empty"; exit 1; }
head=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
# the record's revision: "unknown", or one this checkout knows (git gives it back as is)
rev=${rec%% *}
known=unknown
[ "$rev" = unknown ] || known=$(git -C "$src" rev-parse --short "$rev" 2>/dev/null)
check "the build's record names a commit of this checkout or none" "$rev" "$known"
check "the record, from the build dir" "$("$src/scripts/commit.sh" "$build")" "$rec"
mkdir -p "$tmp/copied/bin" "$tmp/bare"
echo "feedbee" > "$tmp/copied/bin/COMMIT"
check "a copied build's record, from elsewhere" "$(cd "$tmp" && "$src/scripts/commit.sh" copied)" feedbee
check "WH_COMMIT over the record" "$(WH_COMMIT=abc "$src/scripts/commit.sh" "$tmp/copied")" abc
check "no record: the checkout's HEAD" "$("$src/scripts/commit.sh" "$tmp/bare" | cut -d' ' -f1)" "$head"
[ "$fails" = 0 ] && echo "test_commit: passed" || { echo "test_commit: FAILED ($fails)"; exit 1; }
