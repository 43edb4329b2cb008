#!/usr/bin/env bash
# The second GPU call of 2026-11-23 (fourth session): parallel_new packed (cap objects to a
# fresh block).  test_soa_gpu and the soa sanitizer list; sugarscape at 832^2 (64 MiB) before
# (wh_sugarscape_old, e467512) and after, at 0, 1, 10 and 100 iterations, to see where the
# GPU's block fragmentation comes from; then the whole space-efficiency search (issue 5).
#   BUILD=build-final OUT=$OUT bench/results/session-s4-h100/run2.sh
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
for v in old new; do
  bin=$B/bin/wh_sugarscape; [ $v = old ] && bin=$B/bin/wh_sugarscape_old
  for it in 0 1 10 100; do
    step frag-$v-$it 30 "$bin" --w=832 --h=832 --iters=$it --mode=warpheap --heap-mb=64
  done
done
step space 330 env BUILD="$B" OUT="$R/space" HEAP=64 STEPS=4 bench/apps/space.sh
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
