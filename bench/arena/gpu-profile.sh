#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where a marching-cubes frame's time goes (wh_arena_bench --profile=1):
# per-launch times by CUDA events of the launch floor, count and generate alone,
# (b)'s sync and cudaMallocAsync pair, the arena replace by command and in the
# counting kernel (mirror every command / on failure), the one-kernel frames;
# then, if nsys is there, its kernel summary of a short 32^3 run.  Into $OUT:
# profile.log, profile.md.  About 30 s.
# Environment: BUILD (build dir, default build), OUT (default out/arena), SIZES.
set -u
. "$(dirname "$0")/common.sh"
need_mc_bin
bin=$mc_bin
rm -f "$out/profile.md"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  date -u
  echo "commit $(scripts/commit.sh "$build")"
  for n in ${SIZES:-32 64 128}; do
    echo "== wh_arena_bench --profile=1 --n=$n"
    timeout 60 "$bin" --profile=1 --n="$n" --k=3 --frames=300 --md="$out/profile.md"; echo "rc=$?"
  done
  if command -v nsys >/dev/null; then
    echo "== nsys, 32^3, 60 frames, one run"
    timeout 90 nsys profile --stats=true --force-overwrite=true -o "$out/nsys32" \
      "$bin" --n=32 --k=3 --frames=60 --reps=1 --png= 2>&1 | grep -A40 "cuda_gpu_kern_sum" | head -45
    rm -f "$out"/nsys32.*
  else
    echo "(no nsys)"
  fi
} > "$out/profile.log" 2>&1
cat "$out/profile.log"
