#!/usr/bin/env bash
# Where a segment preparation's time goes: wh_heap_bench_prof (WH_HEAP_PROFILE)
# with clock counters around the preparer's steps (begin, setup, install,
# summary span) and every leader look, for `one` and `onewarm` at 16 B and
# 256 B, three times.  Binary in $B (copied from a CUDA build).
#   B=build-carry/prof OUT=$OUT bench/results/heap-prep-h100/run.sh
set -u
B=${B:-build-carry/prof}
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
for i in 1 2 3; do
  mkdir -p "$OUT/r$i"
  timeout 100 "$B/wh_heap_bench_prof" --tests=one,onewarm --kinds=default,bump --out="$OUT/r$i" \
    --commit="${WH_COMMIT:-unknown}" > "$OUT/r$i.log" 2>&1
  echo "round $i rc=$?"
  grep -hE "^(prof|one|onewarm) " "$OUT/r$i.log"
done
