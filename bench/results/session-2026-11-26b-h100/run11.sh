#!/usr/bin/env bash
# Device call 11 (r10 read a null arena state: fixed): an arena block (ticket 0) posts the previous frame and forecasts
# the window while the bricks count; the stamped forecast serves chain starts.
# Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r11
short_calls "|one pass"
