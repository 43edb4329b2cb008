#!/usr/bin/env bash
# Device call 8: PDL after the window (r7: graphs at 64^3 starved the committer),
# the last ticket posting while its block writes, the committer batching.
# Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r8
short_calls "|one pass:"
