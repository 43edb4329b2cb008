#!/bin/sh
# SPDX-License-Identifier: MIT
# Pack a CUDA build for the device machine, whose carry takes at most 64 MiB:
# the GPU tests, the benchmark and app binaries the session scripts run, lib/,
# every CTestTestfile.cmake and CMakeCache.txt (gpu-check.sh runs ctest on it),
# and COMMIT; stripped, into BUNDLE (default build-carry/bundle.tar.xz) as
# build-final/.  On the device: tar -xJf build-carry/bundle.tar.xz, then BUILD=build-final.
#   scripts/bundle-build.sh [BUILD_DIR] [BUNDLE]
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${1:-build}" && pwd)
bundle=${2:-build-carry/bundle.tar.xz}
tmp=$(mktemp -d)
mkdir -p "$tmp/build-final/bin"
(cd "$build" && find . -name CTestTestfile.cmake) | while read -r f; do
  mkdir -p "$tmp/build-final/$(dirname "$f")" && cp "$build/$f" "$tmp/build-final/$f"
done
cp "$build/CMakeCache.txt" "$tmp/build-final/"
cp -r "$build/lib" "$tmp/build-final/"
for b in test_platform_gpu test_bitmap_gpu test_arena_gpu test_heap_gpu test_kd_gpu test_pool_gpu test_soa_gpu \
         wh_kdtree_bench wh_nbody wh_wator wh_gameoflife wh_soa_bench wh_collision wh_sugarscape wh_traffic \
         wh_structure wh_barneshut wh_heap_bench wh_heap_bench_prof; do
  cp "$build/bin/$b" "$tmp/build-final/bin/"
done
# heap bench variants built by hand for an experiment (wh_heap_bench_<v>)
for b in "$build"/bin/wh_heap_bench_*; do
  [ -f "$b" ] && cp "$b" "$tmp/build-final/bin/"
done
strip "$tmp/build-final/bin/"*
git -C "$root" rev-parse HEAD > "$tmp/build-final/COMMIT"
mkdir -p "$(dirname "$bundle")"
tar -C "$tmp" -cJf "$bundle" build-final
rm -rf "$tmp"
ls -l "$bundle"
