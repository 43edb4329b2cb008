#!/usr/bin/env bash
# The third GPU call of 2026-11-23 (fourth session): slow paths bounded per type
# (WH_SOA_OPEN_MAX).  test_soa_gpu (with the burst test) and the soa sanitizer list; sugarscape
# at 832^2 (64 MiB) at 0 and 100 iterations; wa-tor at the paper's size against the static
# baseline (time and fragmentation); then the space-efficiency search of warpheap (the malloc
# variants' code did not change since call 2).
#   BUILD=build-final OUT=$OUT bench/results/session-s4-h100/run3.sh
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
for it in 0 100; do step frag-$it 30 "$B/bin/wh_sugarscape" --w=832 --h=832 --iters=$it --mode=warpheap --heap-mb=64; done
step wator-pair 40 "$B/bin/wh_wator" --mode=pair --check
step wator-frag 30 "$B/bin/wh_wator" --mode=warpheap --frag="$R/wator_fragmentation.csv"
step space 200 env BUILD="$B" OUT="$R/space" HEAP=64 STEPS=4 VARIANTS=warpheap bench/apps/space.sh
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
