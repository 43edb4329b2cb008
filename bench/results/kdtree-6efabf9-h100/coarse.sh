#!/usr/bin/env bash
# Experiment: the k-d tree table with the heap's 52 fine size classes turned
# off (the library's heap_layout.c built with -DWH_SLAB_FINE_PAGES=0xFFFFFFFFu
# and linked into wh_kdtree_bench_coarse; the device code is the same).  Is
# the number of classes what made DEFAULT slower than at b22afea?
#   BUILD=build-final OUT=$OUT bench/results/kdtree-6efabf9-h100/coarse.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
mkdir -p build-coarse/bin && cp "$B/bin/wh_kdtree_bench_coarse" build-coarse/bin/wh_kdtree_bench
step kdtree-coarse 130 env BUILD=build-coarse OUT="$R/kdtree-coarse" KD_TIMEOUT=125 KD_BUDGET=110 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT
grep -E "^(soup|torus|clustered)" "$R/kdtree-coarse.log" | awk '{print $1,$2,$3,$4,$5}' | paste - - -
tail -n 1 "$R/kdtree-coarse.log"
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
