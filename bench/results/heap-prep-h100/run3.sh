#!/usr/bin/env bash
# Third call: the preparer's fences acq_rel instead of sequentially consistent
# (WH__RUN_FENCE after the run's and-nots, the one before the install):
# counters (prof builds) and times (plain builds) of base and acqrel,
# alternating, three rounds; the plain builds with fill90 too.
#   B=build-carry/hv OUT=$OUT bench/results/heap-prep-h100/run3.sh
set -u
B=${B:-build-carry/hv}
OUT=${OUT:-out}
mkdir -p "$OUT"
for i in 1 2 3; do
  for v in base acqrel; do
    mkdir -p "$OUT/prof-$v-$i" "$OUT/$v-$i"
    timeout 100 "$B/wh_heap_bench_prof_$v" --tests=one,onewarm --kinds=default --out="$OUT/prof-$v-$i" \
      --commit="${WH_COMMIT:-unknown}" > "$OUT/prof-$v-$i.log" 2>&1
    timeout 100 "$B/wh_heap_bench_$v" --tests=one,onewarm,fill90 --kinds=bump,default --out="$OUT/$v-$i" \
      --commit="${WH_COMMIT:-unknown}" > "$OUT/$v-$i.log" 2>&1
    echo "== $v round $i rc=$?"
    grep -hE "^prof +default" "$OUT/prof-$v-$i.log" | grep -v 4096 | \
      sed -E 's/seg_fallback.*take_calls [0-9]+ //; s/leader_cycles.*//'
    grep -hE "^(one|onewarm|fill90) +(default|bump) " "$OUT/$v-$i.log" | \
      sed -E 's/ +thread size +/ /; s/param.*allocs +[0-9]+ +//; s/ +failed 0//'
  done
done
