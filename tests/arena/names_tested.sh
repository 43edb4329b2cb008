#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every public name of the stream arena (wh_arena_*, WH_ARENA_*, wh_handle*
# in include/warpheap/arena.h and arena/) is named by a test in tests/arena
# or tests/core (GPU-only names in test_arena_gpu.cu); prints those that are
# not and fails.
set -eu
cd "${1:?usage: names_tested.sh SOURCE_DIR}"
missing=0
for n in $(grep -ohE '\b(wh_arena_[a-z0-9_]+|WH_ARENA_[A-Z0-9_]+|wh_handle[a-z_]*)\b' \
             include/warpheap/arena.h include/warpheap/arena/*.h | sort -u); do
  grep -qw "$n" tests/arena/*.c tests/arena/*.cu tests/core/*.c || { echo "no test names $n"; missing=1; }
done
[ $missing = 0 ] && echo "every public name of the arena is in a test"
exit $missing
