#!/usr/bin/env bash
# Device call 9 (2026-11-25), after the review: wh_arena_ring_wait_reserved
# shared by marching cubes and test_arena_gpu, the pool's one move helper --
# test_arena_gpu with memcheck and racecheck on --small, test_pool_gpu with
# memcheck on --small, and marching cubes at 16 and 32^3 with its memcheck.
set -u
. "$(dirname "$0")/common.sh" r9
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
step racecheck_arena 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$A/test_arena_gpu" --small
step test_pool_gpu 120 "$A/test_pool_gpu"
step memcheck_pool 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
for n in 16 32; do
  step "mc_$n" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 --csv="$O/mc.csv" --md="$O/mc.md"
done
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
grep -E "^### |side stream, ring, mirror on failure, graph|Best" "$O/mc.md"
cat "$O/steps.txt"
