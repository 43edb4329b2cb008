#!/usr/bin/env bash
# Fifth call: Nsight Compute on the allocation kernels of the goal workloads
# (clocks left alone): BUMP and DEFAULT (4 ways) at 16 B, one allocation per
# thread at 1M threads, and DEFAULT filling 90% at 16 B.  Each kernel on a
# fresh heap (the bench resets it before every round).
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/ncu.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; ncu --version | tail -1; } > "$R/info.txt" 2>&1
S="--clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
run() { local name=$1; shift; echo "== $name"; timeout 150 ncu $S "$@" > "$R/$name.txt" 2>&1; echo "$name rc=$?" | tee -a "$R/steps.txt"; }
mkdir -p "$R/tmp"
run bump-one16 -k regex:bump_many -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=bump --out="$R/tmp"
run dflt-one16 -k regex:dflt_many -s 1 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=default --ways=4 --out="$R/tmp"
run dflt-fill16 -k regex:dflt_many -s 1 -c 1 "$B/bin/wh_heap_bench" --tests=fill90 --kinds=default --ways=4 --out="$R/tmp"
rm -rf "$R/tmp"
for f in "$R"/*.txt; do echo "-- $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Stall|L2 Cache Throughput|Compute \(SM\) Throughput|Memory Throughput|Issued Warp|No Eligible" "$f" | head -24; done
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
