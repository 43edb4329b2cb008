#!/usr/bin/env bash
# Fourth call, the committed defaults (next segment after an eighth, the 1,
# 2 and 4 KiB classes with segments, no group claims): the heap's and the
# k-d tree's GPU tests; compute-sanitizer memcheck, racecheck and synccheck
# of test_heap_gpu --small (with its 1 GiB DEFAULT heap) and memcheck and
# racecheck of a 2000-triangle k-d build; the heap bench (regs, one, fill90,
# util, paper; BUMP, DEFAULT, SLAB and CUDA's malloc).  One tarball.
#   B=build-carry/hf OUT=$OUT bench/results/heap-next-h100/run4.sh
set -u
B=${B:-build-carry/hf}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run4.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
for t in test_heap_gpu test_kd_gpu; do
  timeout 120 "$B/$t" > "$R/$t.log" 2>&1
  echo "== $t rc=$?"; tail -1 "$R/$t.log"
done
CS="compute-sanitizer --error-exitcode 9"
for tool in memcheck racecheck synccheck; do
  timeout 120 $CS --tool $tool "$B/test_heap_gpu" --small > "$R/san-heap-$tool.log" 2>&1
  echo "== $tool test_heap_gpu --small rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|FAILED" "$R/san-heap-$tool.log" | tail -2
done
for tool in memcheck racecheck; do
  timeout 60 $CS --tool $tool "$B/wh_kdtree_bench" --scenes=soup --sizes=2000 --reps=1 --kinds=BUMP,DEFAULT \
    --out="$R" > "$R/san-kd-$tool.log" 2>&1
  echo "== $tool kd 2000 rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$R/san-kd-$tool.log" | tail -1
done
mkdir -p "$R/heap"
timeout 200 "$B/wh_heap_bench" --tests=regs,one,fill90,util,paper --kinds=bump,default,slab,cuda-malloc \
  --out="$R/heap" --commit="$(head -1 "$B/COMMIT")" > "$R/heap/heap_bench.log" 2>&1
echo "== heap bench rc=$?"
grep -E "^(one|fill90|util)" "$R/heap/heap_bench.log" | cut -c1-120
grep "^regs" "$R/heap/heap_bench.csv"
