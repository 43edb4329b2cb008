#!/usr/bin/env bash
# Device call 6: the one-pass frame posts its forecast replace to a committer
# that holds the lock for the chain (r5: the last ticket reserved itself and
# waited for the lock).  Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r6
short_calls
