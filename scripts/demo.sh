#!/usr/bin/env bash
# Set up and run the main job: build warpheap and run its demo table -- the
# lock-free bitmap stress on the CPU backend, and on the GPU when one is found.
#   scripts/demo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if ! command -v cmake >/dev/null || ! command -v gcc >/dev/null; then
  echo "installing cmake and gcc (Debian packages) ..."
  ${SUDO:-} apt-get update -qq && ${SUDO:-} apt-get install -y -qq cmake gcc g++ make >/dev/null
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target wh_bitmap_bench >/dev/null
exec "$build/bin/wh_bitmap_bench" "$@"
