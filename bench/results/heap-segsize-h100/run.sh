#!/usr/bin/env bash
# Device heap: segment size (2026-11-23).  The heap bench of a3413b5 with its
# ablation flag --seg-shift=N (segments of up to 2^N pages per class, at most
# 2^19 slots) against heap_layout.c's choice (1/128 of the heap, 1024 pages).
#   BUILD=build-exp OUT=$OUT bench/results/heap-segsize-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; mkdir -p "$OUT"
C=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
for s in -1 11 12; do
  d=$OUT/shift$s; mkdir -p "$d/prof"
  timeout 60 "$B/bin/wh_heap_bench" --tests=one,fill90,util --kinds=default --seg-shift=$s --out="$d" --commit="$C seg-shift=$s" > "$d/heap.log" 2>&1
  echo "seg-shift $s rc=$?"; grep -E "^(one|fill90|util) " "$d/heap.log"
  timeout 30 "$B/bin/wh_heap_bench_prof" --tests=one --kinds=default --seg-shift=$s --out="$d/prof" --commit="$C seg-shift=$s" 2>&1 | tee "$d/prof.log" | grep "^prof" | sed -n 2p
done
