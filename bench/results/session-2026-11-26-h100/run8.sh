#!/usr/bin/env bash
# Device call 8: the head after a CPU-side refactor (one copy function for
# the image; no GPU path changed): test_arena_gpu with memcheck, racecheck
# and synccheck, and marching cubes at 16-64^3 with its memcheck.
# run9.sh runs the same steps again as r9.
set -u
. "$(dirname "$0")/common.sh" "${1:-r8}"   # run9.sh: the same steps as r9
arena_checks
step synccheck_arena 300 compute-sanitizer --tool synccheck --error-exitcode 1 "$A/test_arena_gpu" --small
mc_grids "$O/mc" 16 24 32 64
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
grep -E "^### |one committer a chain, ring, mirror on failure, graph|\(b\) sync \+ mallocAsync|Best" "$O"/mc.md
grep -hE "identical|DIFFER" "$O"/mc_*.log | sort | uniq -c
tail -3 "$O"/test_arena_gpu.log
cat "$O"/steps.txt
pack
