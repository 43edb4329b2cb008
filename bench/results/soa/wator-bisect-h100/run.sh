#!/usr/bin/env bash
# wa-tor at the paper's size took 1.04 ms an iteration at a32ecd3 and 1.15 at 1a67eee: which
# change?  wh_wator built at e1a0e7e (before parallel_new packed), a3f2af8 (packing), 4f565a4
# (slow-path bound), da4499b (no tail padding) and
# 266f9e4 (the code of 1a67eee), plus its wh_wator_openmax0, each run three times in turn (warpheap only).
#   OLD=dir-with-wh_wator_<commit> BUILD=build-final OUT=$OUT bench/results/soa/wator-bisect-h100/run.sh
set -u
cd "$(dirname "$0")/../../../.."
B=${BUILD:-build}; O=${OLD:-old}; OUT=${OUT:-out}; mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; cat "$B/COMMIT"; } > "$OUT/info.txt" 2>&1
for k in 1 2 3; do
  for v in "$O/wh_wator_e1a0e7e" "$O/wh_wator_a3f2af8" "$O/wh_wator_4f565a4" "$O/wh_wator_da4499b" "$O/wh_wator_head" "$O/wh_wator_openmax0"; do
    [ -x "$v" ] || continue
    printf '%s ' "$(basename "$v")" >> "$OUT/wator.txt"
    timeout 30 "$v" --mode=warpheap 2>&1 | grep -E "ms/iteration" >> "$OUT/wator.txt"
  done
done
cat "$OUT/wator.txt"
