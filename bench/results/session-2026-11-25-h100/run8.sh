#!/usr/bin/env bash
# Device call 8 (2026-11-25): the side-stream commit launched ahead of its
# frame again, now that a slow-path reserve publishes its reservation only
# after its replace -- test_arena_gpu (with a commit launched ahead on a
# second stream), its memcheck and racecheck on --small, marching cubes at
# 16-64^3 and the arena's steps at 32^3.
set -u
. "$(dirname "$0")/common.sh" r8
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_all "$O"
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile-prof.md"
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -E "stamps|arena steps" "$O/mc_prof.log"
grep -E "^arena \(ring, mirror" "$O/mc_32.log"
tail -3 "$O/test_arena_gpu.log"
