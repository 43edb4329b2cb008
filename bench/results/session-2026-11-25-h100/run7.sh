#!/usr/bin/env bash
# Device call 7 (2026-11-25): the arena without 64-bit divisions where the
# values fit 32 bits -- test_arena_gpu and its memcheck on --small, marching
# cubes at 16-64^3, and the arena's steps (marching_cubes_prof) at 32^3.
set -u
. "$(dirname "$0")/common.sh" r7
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O"
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile.md"
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -E "stamps|arena steps" "$O/mc_prof.log"
