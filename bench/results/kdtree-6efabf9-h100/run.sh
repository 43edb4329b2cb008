#!/usr/bin/env bash
# The k-d tree's GPU test and table (BUMP, DEFAULT) on the heap of 6efabf9
# (the register cut and the cold start's fewer round trips).
#   BUILD=build-final OUT=$OUT bench/results/kdtree-6efabf9-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
step test_kd_gpu 150 "$B/bin/test_kd_gpu"
step kdtree 130 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=125 KD_BUDGET=110 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT
grep -hE "passed|FAILED" "$R"/test_kd_gpu.log | head -3
grep -E "^(soup|torus|clustered)" "$R/kdtree.log" | awk '{print $1,$2,$3,$4,$5}' | paste - - -
tail -n 1 "$R/kdtree.log"
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
