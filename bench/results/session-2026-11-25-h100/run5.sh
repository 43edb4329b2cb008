#!/usr/bin/env bash
# Device call 5 (2026-11-25): marching cubes with the side-stream commit
# launched ahead of its frame (it waits for the reservation and commits while
# the frame's blocks emit): smoke run, grids 16-64^3, the profile with
# timestamps at 32^3, compute-sanitizer memcheck on a small run.
set -u
. "$(dirname "$0")/common.sh" r5
mc_all "$O"
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -A6 "timestamps" "$O/profile.md"
