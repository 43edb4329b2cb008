#!/usr/bin/env bash
# Device call 2 (2026-11-25), binaries built here and carried:
#   build-carry/a1   (CUDA build at the commit in build-carry/a1/COMMIT)
#   build-carry/vmm2 (bench/pool/build-variants.sh < bench/pool/variants-pool-policy.txt)
# Issue 5: barnes-hut with the leaner nodes -- the GPU check (warpheap, malloc
#   and the CPU backend bit for bit), ms per iteration at the paper's size,
#   and the space search (bench/apps/space.sh, barnes-hut only, 1/128).
# Issue 6: random_allocations at max 1 GiB for the pool policy variants (base
#   with cudaMallocAsync in the same binary and run), then the new default's
#   GPU test (the batched moves on real driver calls) and memcheck on --small.
set -u
. "$(dirname "$0")/common.sh" r2
V=build-carry/vmm2
mkdir -p "$O/apps" "$O/pool"
# -- issue 5
step bh_check 120 "$A/wh_barneshut" --n=20000 --iters=10 --check --ppm="$O/apps/barneshut.ppm"
step bh_time 120 "$A/wh_barneshut" --max-seconds=6 --csv="$O/apps/barneshut.csv"
BUILD=build-carry/a1 OUT="$O" APPS=barneshut STEPS=7 HEAP=64 timeout 400 bench/apps/space.sh > "$O/space.log" 2>&1
echo "space rc=$?" | tee -a "$O/steps.txt"
# -- issue 6
for v in base p112h6 p96h6 p96h5; do
  mkdir -p "$O/pool/$v"
  extra=--no-baselines
  [ "$v" = base ] && extra=
  step "pool_$v" 300 "$V/wh_pool_bench_$v" --out="$O/pool/$v" --random-max=1024 $extra
done
step test_pool_gpu 120 "$A/test_pool_gpu"
step memcheck_pool 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_pool_gpu" --small
cat "$O/steps.txt"
