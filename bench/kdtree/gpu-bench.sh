#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# k-d tree build table (register-efficient paper, Tables 3-4) into $OUT:
# kdtree.csv, kdtree.md and the terminal log.  BUILD: the build directory.
#   KD_SIZES=20000,200000 KD_BUDGET=60 bench/kdtree/gpu-bench.sh [extra args]
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-out}
mkdir -p "$OUT"
export WH_GPU_DRIVER=${WH_GPU_DRIVER:-$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)}
export WH_COMMIT=$("$(dirname "$0")/../../scripts/commit.sh" "$BUILD")
timeout "${KD_TIMEOUT:-230}" "$BUILD/bin/wh_kdtree_bench" --out="$OUT" \
  --sizes="${KD_SIZES:-20000,200000,2000000}" --budget="${KD_BUDGET:-150}" --solo=3000 "$@" 2>&1 | tee "$OUT/kdtree.log"
exit "${PIPESTATUS[0]}"
