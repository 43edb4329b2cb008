#!/usr/bin/env bash
# Seventh call: the k-d tree at 10M triangles with the committed defaults
# (build of dc15c4e; BUMP, DEFAULT; heaps 200x and 20x; three reps), as
# heap-backoff-h100's call 5 measured at 306e680.
#   B=build-carry/hg OUT=$OUT bench/results/heap-next-h100/run7.sh
set -u
B=${B:-build-carry/hg}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run7.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
WH_GPU_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1) WH_COMMIT=dc15c4e \
  timeout 500 "$B/wh_kdtree_bench" --out="$R" --sizes=10000000 --kinds=BUMP,DEFAULT --budget=420 --solo=3000 \
  --reps=3 > "$R/kd.log" 2>&1
echo "== kd rc=$?"
grep -E "^\| (soup|torus|clustered)" "$R/kdtree.md" | cut -c1-160
tail -1 "$R/kd.log"
