#!/usr/bin/env bash
# Fifth call, the committed defaults: the k-d tree (BUMP, DEFAULT; 20K-2M
# triangles, heaps 200x and 20x the root list, three reps), with its checks.
#   B=build-carry/hf OUT=$OUT bench/results/heap-next-h100/run5.sh
set -u
B=${B:-build-carry/hf}
OUT=${OUT:-out}
R=$(mktemp -d)
trap 'tar -C "$R" -czf "$OUT/run5.tar.gz" .' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat "$B/COMMIT"; date -u +%FT%TZ; } > "$R/gpu.txt" 2>&1
timeout 400 "$B/wh_kdtree_bench" --out="$R" --sizes=20000,200000,2000000 --kinds=BUMP,DEFAULT --budget=300 \
  --solo=3000 --reps=3 > "$R/kd.log" 2>&1
echo "== kd rc=$?"
cat "$R/kdtree.md" 2>/dev/null | head -60
