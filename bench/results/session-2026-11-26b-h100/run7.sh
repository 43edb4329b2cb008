#!/usr/bin/env bash
# Device call 7: r6 with the forecast worked on a local copy in the last ticket,
# and the one-pass timeouts by wait (r6 counted some: posts waited for a
# committer count left at 0).  Short runs at 16^3, 64^3 and 128^3, each log's key rows shown
# as it ends; memcheck of a small run, and of 64^3 in 8x8x4 bricks (more
# blocks than the GPU holds at once).
set -u
. "$(dirname "$0")/common.sh" r7
short_calls "|one pass:"
