#!/usr/bin/env bash
# Second call: the heap bench alone with segments capped at 1/64 (default),
# 1/128 and 1/256 of the heap (WH_SEG_HEAP_DIV), `one` and `onewarm` at 16 and
# 256 B and fill90, five rounds, alternating.
#   B=build-carry/kdv OUT=$OUT bench/results/kdtree-segcap-h100/run2.sh
set -u
B=${B:-build-carry/kdv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2 3 4 5; do
  for v in d64 d128 d256; do
    mkdir -p "$OUT/heap-$v-$i"
    timeout 60 "$B/wh_heap_bench_$v" --tests=one,onewarm,fill90 --kinds=bump,default --out="$OUT/heap-$v-$i" \
      > "$OUT/heap-$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -hE "^(one|onewarm|fill90) +(default|bump) " "$OUT/heap-$v-$i.log" | grep -v " 4096 " | \
      awk '{printf "%s/%s/%s=%s ", $1, $2, $5, $(NF-4)}')"
  done
done
