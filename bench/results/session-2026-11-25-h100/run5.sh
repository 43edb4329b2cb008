#!/usr/bin/env bash
# Device call 5 (2026-11-25): marching cubes with the side-stream commit
# launched ahead of its frame (it waits for the reservation and commits while
# the frame's blocks emit): smoke run, grids 16-64^3, the profile with
# timestamps at 32^3, compute-sanitizer memcheck on a small run.
set -u
A=build-carry/a1/bin
O=${OUT:-out}/r5
mkdir -p "$O"
export WH_COMMIT=$(cat build-carry/a1/COMMIT)
export WH_GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "commit $WH_COMMIT"; } > "$O/gpu.txt"
step() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout "$t" "$@" > "$O/$n.log" 2>&1;
         echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a "$O/steps.txt"; }
step mc_smoke 120 "$A/marching_cubes" --n=32 --k=3 --frames=30 --reps=1
for n in 16 24 32 64; do
  step "mc_$n" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 --csv="$O/mc.csv" --md="$O/mc.md"
done
step mc_profile 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile.md"
step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -A6 "timestamps" "$O/profile.md"
