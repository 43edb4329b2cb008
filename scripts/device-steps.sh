# Sourced by the device-call scripts under bench/results/ (from the repository
# root): B (the build), OUT and R = $OUT/r, WH_COMMIT, info.txt (GPU, driver,
# date, commit), and step NAME LIMIT CMD...: runs CMD under a timeout into
# $R/NAME.log and appends its exit status and times to $R/steps.txt.
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  echo "== $name (limit $t s)"
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
