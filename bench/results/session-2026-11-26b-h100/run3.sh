#!/usr/bin/env bash
# Device call 3: r2 showed the (c) one-pass row hanging (every row before it
# ran).  The kernel then needed 1232 bytes of stack against the default
# limit of 1024; now 560, and the limit is set before any kernel runs.  The
# same short runs, each log shown as it ends.
set -u
. "$(dirname "$0")/common.sh" r3
show() { step "$@"; grep -v "trying more" "$O/$1.log"; }
show mc_16_short 60 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
show mc_64_bz4_short 60 "$A/marching_cubes" --n=64 --bz=4 --k=3 --frames=30 --reps=1
pack
