#!/usr/bin/env bash
# Second call of the register cut: the cold start's waiters (their looks at
# the way's state: a poll of the page pool every 8th look; wh_heap_bench_b6:
# sleeps up to 2 us instead of 0.5) against 39bb9de (_old), alternating in one
# run; the event counters and Nsight Compute of `onewarm` at 16 and 256 B
# (why 256 B takes longer warm); the k-d tree's GPU test and table.
#   BUILD=build-final OUT=$OUT bench/results/heap-cold2-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for v in new b6 old new-2 b6-2 old-2; do
  bin="$B/bin/wh_heap_bench"; case $v in old*) bin="$B/bin/wh_heap_bench_old";; b6*) bin="$B/bin/wh_heap_bench_b6";; esac
  mkdir -p "$R/$v"
  step "bench-$v" 60 "$bin" --tests=one,onewarm --kinds=bump,default,slab --out="$R/$v" --commit="$WH_COMMIT"
done
mkdir -p "$R/heap-prof" "$R/tmp"
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,onewarm --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
S="--clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis"
# onewarm: kernels warm, timed, free per round; -s 3 the second round's timed one at 16 B
step ncu-warm16 120 ncu $S -k regex:dflt_many -s 3 -c 1 "$B/bin/wh_heap_bench" --tests=onewarm --kinds=default --out="$R/tmp"
step ncu-warm256 120 ncu $S -k regex:dflt_many -s 13 -c 1 "$B/bin/wh_heap_bench" --tests=onewarm --kinds=default --out="$R/tmp"
# SLAB against DEFAULT at 256 B (the same slab path; SLAB ran 20-25% faster in every run)
step ncu-dflt-one256 120 ncu $S -k regex:dflt_many -s 6 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=default --out="$R/tmp"
step ncu-slab-one256 120 ncu $S -k regex:slab_many -s 6 -c 1 "$B/bin/wh_heap_bench" --tests=one --kinds=slab --out="$R/tmp"
rm -rf "$R/tmp"
step test_kd_gpu 150 "$B/bin/test_kd_gpu"
step kdtree 120 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=115 KD_BUDGET=100 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT
grep -hE "^(one|onewarm) +(default|bump|slab)" "$R"/bench-*.log | head -80
grep -h "prof " "$R/heap-prof.log"
for f in "$R"/ncu-*.log; do echo "-- $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  |Memory Throughput|L2 Hit|size" "$f" | head -20; done
grep -hE "passed|FAILED" "$R"/test_*.log | head
tail -12 "$R/kdtree.log"
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
