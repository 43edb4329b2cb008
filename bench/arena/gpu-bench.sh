#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stream arena benchmark: the marching-cubes comparison (worst-case buffers,
# a host sync per frame with cudaMallocAsync, the arena with no sync) at a few
# grid sizes, into $OUT: marching_cubes.csv, marching_cubes.md, marching_cubes.png
# (the 128^3 frame).
# Environment: BUILD (build dir, default build), OUT (default out/arena),
# WH_COMMIT (else scripts/commit.sh), FRAMES, REPS, SIZES.
set -eu
. "$(dirname "$0")/common.sh"
export WH_COMMIT=$(scripts/commit.sh "$build")
export WH_GPU_DRIVER=${WH_GPU_DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || echo unknown)}
need_mc_bin
bin=$mc_bin
rm -f "$out/marching_cubes.csv"
{ echo "# Marching cubes: worst case vs host sync + cudaMallocAsync vs stream arena"
  echo
  echo "Command: \`bench/arena/gpu-bench.sh\` (bench/arena/mc_bench.cu), K=3 live meshes, two kernels per"
  echo "frame in every variant (count with the scan and the tail in its last block; generate). Each"
  echo "arena's region = the smallest headroom (from 1.02, steps of 0.02) over the high-water mark of"
  echo "a warm-up pass with which a pass over the same frames drops nothing. Time: wall clock from"
  echo "the first enqueue to the final stream sync, median of the runs. 'graph of G frames': G"
  echo "frames captured as one CUDA graph and replayed; (b) can capture only its counting kernel"
  echo "(the host sync splits every frame). '(c) arena in kernel' and 'in one kernel': the mesh reserved"
  echo "in count's last block from the plan the previous commit made, the block core committed after the"
  echo "address is out (generate's first block; in one kernel, the last block after the grid barrier):"
  echo "wh_arena_ring_reserve_* and wh_arena_ring_commit in include/warpheap/arena.h."; } > "$out/marching_cubes.md"
rc=0
for n in ${SIZES:-32 64 96 128 160 192}; do
  timeout 120 "$bin" --n="$n" --k=3 --frames="${FRAMES:-300}" --reps="${REPS:-5}" \
    --csv="$out/marching_cubes.csv" --md="$out/marching_cubes.md" \
    --png="$([ "$n" = 128 ] && echo "$out/marching_cubes.png")" || { echo "wh_arena_bench --n=$n failed"; rc=1; }
done
exit $rc
