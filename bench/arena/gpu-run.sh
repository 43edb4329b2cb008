#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The arena part's whole device run (what bench/results/arena/run4-h100 holds):
# the arena GPU test, compute-sanitizer memcheck on the small configurations
# (test_arena_gpu --small, marching_cubes at 20^3), then gpu-bench.sh.  Log and
# results into $OUT (gpu_run.log, marching_cubes.{csv,md,png}).
# Environment: BUILD (build dir, default build), OUT (default out/arena).
set -u
. "$(dirname "$0")/common.sh"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step() { echo "== $*"; "$@"; echo "rc=$?"; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  date -u
  step timeout 60 "$build/bin/test_arena_gpu"
  step timeout 60 "$san" --tool memcheck --error-exitcode 99 "$build/bin/test_arena_gpu" --small
  step timeout 60 "$san" --tool memcheck --error-exitcode 99 "$build/bin/marching_cubes" --n=20 --frames=30 --reps=1 --png=
  BUILD=$build OUT=$out step timeout 150 bench/arena/gpu-bench.sh
} > "$out/gpu_run.log" 2>&1
cat "$out/gpu_run.log"
