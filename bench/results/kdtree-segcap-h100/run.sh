#!/usr/bin/env bash
# Does the segment size cap explain DEFAULT's slowdown on the k-d tree since
# b22afea?  wh_kdtree_bench and wh_heap_bench relinked with heap_layout.c
# built with -DWH_SEG_HEAP_DIV=64 (the default: a segment at most 1/64 of the
# heap's pages), 256 and 1024 (same objects otherwise), BUMP and DEFAULT at
# heaps 200x the root list, then the heap bench's `one`, `onewarm`, fill90.
#   B=build-carry/kdv OUT=$OUT bench/results/kdtree-segcap-h100/run.sh
set -u
B=${B:-build-carry/kdv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for v in d64 d256 d1024; do
  mkdir -p "$OUT/kd-$v"
  timeout 100 "$B/wh_kdtree_bench_$v" --out="$OUT/kd-$v" --sizes=20000,200000,2000000 --phases=200 \
    --kinds=BUMP,DEFAULT --budget=80 --solo=3000 --reps=3 > "$OUT/kd-$v.log" 2>&1
  echo "== kd $v rc=$?"
  grep -E "^(soup|torus|clustered)" "$OUT/kd-$v.log" | awk '{print $1,$2,$3,$4,$5}' | paste - - -
done
for v in d64 d256 d1024; do
  mkdir -p "$OUT/heap-$v"
  timeout 100 "$B/wh_heap_bench_$v" --tests=one,onewarm,fill90 --kinds=bump,default --out="$OUT/heap-$v" \
    > "$OUT/heap-$v.log" 2>&1
  echo "== heap $v rc=$?"
  grep -hE "^(one|onewarm|fill90) +(default|bump) " "$OUT/heap-$v.log" | \
    sed -E 's/ +thread size +/ /; s/param.*allocs +[0-9]+ +//; s/ +failed 0//' | paste - - -
done
