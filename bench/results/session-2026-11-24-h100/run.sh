#!/usr/bin/env bash
# The GPU calls of 2026-11-24, on a carried build of one commit (build-final/COMMIT).
#   part 1: every GPU test and the sanitizer lists of the object allocator and the k-d tree
#           (what bench/results/PENDING.md listed: test_soa_gpu and the soa list since da4499b,
#           test_kd_gpu and the builder's sanitizers since 8dabadf); the object allocator's
#           benchmarks (nbody at 3,000 iterations, wa-tor, game-of-life, parallel_do vs heap
#           size, Linux scalability) with their device-malloc variants; the SMMO apps table;
#   part 2: space efficiency (issue 5), both variants, bisected to 1/2^7;
#   part 3: game of life on CUDA's malloc for one generation against warpheap and the static
#           grid over the same generation (part 1's soa-malloc step ran out of time at 1a67eee).
#   BUILD=build-final OUT=$OUT bench/results/session-2026-11-24-h100/run.sh 1|2
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; PART=${1:-1}; R=$OUT/r$PART; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version 2>/dev/null | tail -1
  date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
if [ "$PART" = 1 ]; then
  step gpu-check 200 env SANITIZE_LISTS="soa kdtree" OUT="$R/check" scripts/gpu-check.sh "$B"
  step soa 130 env BUILD="$B" OUT="$R" bench/soa/gpu-bench.sh main
  step soa-malloc 160 env BUILD="$B" OUT="$R" MALLOC_SECS=8 bench/soa/gpu-bench.sh malloc
  step apps 90 env BUILD="$B" OUT="$R" SECS=3 bench/apps/gpu-bench.sh
  rm -f "$R"/soa/*.ppm "$R"/apps/*.ppm
elif [ "$PART" = 3 ]; then
  mkdir -p "$R/soa"
  step gol-malloc 150 "$B/bin/wh_gameoflife" --mode=malloc --iters=1 --csv="$R/soa/apps.csv"
  step gol-same 30 "$B/bin/wh_gameoflife" --mode=pair --iters=1 --check --csv="$R/soa/apps.csv"
else
  step space 540 env BUILD="$B" OUT="$R" HEAP=64 STEPS=7 START_SUGARSCAPE=640 START_TRAFFIC=20000 \
    START_BARNESHUT=250000 START_COLLISION=640000 START_STRUCTURE=384 bench/apps/space.sh
fi
tar -czf "$OUT/session-$PART.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps-$PART.txt"
for f in "$R"/soa/summary.md "$R"/apps/summary.md "$R"/apps/space.md; do [ -f "$f" ] && cp "$f" "$OUT/$(basename "$(dirname "$f")")-$(basename "$f")"; done
exit 0
