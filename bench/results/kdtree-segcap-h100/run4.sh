#!/usr/bin/env bash
# Fourth call: why segments cost the k-d tree.  kd_build.cu compiled with
# -DWH_SEG_RETIRE=0 (a free never takes an idle class's segments back:
# noretire) and -DWH_SEG_MIN_WANT=4u (requests of fewer than 4 slots take
# the bitmap path on the GPU: want4), against the default (d64) and no
# segments at all (noseg); BUMP and DEFAULT, heaps 200x and 20x, two rounds.
#   B=build-carry/kdv OUT=$OUT bench/results/kdtree-segcap-h100/run4.sh
set -u
B=${B:-build-carry/kdv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2; do
  for v in d64 noseg noretire want4; do
    mkdir -p "$OUT/kd-$v-$i"
    timeout 100 "$B/wh_kdtree_bench_$v" --out="$OUT/kd-$v-$i" --sizes=20000,200000,2000000 --phases=200,20 \
      --kinds=BUMP,DEFAULT --budget=80 --solo=3000 --reps=3 > "$OUT/kd-$v-$i.log" 2>&1
    echo "== kd $v $i rc=$?"
    grep -E "^(soup|torus|clustered)" "$OUT/kd-$v-$i.log" | grep DEFAULT | awk '{print $1,$2,$3,$5}' | paste - - - - - -
  done
done
