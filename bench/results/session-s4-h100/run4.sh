#!/usr/bin/env bash
# The fourth GPU call of 2026-11-23 (fourth session): objects without tail padding
# (WH_SOA_SIZE), collision's Body reordered (44 bytes), the burst test's bound checked at full
# size only.  test_soa_gpu and the soa sanitizer list; nbody, wa-tor and game-of-life against
# their static baselines at the paper's sizes, wa-tor also with the slow paths unbounded
# (wh_wator_openmax0, as in the paper); the SMMO apps table; the space-efficiency search of
# both variants in one run (issue 5).
#   BUILD=build-final OUT=$OUT bench/results/session-s4-h100/run4.sh
set -u
cd "$(dirname "$0")/../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; R=$OUT/r; mkdir -p "$R"
export WH_COMMIT=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ; echo "commit $WH_COMMIT"; } > "$R/info.txt" 2>&1
t0=$(date +%s)
step() { local name=$1 t=$2; shift 2; local s=$(date +%s)
  timeout "$t" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s (at $(( $(date +%s) - t0 )) s)" | tee -a "$R/steps.txt"; }
step test-soa 60 "$B/bin/test_soa_gpu"
step sanitize-soa 90 env SANITIZE_LISTS="soa" OUT="$R/check" scripts/gpu-check.sh "$B" --no-tests
step nbody-pair 40 "$B/bin/wh_nbody" --iters=500 --mode=pair --check
step gol-pair 40 "$B/bin/wh_gameoflife" --mode=pair --check
for v in wator wator_openmax0; do
  step $v-pair 40 "$B/bin/wh_$v" --mode=pair --check
  step $v-frag 30 "$B/bin/wh_$v" --mode=warpheap --frag="$R/${v}_fragmentation.csv"
done
step apps 100 env BUILD="$B" OUT="$R" SECS=3 bench/apps/gpu-bench.sh
rm -f "$R"/apps/*.ppm
step space 300 env BUILD="$B" OUT="$R/space" HEAP=64 STEPS=4 bench/apps/space.sh
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
