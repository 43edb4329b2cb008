#!/usr/bin/env bash
# Third call: after the revert of group claims, d (this tree's default)
# against t4 (-DWH_SEG_MAX_TILED=4096u: bump segments for the power-of-two
# classes 1, 2 and 4 KiB too, whose slots tile a page).  Five rounds
# alternating of regs, one and onewarm at 16 B - 4 KiB (BUMP, DEFAULT); then
# the paper's tests, fill90, util and one at 512 B - 4 KiB once each; the
# default build's test_heap_gpu and test_kd_gpu (build of 450300b).  One
# tarball.
#   B=build-carry/hn2 OUT=$OUT bench/results/heap-next-h100/run3.sh
set -u
B=${B:-build-carry/hn2}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run3.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
SIZES=16,32,64,128,256,1024,2048,4096
for i in 1 2 3 4 5; do
  for v in d t4; do
    mkdir -p "$R/$v-$i"
    timeout 60 "$B/wh_heap_bench_$v" --tests=regs,one,onewarm --kinds=bump,default --one-sizes=$SIZES \
      --out="$R/$v-$i" > "$R/$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -E '^one ' "$R/$v-$i.log" | awk '{printf "%s %s %s; ", $2, $5, $12}')"
  done
done
for v in d t4; do
  mkdir -p "$R/full-$v"
  timeout 150 "$B/wh_heap_bench_$v" --tests=paper,one,fill90,util --kinds=bump,default --quick \
    --one-sizes=512,1024,1536,2048,3072,4096 --out="$R/full-$v" > "$R/full-$v.log" 2>&1
  echo "== full $v rc=$?"; grep -E "^(one|fill90|util|ad|acd)" "$R/full-$v.log" | grep default | awk '{print $1, $3, $5, $12, $14}' | paste -sd' '
done
grep -h "^regs" "$R"/d-1/heap_bench.csv "$R"/t4-1/heap_bench.csv
for t in test_heap_gpu test_kd_gpu; do
  timeout 120 "$B/$t" > "$R/$t.log" 2>&1
  echo "== $t rc=$?"; tail -1 "$R/$t.log"
done
