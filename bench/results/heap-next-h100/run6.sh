#!/usr/bin/env bash
# Sixth call, the committed defaults after calls 4-5 (tiled classes' segments
# from 256 pages; DEFAULT's requests over 32 KiB to page runs): the heap's
# and the k-d tree's GPU tests; compute-sanitizer memcheck, racecheck and
# synccheck of test_heap_gpu --small, memcheck and racecheck of a
# 2000-triangle k-d build; the heap bench (regs, one, fill90, util, paper;
# BUMP, DEFAULT, SLAB, CUDA's malloc); three rounds of one at 16-256 B; the
# paper's tests of s64 (-DWH_DEFAULT_SLAB_MAX=65536u: 33-64 KiB from the
# slab class, as before) against the default; the k-d tree (BUMP, DEFAULT,
# 20K-2M triangles, heaps 200x and 20x).  One tarball.
#   B=build-carry/hg OUT=$OUT bench/results/heap-next-h100/run6.sh
set -u
B=${B:-build-carry/hg}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run6.tar.gz" .' EXIT
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
mkdir -p "$R/san-kd"
for tool in memcheck racecheck; do
  timeout 60 $CS --tool $tool "$B/wh_kdtree_bench" --scenes=soup --sizes=2000 --reps=1 --kinds=BUMP,DEFAULT \
    --out="$R/san-kd" > "$R/san-kd-$tool.log" 2>&1
  echo "== $tool kd 2000 rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$R/san-kd-$tool.log" | tail -1
done
mkdir -p "$R/heap"
timeout 200 "$B/wh_heap_bench" --tests=regs,one,fill90,util,paper --kinds=bump,default,slab,cuda-malloc \
  --out="$R/heap" --commit="$(head -1 "$B/COMMIT" | cut -d' ' -f1)" > "$R/heap/heap_bench.log" 2>&1
echo "== heap bench rc=$?"
grep -E "^(one|fill90|util)" "$R/heap/heap_bench.log" | grep -v slab | awk '{print $1, $2, $5, $12, $14}' | paste -sd' '
grep "^regs" "$R/heap/heap_bench.csv" | paste -sd' '
for i in 1 2 3; do
  mkdir -p "$R/one-$i"
  timeout 60 "$B/wh_heap_bench" --tests=one --kinds=bump,default --one-sizes=16,32,64,128,256 --out="$R/one-$i" \
    > "$R/one-$i.log" 2>&1
  echo "== one $i rc=$? $(grep -E '^one ' "$R/one-$i.log" | awk '{printf "%s %s %s; ", $2, $5, $12}')"
done
for v in s64; do
  mkdir -p "$R/paper-$v"
  timeout 90 "$B/wh_heap_bench_$v" --tests=paper --kinds=bump,default --quick --out="$R/paper-$v" > "$R/paper-$v.log" 2>&1
  echo "== paper $v rc=$?"; grep -E "^ad" "$R/paper-$v.log" | grep default | awk '{print $3, $5, $12}' | paste -sd' '
done
grep -E "^ad" "$R/heap/heap_bench.log" | grep default | awk '{print $3, $5, $12}' | paste -sd' '
timeout 150 "$B/wh_kdtree_bench" --out="$R" --sizes=20000,200000,2000000 --kinds=BUMP,DEFAULT --budget=120 \
  --solo=3000 --reps=3 > "$R/kd.log" 2>&1
echo "== kd rc=$?"
grep -E "^\| (soup|torus|clustered)" "$R/kdtree.md" | cut -c1-160
