#!/usr/bin/env bash
# Requests of fewer than 4 slots on the bitmap path (GPU): the heap bench's
# tables with -DWH_SEG_MIN_WANT=4u (want4) against the same tree's default
# (base2), alternating, two rounds: paper (ad, acd, prob, linux), one, fill90, util,
# BUMP and DEFAULT.  Binaries built by hand (nvcc -D...) into $B.
#   B=build-carry/hv OUT=$OUT bench/results/heap-minwant-h100/run.sh
set -u
B=${B:-build-carry/hv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2; do
  for v in base2 want4; do
    mkdir -p "$OUT/$v-$i"
    timeout 200 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default \
      --out="$OUT/$v-$i" > "$OUT/$v-$i.log" 2>&1
    echo "== $v $i rc=$?"
  done
done
