#!/usr/bin/env bash
# Device heap: registers and occupancy (2026-11-23, third session).  The heap
# bench as built (rare paths flattened, the kind a constant in the bench
# kernels, the rare paths given the metadata's copy of the heap) and variants
# built apart with -DWH_BENCH_MIN_BLOCKS=n (kernels declare n blocks of 256
# per SM: registers capped, spills instead).
#   BUILD=build-final OUT=$OUT bench/results/heap-regs-h100/run.sh [variant ...]
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; mkdir -p "$OUT"
C=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; echo "commit $C"; } > "$OUT/info.txt" 2>&1
for v in "" "$@"; do
  bin=$B/bin/wh_heap_bench${v:+_$v}; d=$OUT/${v:-main}; mkdir -p "$d"
  echo "== ${v:-main}"
  timeout 60 "$bin" --tests=regs,one,fill90 --kinds=bump,default --out="$d" --commit="$C${v:++$v}" > "$d/heap.log" 2>&1
  echo "rc=$?"; grep -E "^(one|fill90|regs)" "$d/heap.log" | head -20
done
