#!/usr/bin/env bash
# Device heap with ways (2026-11-24, second session): a slab class hands out
# its bump segments through up to 8 independent state words, one per group
# of SMs (heap_slab.h, wh__seg_way).  One device call: the heap's goal
# workloads with the heap's choice of ways and with one way (the ablation,
# same binary, same run), their event counters, the k-d tree table, every
# GPU test and the heap and k-d tree sanitizer lists.
#   BUILD=build-final OUT=$OUT bench/results/heap-ways-h100/run.sh
set -u
cd "$(dirname "$0")/../../.."
. scripts/device-steps.sh
mkdir -p "$R/heap" "$R/heap-ways1" "$R/heap-prof"
step heap 100 "$B/bin/wh_heap_bench" --tests=regs,one,fill90,util --kinds=bump,default,slab,cuda-malloc --out="$R/heap" --commit="$WH_COMMIT"
python3 bench/heap/report.py "$R/heap/heap_bench.csv" >> "$R/heap/heap_bench.md" 2>/dev/null
step heap-ways1 60 "$B/bin/wh_heap_bench" --tests=one,fill90,util --kinds=default --ways=1 --out="$R/heap-ways1" --commit="$WH_COMMIT"
step heap-prof 60 "$B/bin/wh_heap_bench_prof" --tests=one,fill90 --kinds=default --out="$R/heap-prof" --commit="$WH_COMMIT"
step kdtree 100 env BUILD="$B" OUT="$R/kdtree" KD_TIMEOUT=95 KD_BUDGET=85 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT
step gpu-check 200 env SANITIZE_LISTS="heap kdtree" OUT="$R/check" scripts/gpu-check.sh "$B"
grep -hE "^(one|fill90|util) +(default|bump)" "$R"/heap*.log 2>/dev/null | head -40
cat "$R/check/gpu-summary.txt" 2>/dev/null
tar -czf "$OUT/session.tgz" -C "$R" . && cp "$R/steps.txt" "$OUT/steps.txt"
