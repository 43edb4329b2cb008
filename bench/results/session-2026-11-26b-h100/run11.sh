#!/usr/bin/env bash
# Device call 11 (r10 read a null arena state: fixed): an arena block (ticket 0) posts the previous frame and forecasts
# the window while the bricks count; the stamped forecast serves chain starts.
# Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r11
show() { step "$@"; grep -E "one pass|one committer a chain|sync \+ mallocAsync  |identical|DIFFER|best|grid|timeouts|one pass" "$O/$1.log"; }
show mc_16_short 60 "$A/marching_cubes" --n=16 --k=3 --frames=60 --reps=3
show mc_64_short 60 "$A/marching_cubes" --n=64 --k=3 --frames=60 --reps=3
show mc_128_short 90 "$A/marching_cubes" --n=128 --k=3 --frames=60 --reps=3
step mc_memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
tail -3 "$O/mc_memcheck.log"
step mc_memcheck_onepass 150 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=64 --bz=4 --k=3 --frames=20 --reps=1
tail -3 "$O/mc_memcheck_onepass.log"
cat "$O/steps.txt"
pack
