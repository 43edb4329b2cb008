#!/usr/bin/env bash
# Second call: group claims (g: this tree's default, WH_SEG_GROUP_CLAIM 1)
# against n3 (-DWH_SEG_GROUP_CLAIM=0: the leader claims every run; both with
# the next segment prepared after an eighth).  Five rounds alternating of
# regs, one and onewarm at 16, 32, 64, 128, 256 and 4096 B (BUMP, DEFAULT);
# the profiling builds' counters (where built); s16 (-DWH_SEG_MIN_SPP=16u:
# bump segments for classes up to 4 KiB, not 512 B) against g on the paper's
# tests, one at 512 B - 4 KiB, fill90 and util; test_heap_gpu of this tree
# as a first check.  One tarball.
#   B=build-carry/hn OUT=$OUT bench/results/heap-next-h100/run2.sh
set -u
B=${B:-build-carry/hn}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run2.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
SIZES=16,32,64,128,256,4096
for i in 1 2 3 4 5; do
  for v in n3 g; do
    mkdir -p "$R/$v-$i"
    timeout 60 "$B/wh_heap_bench_$v" --tests=regs,one,onewarm --kinds=bump,default --one-sizes=$SIZES \
      --out="$R/$v-$i" > "$R/$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -E '^one ' "$R/$v-$i.log" | awk '{printf "%s %s %s; ", $2, $5, $12}')"
  done
done
for v in n3 g; do
  [ -x "$B/wh_heap_bench_prof_$v" ] || continue
  mkdir -p "$R/prof-$v"
  timeout 60 "$B/wh_heap_bench_prof_$v" --tests=one,onewarm --kinds=default --one-sizes=16,256 --out="$R/prof-$v" \
    > "$R/prof-$v.log" 2>&1
  echo "== prof $v rc=$?"; grep "^prof" "$R/prof-$v.log" | grep -E "size (16|256):" | cut -c1-700
done
for v in g s16; do
  mkdir -p "$R/full-$v"
  timeout 150 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default --quick \
    --one-sizes=512,1024,2048,4096 --out="$R/full-$v" > "$R/full-$v.log" 2>&1
  echo "== full $v rc=$?"; grep -E "^(one|fill90|util)" "$R/full-$v.log" | grep default | awk '{print $1, $5, $12, $14}' | paste -sd' '
done
timeout 150 "$B/test_heap_gpu" > "$R/test_heap_gpu.log" 2>&1
echo "== test_heap_gpu rc=$?"; tail -1 "$R/test_heap_gpu.log"
grep -h "^regs" "$R"/n3-1/heap_bench.csv "$R"/g-1/heap_bench.csv
