#!/usr/bin/env bash
# When the next segment is prepared (issue 7): base (-DWH_SEG_NEXT_SHIFT=0u:
# at install, the code before) against n3 (this tree's default: once an
# eighth of the current segment is handed out).  Five rounds alternating of
# regs, one and onewarm (BUMP, DEFAULT); the profiling builds' counters of
# one and onewarm; then the paper tests, fill90 and util once each.
#   B=build-carry/hx OUT=$OUT bench/results/heap-next-h100/run.sh
set -u
B=${B:-build-carry/hx}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run.tar.gz" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpu.txt" 2>&1
cat "$B/COMMIT" >> "$R/gpu.txt" 2>/dev/null
date -u +%FT%TZ >> "$R/gpu.txt"
for i in 1 2 3 4 5; do
  for v in base n3; do
    mkdir -p "$R/$v-$i"
    timeout 60 "$B/wh_heap_bench_$v" --tests=regs,one,onewarm --kinds=bump,default --out="$R/$v-$i" > "$R/$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -E '^one' "$R/$v-$i.log" | awk '$5==256 || $5==16 {printf "%s %s %s %s; ", $1, $2, $5, $12}')"
  done
done
for v in base n3; do
  mkdir -p "$R/prof-$v"
  timeout 60 "$B/wh_heap_bench_prof_$v" --tests=one,onewarm --kinds=default --out="$R/prof-$v" > "$R/prof-$v.log" 2>&1
  echo "== prof $v rc=$?"; grep "^prof" "$R/prof-$v.log" | grep -E "size (16|256):" | cut -c1-600
done
for v in base n3; do
  mkdir -p "$R/full-$v"
  timeout 120 "$B/wh_heap_bench_$v" --tests=paper,fill90,util --kinds=bump,default --out="$R/full-$v" > "$R/full-$v.log" 2>&1
  echo "== full $v rc=$?"
done
grep -h "^regs" "$R"/base-1/heap_bench.csv "$R"/n3-1/heap_bench.csv
