#!/usr/bin/env bash
# Device call 4: ticket 0 opens the window after its look-back (r3: before
# its count, so every brick's prefix waited for the previous frame's
# commit).  Short runs at 16^3, 64^3 and 128^3, each log shown as it ends.
set -u
. "$(dirname "$0")/common.sh" r4
show() { step "$@"; grep -E "one pass|one committer a chain|sync \+ mallocAsync  |identical|DIFFER|best|grid" "$O/$1.log"; }
show mc_16_short 60 "$A/marching_cubes" --n=16 --k=3 --frames=60 --reps=3
show mc_64_short 60 "$A/marching_cubes" --n=64 --k=3 --frames=60 --reps=3
show mc_128_short 90 "$A/marching_cubes" --n=128 --k=3 --frames=60 --reps=3
pack
