#!/usr/bin/env bash
# Second script: a free that never takes an idle class's segments back
# (-DWH_SEG_RETIRE=0: noretire) against base2 and want4, the paper tests,
# one, fill90 and util, two rounds, alternating.
#   B=build-carry/hv OUT=$OUT bench/results/heap-minwant-h100/run2.sh
set -u
B=${B:-build-carry/hv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2; do
  for v in base2 noretire want4; do
    mkdir -p "$OUT/$v-$i"
    timeout 200 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default \
      --out="$OUT/$v-$i" > "$OUT/$v-$i.log" 2>&1
    echo "== $v $i rc=$?"
  done
done
