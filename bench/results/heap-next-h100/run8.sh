#!/usr/bin/env bash
# Eighth call: which change made one allocation of the 10M-triangle soup's
# DEFAULT build at 200x fail in call 7 (an 8 GB heap, 4 ways): the default
# build (dc15c4e) against nt (-DWH_SEG_MAX_TILED=0u: no segments for the
# 1-4 KiB classes) and s64 (-DWH_DEFAULT_SLAB_MAX=65536u: 33-64 KiB from
# the slab class), twice each, alternating; DEFAULT only, heap 200x.
#   B=build-carry/hg K=build-carry/hk OUT=$OUT bench/results/heap-next-h100/run8.sh
set -u
B=${B:-build-carry/hg}
K=${K:-build-carry/hk}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run8.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
cp "$B/wh_kdtree_bench" "$K/wh_kdtree_bench_d"
for i in 1 2; do
  for v in d nt s64; do
    mkdir -p "$R/$v-$i"
    timeout 120 "$K/wh_kdtree_bench_$v" --out="$R/$v-$i" --scenes=soup --sizes=10000000 --kinds=DEFAULT --phases=200 \
      --solo=3000 --reps=3 > "$R/$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -E '^soup' "$R/$v-$i.log" | cut -c1-200)"
  done
done
