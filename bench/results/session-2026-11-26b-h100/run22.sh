#!/usr/bin/env bash
# Device call 22: the review's commit (the example's window publication in
# one helper): the short check of r5-r11 -- marching cubes at 16, 64 and
# 128^3, memcheck of a small run and of one-pass frames in 1024 bricks.
set -u
. "$(dirname "$0")/common.sh" r22
short_calls "|one pass"
