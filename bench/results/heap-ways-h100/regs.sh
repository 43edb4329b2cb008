#!/usr/bin/env bash
# Third call: with the hot word spread over 4 ways, is occupancy the limit?
# The bench kernels compiled for 2 (ptxas's own choice: ~100 registers), 3
# and 4 resident blocks of 256 (__launch_bounds__, -DWH_BENCH_MIN_BLOCKS=n:
# wh_heap_bench_mb3, _mb4, built by hand from bench/heap/heap_bench.cu),
# each on the goal workloads with 4 ways; and the GPU heap test.
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/regs.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for v in "" _mb3 _mb4 ""; do
  d=bench${v:-_mb2}; [ -d "$R/$d" ] && d=${d}-again
  mkdir -p "$R/$d"
  step "$d" 60 "$B/bin/wh_heap_bench$v" --tests=regs,one,fill90 --kinds=bump,default --ways=4 --out="$R/$d" --commit="$WH_COMMIT"
done
step test_heap_gpu 150 "$B/bin/test_heap_gpu"
for f in "$R"/bench*.log; do echo "-- $f"; grep -E "^(one|fill90) +default|regs|registers" "$f"; grep -A4 "^## Registers" "${f%.log}/heap_bench.md" | grep default; done
grep -E "way|passed|FAIL" "$R/test_heap_gpu.log" | tail -12
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
