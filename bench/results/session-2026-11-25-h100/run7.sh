#!/usr/bin/env bash
# Device call 7 (2026-11-25): the arena without 64-bit divisions where the
# values fit 32 bits -- test_arena_gpu and its memcheck on --small, marching
# cubes at 16-64^3, and the arena's steps (marching_cubes_prof) at 32^3.
set -u
A=build-carry/a1/bin
O=${OUT:-out}/r7
mkdir -p "$O"
export WH_COMMIT=$(cat build-carry/a1/COMMIT)
export WH_GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "commit $WH_COMMIT"; } > "$O/gpu.txt"
step() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout "$t" "$@" > "$O/$n.log" 2>&1;
         echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a "$O/steps.txt"; }
step test_arena_gpu 200 "$A/test_arena_gpu"
step memcheck_arena 300 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/test_arena_gpu" --small
for n in 16 24 32 64; do
  step "mc_$n" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 --csv="$O/mc.csv" --md="$O/mc.md"
done
step mc_prof 150 "$A/marching_cubes_prof" --profile=1 --n=32 --k=3 --frames=300 --md="$O/profile.md"
grep -E "^### |one kernel|\(b\) sync \+ mallocAsync \||Best" "$O/mc.md"
grep -E "stamps|arena steps" "$O/mc_prof.log"
