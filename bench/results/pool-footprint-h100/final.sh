#!/usr/bin/env bash
# One device call at the commit that makes moves the default: the pool's GPU
# test (full, then compute-sanitizer memcheck on --small), the whole pool
# benchmark, and the PyTorch/CuPy plug-in test.  Binaries in $B (copied from
# a CUDA build: test_pool_gpu, wh_pool_bench, wh_blocks_bench,
# libwarpheap_plugin.so, COMMIT).
set -u
B=${B:-build-carry/pool}
OUT=${OUT:-out}
mkdir -p "$OUT"
export WH_COMMIT=$(cat "$B/COMMIT")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
step() { local n=$1 t=$2; shift 2; local s=$(date +%s); timeout "$t" "$@" > "$OUT/$n.log" 2>&1;
         echo "$n rc=$? $(( $(date +%s) - s )) s" | tee -a "$OUT/steps.txt"; }
step test_pool_gpu 120 "$B/test_pool_gpu"
step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 "$B/test_pool_gpu" --small
mkdir -p "$OUT/pool"
step pool 200 "$B/wh_pool_bench" --out="$OUT/pool"
step plugins 90 python3 plugins/test_plugins.py --lib "$B/libwarpheap_plugin.so" --json "$OUT/plugins.json"
