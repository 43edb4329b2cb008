# SPDX-License-Identifier: MIT
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
# The heap's GPU test, then compute-sanitizer's memcheck, racecheck and
# synccheck on its small configuration (steps test_heap_gpu, memcheck, ...).
heap_gpu_checks() {
  step test_heap_gpu 150 "$B/bin/test_heap_gpu"
  for tool in memcheck racecheck synccheck; do
    step "$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 1 "$B/bin/test_heap_gpu" --small
  done
}
# The heap bench of this build and of wh_heap_bench_old (a build of an
# earlier commit), alternately, ROUNDS times: steps bench-new, bench-old,
# bench-new-2, bench-old-2, ... into $R/<name>/; the rest: bench arguments.
heap_bench_ab() { local rounds=$1 i w v bin; shift
  for i in $(seq 1 "$rounds"); do
    for w in new old; do
      v=$w; [ "$i" -gt 1 ] && v=$w-$i
      bin="$B/bin/wh_heap_bench"; [ "$w" = old ] && bin="$B/bin/wh_heap_bench_old"
      mkdir -p "$R/$v"
      step "bench-$v" 80 "$bin" "$@" --out="$R/$v" --commit="$WH_COMMIT"
    done
  done
}
