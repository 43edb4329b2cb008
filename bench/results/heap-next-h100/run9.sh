#!/usr/bin/env bash
# Ninth call: how often the 10M-triangle soup's DEFAULT build at 200x (an
# 8 GB heap, 4 ways) fails an allocation, now that wh_kdtree_bench counts
# the timed builds' failures too (calls 7-8 saw only the warm-ups'): d (the
# build of this tree) against nt (-DWH_SEG_MAX_TILED=0u), four invocations
# each alternating, ten builds an invocation (--reps=9 --all-reps).
#   B=build-carry/hk OUT=$OUT bench/results/heap-next-h100/run9.sh
set -u
B=${B:-build-carry/hk}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run9.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
for i in 1 2 3 4; do
  for v in d nt; do
    mkdir -p "$R/$v-$i"
    timeout 100 "$B/wh_kdtree_bench_$v" --out="$R/$v-$i" --scenes=soup --sizes=10000000 --kinds=DEFAULT --phases=200 \
      --solo=3000 --reps=9 --all-reps > "$R/$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -E '^soup' "$R/$v-$i.log" | cut -c1-220)"
  done
done
