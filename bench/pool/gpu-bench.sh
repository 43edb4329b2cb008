#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host pool benchmark on the GPU (called by scripts/gpu-check.sh --bench with
# BUILD and OUT set): wh_pool_bench writes pool_bench.csv and pool_bench.md to
# $OUT; the block core's CPU trace comparison goes next to them.
set -euo pipefail
BUILD=${BUILD:-build}
OUT=${OUT:-out/pool}
mkdir -p "$OUT"
export WH_COMMIT=${WH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || cat "$BUILD/COMMIT" 2>/dev/null || echo unknown)}
timeout 300 "$BUILD/bin/wh_pool_bench" --out="$OUT" "$@"
timeout 60 "$BUILD/bin/wh_blocks_bench" --csv="$OUT/blocks_cpu.csv" --md="$OUT/blocks_cpu.md"
