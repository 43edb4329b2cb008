#!/usr/bin/env bash
# Lazy reclaim and the preparation back-off (issues 7, 4), in one device call:
#   new: this tree's defaults (no take-back on an idle free, WH_SEG_RETIRE 0;
#        a failed preparation backs off, WH_SEG_BACKOFF_MAX 10);
#   old: -DWH_SEG_RETIRE=1 -DWH_SEG_BACKOFF_MAX=0u (the code before both);
#   prof: new with the heap's event counters (WH_HEAP_PROFILE), and profold.
# The GPU heap test, the k-d tree (BUMP and DEFAULT, two rounds, alternating)
# and the heap bench's paper tests, one, fill90 and util (two rounds).
#   B=build-carry/hb OUT=$OUT bench/results/heap-backoff-h100/run.sh
set -u
B=${B:-build-carry/hb}
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
cat "$B/COMMIT" >> "$OUT/gpu.txt" 2>/dev/null
date -u +%FT%TZ >> "$OUT/gpu.txt"
timeout 90 "$B/test_heap_gpu" > "$OUT/test_heap_gpu.log" 2>&1
echo "== test_heap_gpu rc=$?"; tail -2 "$OUT/test_heap_gpu.log"
for v in prof profold; do
  mkdir -p "$OUT/kd-$v"
  timeout 60 "$B/wh_kdtree_bench_$v" --out="$OUT/kd-$v" --sizes=200000,2000000 --phases=200,20 \
    --kinds=DEFAULT --budget=50 --solo=1 --reps=1 > "$OUT/kd-$v.log" 2>&1
  echo "== kd $v rc=$?"; grep -E "heap prof" "$OUT/kd-$v.log" | cut -c1-400
done
for i in 1 2; do
  for v in new old; do
    mkdir -p "$OUT/kd-$v-$i"
    timeout 80 "$B/wh_kdtree_bench_$v" --out="$OUT/kd-$v-$i" --sizes=20000,200000,2000000 --phases=200,20 \
      --kinds=BUMP,DEFAULT --budget=70 --solo=3000 --reps=3 > "$OUT/kd-$v-$i.log" 2>&1
    echo "== kd $v $i rc=$?"
    grep -E "^(soup|torus|clustered)" "$OUT/kd-$v-$i.log" | awk '{print $1,$2,$3,$4,$5}' | paste - - - - - - - - -
  done
done
for i in 1 2; do
  for v in new old; do
    mkdir -p "$OUT/hb-$v-$i"
    timeout 75 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default \
      --out="$OUT/hb-$v-$i" > "$OUT/hb-$v-$i.log" 2>&1
    echo "== heap $v $i rc=$?"
  done
done
