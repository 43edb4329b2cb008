#!/usr/bin/env bash
# Second call: the final build of this session (the fast path; wh__slab_take
# a call of its own, for registers; the page bitmap's summary levels updated
# for a whole bump segment's run at once, wh__bitmap_propagate_span).  The
# goal workloads with CUDA's malloc, the event counters, the GPU tests of the
# bitmap, the heap and the k-d tree, compute-sanitizer on the heap's and the
# bitmap's small configurations, and the k-d tree table.
#   BUILD=build-final OUT=$OUT bench/results/heap-fastpath-h100/final.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
mkdir -p "$R/heap" "$R/heap-prof" "$R/old"
step heap 100 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
step bench-old 60 "$B/bin/wh_heap_bench_old" --tests=regs,one,fill90 --kinds=bump,default --out="$R/old" --commit=82807ae
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
step test_bitmap_gpu 120 "$B/bin/test_bitmap_gpu"
step test_heap_gpu 150 "$B/bin/test_heap_gpu"
step test_kd_gpu 150 "$B/bin/test_kd_gpu"
for tool in memcheck racecheck synccheck; do
  step "$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 1 "$B/bin/test_heap_gpu" --small
  step "bitmap-$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 1 "$B/bin/test_bitmap_gpu" --small
done
step kdtree 100 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=95 KD_BUDGET=85 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT
grep -hE "^(one|fill90|util) +(default|bump|slab)" "$R/heap.log" "$R/bench-old.log" | head -40
grep -h "prof " "$R/heap-prof.log"
grep -hE "ERROR SUMMARY|passed|FAILED" "$R"/*check.log "$R"/test_*.log | head -20
tail -8 "$R/kdtree.log"
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
