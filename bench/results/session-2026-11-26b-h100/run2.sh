#!/usr/bin/env bash
# Device call 2: r1 ran past the call's 600 s with nothing back (its four
# grids' timeouts alone add up to 600 s).  Short runs, each log shown as it
# ends: which row hangs, if one does.
set -u
. "$(dirname "$0")/common.sh" r2
show() { step "$@"; cat "$O/$1.log" | grep -v "trying more"; }
show mc_16_short 60 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
show mc_64_bz4_short 60 "$A/marching_cubes" --n=64 --bz=4 --k=3 --frames=30 --reps=1
pack
