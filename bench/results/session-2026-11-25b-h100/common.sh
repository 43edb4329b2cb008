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
# Marching cubes at grids N..., 300 frames, median of 5, into $1.csv and $1.md;
# extra arguments from MC_ARGS (e.g. --bz=16), log names suffixed by MC_TAG.
mc_grids() {
  local out=$1; shift
  for n in "$@"; do
    step "mc_$n${MC_TAG:-}" 150 "$A/marching_cubes" --n=$n --k=3 --frames=300 --reps=5 ${MC_ARGS:-} \
         --csv="$out.csv" --md="$out.md"
  done
}
