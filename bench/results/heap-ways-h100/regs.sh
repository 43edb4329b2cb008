#!/usr/bin/env bash
# Third call: with the hot word spread over 4 ways, is occupancy the limit?
# The bench kernels compiled for 2 (ptxas's own choice: ~100 registers), 3
# and 4 resident blocks of 256 (__launch_bounds__, -DWH_BENCH_MIN_BLOCKS=n:
# wh_heap_bench_mb3, _mb4, built by hand from bench/heap/heap_bench.cu),
# each on the goal workloads with 4 ways; and the GPU heap test.
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/regs.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  echo "== $name (limit $t s)"
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
for v in "" _mb3 _mb4 ""; do
  d=bench${v:-_mb2}; [ -d "$R/$d" ] && d=${d}-again
  mkdir -p "$R/$d"
  step "$d" 60 "$B/bin/wh_heap_bench$v" --tests=regs,one,fill90 --kinds=bump,default --ways=4 --out="$R/$d" --commit="$WH_COMMIT"
done
step test_heap_gpu 150 "$B/bin/test_heap_gpu"
for f in "$R"/bench*.log; do echo "-- $f"; grep -E "^(one|fill90) +default|regs|registers" "$f"; grep -A4 "^## Registers" "${f%.log}/heap_bench.md" | grep default; done
grep -E "way|passed|FAIL" "$R/test_heap_gpu.log" | tail -12
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
