#!/usr/bin/env bash
# Third call: the k-d tree with no bump segments at all (heap_layout.c built
# with -DWH_SEG_MIN_PAGES=0xFFFFFFFFu: every slab class on the bitmap path,
# as before b65a403) against the default layout (d64), BUMP and DEFAULT,
# heaps 200x, two rounds.
#   B=build-carry/kdv OUT=$OUT bench/results/kdtree-segcap-h100/run3.sh
set -u
B=${B:-build-carry/kdv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2; do
  for v in d64 noseg; do
    mkdir -p "$OUT/kd-$v-$i"
    timeout 100 "$B/wh_kdtree_bench_$v" --out="$OUT/kd-$v-$i" --sizes=20000,200000,2000000 --phases=200 \
      --kinds=BUMP,DEFAULT --budget=80 --solo=3000 --reps=3 > "$OUT/kd-$v-$i.log" 2>&1
    echo "== kd $v $i rc=$?"
    grep -E "^(soup|torus|clustered)" "$OUT/kd-$v-$i.log" | awk '{print $1,$2,$4,$5}' | paste - - - - - -
  done
done
