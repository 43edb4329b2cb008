#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the library, its tests and the tour, and run the tests with ctest:
# the CUDA backend for this machine's GPU where one is found (the GPU tests
# run), else the CPU backend (GPU tests are not built).  CI builds every .cu
# file separately (.ci/run).
#   scripts/test.sh [BUILD_DIR] [extra CMake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then build=$1; shift; fi
jobs=$(nproc 2>/dev/null || echo 2)
export PATH=/usr/local/cuda/bin:$PATH
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  backend=(-DCMAKE_CUDA_ARCHITECTURES=native); echo "== GPU found: CUDA backend"
else
  backend=(-DWH_ENABLE_CUDA=OFF); echo "== no GPU found: CPU backend"
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${backend[@]}" "$@"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
