#!/usr/bin/env bash
# Stream arena benchmark: the marching-cubes comparison (worst-case buffers,
# a host sync per frame with cudaMallocAsync, the arena with no sync) at a few
# grid sizes, into $OUT: marching_cubes.csv, marching_cubes.md, one PNG per size.
# Environment: BUILD (build dir, default build), OUT (default out/arena),
# WH_COMMIT (else git), FRAMES, REPS, SIZES.
set -eu
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
out=${OUT:-out/arena}
mkdir -p "$out"
export WH_COMMIT=${WH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export WH_GPU_DRIVER=${WH_GPU_DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || echo unknown)}
bin=$build/bin/marching_cubes
[ -x "$bin" ] || { echo "no $bin (CUDA build needed)"; exit 1; }
rm -f "$out/marching_cubes.csv"
{ echo "# Marching cubes: worst case vs host sync + cudaMallocAsync vs stream arena"
  echo
  echo "Command: \`bench/arena/gpu-bench.sh\` (examples/marching_cubes), K=3 live meshes, arena region ="
  echo "1.15 x the high-water mark of a warm-up pass over the same frames. GPU time includes the"
  echo "host: wall clock from the first enqueue to the final stream sync."; } > "$out/marching_cubes.md"
for n in ${SIZES:-32 64 128 192}; do
  timeout 120 "$bin" --n="$n" --k=3 --frames="${FRAMES:-300}" --reps="${REPS:-5}" \
    --csv="$out/marching_cubes.csv" --md="$out/marching_cubes.md" --png="$out/marching_cubes_$n.png"
done
