#!/usr/bin/env bash
# Device call 3 (2026-11-25), binaries built here and carried (build-carry/a1
# at the commit in build-carry/a1/COMMIT; build-carry/vmm2 as in run2.sh).
# Issue 3: marching cubes with the one-kernel (c) whose RING commit runs on a
#   side stream -- a short smoke run first, then the grids 16-64^3, the
#   profile at 32^3, and compute-sanitizer memcheck on a small run.
# Issue 6: the pool's new default (p112h6) -- the whole pool bench with every
#   baseline in the same binary and run, the plug-in test, and a second pass of
#   base / p112h6 at max 1 GiB (the run-to-run spread).
set -u
A=build-carry/a1/bin
V=build-carry/vmm2
O=${OUT:-out}/r3
mkdir -p "$O/mc" "$O/pool"
export WH_COMMIT=$(cat build-carry/a1/COMMIT)
export WH_GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "commit $WH_COMMIT"; } > "$O/gpu.txt"
step() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout "$t" "$@" > "$O/$n.log" 2>&1;
         echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a "$O/steps.txt"; }
# -- issue 3
step mc_smoke 120 "$A/marching_cubes" --n=32 --k=3 --frames=30 --reps=1
for n in 16 24 32 64; do
  step "mc_$n" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 --csv="$O/mc/mc.csv" --md="$O/mc/mc.md"
done
step mc_profile 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --md="$O/mc/profile.md"
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
# -- issue 6
step pool_default 240 "$A/wh_pool_bench" --out="$O/pool"
step plugins 120 python3 plugins/test_plugins.py --lib build-carry/a1/lib/libwarpheap_plugin.so --json "$O/pool/plugins.json"
for v in base p112h6; do
  mkdir -p "$O/pool/$v"
  extra=--no-baselines
  [ "$v" = base ] && extra=
  step "pool_$v" 200 "$V/wh_pool_bench_$v" --out="$O/pool/$v" --random-max=1024 $extra
done
cat "$O/steps.txt"
