#!/usr/bin/env bash
# k-d tree builder: registers against resident blocks (2026-11-23).  The
# builder compiled for 2 blocks per SM (KD_MIN_BLOCKS=2, the default: 232
# registers, no spill), for 4 (128 registers, 0.8 KB spilled) and with no
# minimum (a3413b5: ptxas chose 32 registers, 3.5 KB spilled), BUMP and
# DEFAULT; then the full table (with CUDA's malloc) of the default build.
#   BUILD=build-final OUT=$OUT bench/results/kdtree/minblocks-h100/run.sh
set -u
cd "$(dirname "$0")/../../../.."
B=${BUILD:-build}; OUT=${OUT:-out}; mkdir -p "$OUT"
C=${WH_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || echo unknown)}
for v in "" _mb4 _auto; do
  d=$OUT/v${v:-_mb2}; mkdir -p "$d"
  WH_COMMIT="$C${v:-_mb2}" timeout 60 "$B/bin/wh_kdtree_bench$v" --kinds=BUMP,DEFAULT --sizes=20000,200000,2000000 \
    --budget=50 --solo=3000 --out="$d" > "$d/kdtree.log" 2>&1
  echo "v${v:-_mb2} rc=$?"; grep -E "^\| (soup|torus|clustered)" "$d/kdtree.md" | head -8
done
mkdir -p "$OUT/full"
WH_COMMIT="$C" BUILD="$B" OUT="$OUT/full" KD_TIMEOUT=120 KD_BUDGET=110 bench/kdtree/gpu-bench.sh --kinds=BUMP,DEFAULT,cuda-malloc > /dev/null 2>&1
echo "full rc=$?"; grep "^|" "$OUT/full/kdtree.md"
