#!/usr/bin/env bash
# One device call: the pool's random_allocations at max 1 GiB for the VMM
# policy variants of variants.txt (built by bench/pool/build-variants.sh into
# build-carry/vmm), "old" with cudaMallocAsync and arenas in the same run, the
# rest warpheap only; then the driver calls' own costs (wh_vmm_cost).
set -uo pipefail
B=${B:-build-carry/vmm}
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
for v in $(grep -v '^#' bench/results/pool-footprint-h100/variants.txt | awk '{print $1}'); do
  mkdir -p "$OUT/$v"
  extra=--no-baselines
  [[ $v == old ]] && extra=
  echo "== $v"
  timeout 300 "$B/wh_pool_bench_$v" --out="$OUT/$v" --random-max=1024 $extra
done
timeout 120 "$B/wh_vmm_cost" --csv="$OUT/vmm_cost.csv" > "$OUT/vmm_cost.md"
