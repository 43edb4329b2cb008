#!/usr/bin/env bash
# Device call 5: the one-pass frame on the forecast window (the previous
# frame's last ticket publishes it; only a chain's first frame opens from
# the plan).  Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r5
short_calls
