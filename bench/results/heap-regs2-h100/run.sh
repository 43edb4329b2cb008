#!/usr/bin/env bash
# Device heap with the allocation kernel cut from 207 to ~126 registers (the
# next segment's preparation and the bitmap path are calls the leader makes
# after the fast path; the run's and-nots 4 words at a time).  One device
# call: `one`, `onewarm` and fill-90% with this build and the build of 39bb9de
# (before; alternating, same run), the full heap table with CUDA's malloc,
# Nsight Compute on the allocation kernel (registers, occupancy), the heap's
# GPU test and compute-sanitizer on its small configuration.
#   BUILD=build-final OUT=$OUT bench/results/heap-regs2-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for v in new old new-again old-again; do
  bin="$B/bin/wh_heap_bench"; case $v in old*) bin="$B/bin/wh_heap_bench_old";; esac
  mkdir -p "$R/$v"
  step "bench-$v" 80 "$bin" --tests=regs,one,onewarm,fill90 --kinds=bump,default --out="$R/$v" --commit="$WH_COMMIT"
done
mkdir -p "$R/heap" "$R/heap-prof" "$R/tmp"
step heap 120 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
S="--clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
step ncu-dflt-one16 120 ncu $S -k regex:dflt_many -s 1 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=default --out="$R/tmp"
rm -rf "$R/tmp"
heap_gpu_checks
grep -hE "^(one|onewarm|fill90) +(default|bump)" "$R"/bench-*.log | head -60
grep -hE "^(regs|one|fill90|util) +(default|bump|slab|cuda)" "$R/heap.log" | head -40
grep -h "prof " "$R/heap-prof.log"
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Warp Cycles Per Issued|Executed Instructions  " "$R/ncu-dflt-one16.log"
grep -hE "ERROR SUMMARY|passed|FAILED" "$R"/memcheck.log "$R"/racecheck.log "$R"/synccheck.log "$R"/test_*.log | head -20
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
