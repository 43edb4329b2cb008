#!/usr/bin/env bash
# Device call 9: the window read at the block start; what the one-pass rows lost
# (forecasts, chains) and the post time printed (r8: window timeouts).
# Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r9
short_calls "|one pass"
