#!/usr/bin/env bash
# Device heap, the leader's fast path (2026-11-24, third session): one load of
# the class bitmap's top word and of the way's state, one add, the segment
# form of the result (heap_slab.h: wh__slab_get).  One device call: the goal
# workloads with this build and with the build of 82807ae (before; same run,
# alternating), the event counters, the heap's GPU test and compute-sanitizer
# on its small configuration.
#   BUILD=build-final OUT=$OUT bench/results/heap-fastpath-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
for v in new old new-again old-again; do
  bin="$B/bin/wh_heap_bench"; case $v in old*) bin="$B/bin/wh_heap_bench_old";; esac
  mkdir -p "$R/$v"
  step "bench-$v" 80 "$bin" --tests=one,fill90 --kinds=bump,default --out="$R/$v" --commit="$WH_COMMIT"
done
mkdir -p "$R/heap"
step heap 100 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
mkdir -p "$R/heap-prof"
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
step test_heap_gpu 150 "$B/bin/test_heap_gpu"
for tool in memcheck racecheck synccheck; do
  step "$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 1 "$B/bin/test_heap_gpu" --small
done
grep -hE "^(one|fill90) +(default|bump)" "$R"/bench-*.log | head -40
grep -hE "^(one|fill90|util) +(default|bump|slab)" "$R/heap.log" | head -30
grep -h "prof " "$R/heap-prof.log"
grep -hE "ERROR SUMMARY|passed|FAILED" "$R"/memcheck.log "$R"/racecheck.log "$R"/synccheck.log "$R"/test_*.log | head -20
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
