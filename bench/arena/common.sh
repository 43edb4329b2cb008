# SPDX-License-Identifier: MIT
# Sourced by the bench/arena scripts: to the repository root; build (BUILD,
# default build) and out (OUT, default out/arena, created); the build's lib
# on LD_LIBRARY_PATH; mc_bin and need_mc_bin for the benchmark binary (wh_arena_bench).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=${BUILD:-build}
out=${OUT:-out/arena}
mkdir -p "$out"
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mc_bin=$build/bin/wh_arena_bench
need_mc_bin() { [ -x "$mc_bin" ] || { echo "no $mc_bin (CUDA build needed)"; exit 1; }; }
