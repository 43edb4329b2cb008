#!/usr/bin/env bash
# Fourth heap call: the cold start at 256 B.  base (this tree) against fast
# (-DWH__RUN_CHUNK=16u: a segment's 16-word page run claimed in one round of
# and-nots instead of four; -DWH_SEG_BEGIN_CAS: the preparer's flag taken by
# one CAS, without the load before it), five rounds alternating; regs, one,
# onewarm; BUMP and DEFAULT.
#   B=build-carry/hx OUT=$OUT bench/results/heap-backoff-h100/run4.sh
set -u
B=${B:-build-carry/hx}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run4.tar.gz" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpu.txt" 2>&1
date -u +%FT%TZ >> "$R/gpu.txt"
for i in 1 2 3 4 5; do
  for v in base fast; do
    mkdir -p "$R/$v-$i"
    timeout 60 "$B/wh_heap_bench_$v" --tests=regs,one,onewarm --kinds=bump,default --out="$R/$v-$i" > "$R/$v-$i.log" 2>&1
    echo "== $v $i rc=$? $(grep -E '^one' "$R/$v-$i.log" | awk '$5==256 || $5==16 {printf "%s %s %s %s; ", $1, $2, $5, $12}')"
  done
done
grep -h "^regs" "$R"/base-1/heap_bench.csv "$R"/fast-1/heap_bench.csv
