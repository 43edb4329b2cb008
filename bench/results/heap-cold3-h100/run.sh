#!/usr/bin/env bash
# Third call: the first segment's preparation with fewer round trips on the
# waiters' path (a guessed run before the page bitmap's descent; the summary
# levels learn of the run after the install).  `one`, `onewarm`, fill-90%
# against the build of cad6676 (_old), alternating, three times each; the
# full table with CUDA's malloc and the walks; event counters; the heap's GPU
# test and compute-sanitizer on its small configuration.
#   BUILD=build-final OUT=$OUT bench/results/heap-cold3-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
heap_bench_ab 3 --tests=one,onewarm,fill90 --kinds=bump,default,slab
mkdir -p "$R/heap" "$R/heap-prof"
step heap 120 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,onewarm,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
heap_gpu_checks
for v in new old new-2 old-2 new-3 old-3; do
  echo "== $v"; grep -hE "^(one|onewarm|fill90) +(default|bump|slab) " "$R/bench-$v.log" | awk '{printf "%s %s %s %s | ", $1,$2,$5,$(NF-5)}'; echo
done
grep -hE "^(regs|one|fill90|util|walk) +(default|bump|slab|cuda)" "$R/heap.log" | head -50
grep -h "prof " "$R/heap-prof.log"
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|passed|FAILED" "$R"/memcheck.log "$R"/racecheck.log "$R"/synccheck.log "$R"/test_*.log | head -20
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
