#!/usr/bin/env bash
# The heap bench's tables for the builds named in VARIANTS (default: base2
# noretire want4): -DWH_SEG_RETIRE=0 (noretire: a free never takes an idle
# class's segments back), -DWH_SEG_MIN_WANT=4u (want4: requests of fewer
# than 4 slots take the bitmap path on the GPU), and the same tree's
# defaults (base2); the paper tests (ad, acd, prob, linux), one, fill90 and
# util, BUMP and DEFAULT, two rounds, alternating.  Binaries built by hand
# (nvcc -D... on heap_bench.cu) into $B.
#   B=build-carry/hv OUT=$OUT bench/results/heap-minwant-h100/run2.sh
set -u
B=${B:-build-carry/hv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2; do
  for v in ${VARIANTS:-base2 noretire want4}; do
    mkdir -p "$OUT/$v-$i"
    timeout 200 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default \
      --out="$OUT/$v-$i" > "$OUT/$v-$i.log" 2>&1
    echo "== $v $i rc=$?"
  done
done
