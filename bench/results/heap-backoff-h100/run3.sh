#!/usr/bin/env bash
# Third call, the defaults as committed (segment first, lazy reclaim, back-off):
# the heap's and the k-d tree's GPU tests; compute-sanitizer memcheck,
# racecheck and synccheck on the heap test's small grid and memcheck/racecheck
# on a 2000-triangle k-d build; the heap bench (regs, one, fill90, util and the
# paper's tests; BUMP, DEFAULT, SLAB and CUDA's malloc).  One tarball.
#   B=build-carry/hb OUT=$OUT bench/results/heap-backoff-h100/run3.sh
set -u
B=${B:-build-carry/hb}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run3.tar.gz" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpu.txt" 2>&1
cat "$B/COMMIT" >> "$R/gpu.txt" 2>/dev/null
date -u +%FT%TZ >> "$R/gpu.txt"
for t in test_heap_gpu test_kd_gpu; do
  timeout 120 "$B/$t" > "$R/$t.log" 2>&1
  echo "== $t rc=$?"; tail -1 "$R/$t.log"
done
CS="compute-sanitizer --error-exitcode 9"
for tool in memcheck racecheck synccheck; do
  timeout 150 $CS --tool $tool "$B/test_heap_gpu" --small > "$R/san-heap-$tool.log" 2>&1
  echo "== $tool test_heap_gpu --small rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|FAILED" "$R/san-heap-$tool.log" | tail -2
done
for tool in memcheck racecheck; do
  timeout 120 $CS --tool $tool "$B/wh_kdtree_bench_new" --scenes=soup --sizes=2000 --reps=1 --kinds=BUMP,DEFAULT \
    --out="$R" --tag=kd-san-$tool > "$R/san-kd-$tool.log" 2>&1
  echo "== $tool kd rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|rows" "$R/san-kd-$tool.log" | tail -2
done
mkdir -p "$R/heap"
timeout 230 "$B/wh_heap_bench_new" --tests=regs,one,fill90,util,paper --kinds=bump,default,slab,cuda-malloc \
  --out="$R/heap" --commit="$(head -1 "$B/COMMIT")" > "$R/heap/heap_bench.log" 2>&1
echo "== heap bench rc=$?"
grep -E "^(one|fill90|util|regs)" "$R/heap/heap_bench.log" | cut -c1-120
