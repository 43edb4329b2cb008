#!/usr/bin/env bash
# Second call: the same counters for variants of the waiters' looks, built
# by hand from this tree (nvcc -D...): base (as run.sh), flag8
# (-DWH_SEG_FLAG_EVERY=8u: a waiter reads the preparation flag every 8th
# look), sleep7 (-DWH_SEG_POLL_SLEEP=7u: sleeps up to 4 us between looks);
# alternating, three rounds.
#   B=build-carry/hv OUT=$OUT bench/results/heap-prep-h100/run2.sh
set -u
B=${B:-build-carry/hv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2 3; do
  for v in base flag8 sleep7; do
    mkdir -p "$OUT/$v-$i"
    timeout 100 "$B/wh_heap_bench_prof_$v" --tests=one,onewarm --kinds=default,bump --out="$OUT/$v-$i" \
      --commit="${WH_COMMIT:-unknown}" > "$OUT/$v-$i.log" 2>&1
    echo "== $v round $i rc=$?"
    grep -hE "^(prof|one|onewarm) +(default|bump) " "$OUT/$v-$i.log" | grep -v "4096" | \
      sed -E 's/ +thread size +/ /; s/param.*allocs +[0-9]+ +//; s/seg_fallback.*take_calls [0-9]+ //'
  done
done
