# Shared by this session's device scripts (sourced: . "$(dirname "$0")/common.sh" rN):
# the call's folder $O under $OUT, the carried build's binaries in $A (its
# commit in WH_COMMIT), gpu.txt, and step NAME SECONDS CMD... (the command's
# output in NAME.log, its status and seconds in steps.txt).
A=build-carry/a1/bin
O=${OUT:-out}/$1
mkdir -p "$O"
export WH_COMMIT=$(cat build-carry/a1/COMMIT)
export WH_GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; echo "commit $WH_COMMIT"; } > "$O/gpu.txt"
step() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout "$t" "$@" > "$O/$n.log" 2>&1;
         echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a "$O/steps.txt"; }
# Marching cubes at the small grids, 300 frames, median of 5, into $1/mc.csv and $1/mc.md.
mc_grids() {
  for n in 16 24 32 64; do
    step "mc_$n" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 --csv="$1/mc.csv" --md="$1/mc.md"
  done
}
# A smoke run, the grids, the profile at 32^3 and memcheck of a small run, into $1.
mc_all() {
  step mc_smoke 120 "$A/marching_cubes" --n=32 --k=3 --frames=30 --reps=1
  mc_grids "$1"
  step mc_profile 150 "$A/marching_cubes" --profile=1 --n=32 --k=3 --frames=300 --md="$1/profile.md"
  step mc_memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$A/marching_cubes" --n=16 --k=3 --frames=30 --reps=1
}
